import fsp from 'node:fs/promises';

/**
 * What the agent reports about the machine it runs on. The boot id comes from a file
 * (the kernel's, or the simulated board's), read afresh each time so a reboot shows.
 */
export class Board {
  constructor(
    private readonly bootIdFile: string,
    /**
     * The active PAC for `hello.active_pac`; null until PAC support provides it (integration
     * point: set this to a function that runs `xlnx-config -q` and picks the active one).
     */
    public activePac: () => Promise<string | null> = async () => null,
  ) {}

  async bootId(): Promise<string> {
    try {
      return (await fsp.readFile(this.bootIdFile, 'utf8')).trim() || 'unknown';
    } catch {
      return 'unknown';
    }
  }
}
