import fsp from 'node:fs/promises';

/**
 * What the agent reports about the machine it runs on. The boot id comes from a file
 * (the kernel's, or the simulated board's), read afresh each time so a reboot shows.
 */
export class Board {
  constructor(
    private readonly bootIdFile: string,
    /** The active PAC for `hello.active_pac` (from `xlnx-config -q`). */
    readonly activePac: () => Promise<string | null> = async () => null,
  ) {}

  async bootId(): Promise<string> {
    try {
      return (await fsp.readFile(this.bootIdFile, 'utf8')).trim() || 'unknown';
    } catch {
      return 'unknown';
    }
  }
}
