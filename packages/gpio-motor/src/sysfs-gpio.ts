import fs from 'node:fs/promises';
import path from 'node:path';
import type { Bit } from './wiring.ts';

export const DEFAULT_GPIO_ROOT = '/sys/class/gpio';

export interface SysfsGpioOptions {
  /** The sysfs GPIO folder (`/sys/class/gpio` on a board). */
  root: string;
  /**
   * The root is a plain folder standing in for sysfs (tests, the simulated board): the
   * driver then does the kernel's part itself — creating `gpioN/` with `direction` and
   * `value` files on export, and turning `low`/`high` into `out` plus a value.
   */
  simulated?: boolean;
}

/**
 * Drives GPIO lines through the Linux sysfs interface: write N to `export`, then
 * `gpioN/direction` and `gpioN/value`. Deprecated in the kernel in favour of the
 * character device, but it is what the board images ship with and needs no native code.
 */
export class SysfsGpio {
  readonly root: string;
  readonly simulated: boolean;

  constructor(opts: SysfsGpioOptions) {
    this.root = opts.root;
    this.simulated = opts.simulated ?? false;
  }

  linePath(line: number, attribute: 'direction' | 'value'): string {
    return path.join(this.root, `gpio${line}`, attribute);
  }

  /** Exports a line (if it is not already) and makes it an output at `initial`, glitch-free. */
  async setupOutput(line: number, initial: Bit): Promise<void> {
    await this.export(line);
    if (this.simulated) {
      await fs.writeFile(this.linePath(line, 'direction'), 'out\n');
      await fs.writeFile(this.linePath(line, 'value'), `${initial}\n`);
      return;
    }
    // "low"/"high" set the direction and the first value in one step, so a motor line
    // never pulses high on its way to being an output.
    await retryWhileNotReady(() => fs.writeFile(this.linePath(line, 'direction'), initial ? 'high' : 'low'));
  }

  async write(line: number, value: Bit): Promise<void> {
    await fs.writeFile(this.linePath(line, 'value'), this.simulated ? `${value}\n` : String(value));
  }

  async read(line: number): Promise<Bit> {
    const text = (await fs.readFile(this.linePath(line, 'value'), 'utf8')).trim();
    if (text !== '0' && text !== '1') throw new Error(`gpio${line}/value holds ${JSON.stringify(text)}, not 0 or 1`);
    return text === '1' ? 1 : 0;
  }

  async readDirection(line: number): Promise<string> {
    return (await fs.readFile(this.linePath(line, 'direction'), 'utf8')).trim();
  }

  async isExported(line: number): Promise<boolean> {
    return exists(path.join(this.root, `gpio${line}`));
  }

  private async export(line: number): Promise<void> {
    if (await this.isExported(line)) return;
    if (this.simulated) {
      const dir = path.join(this.root, `gpio${line}`);
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'direction'), 'in\n');
      await fs.writeFile(path.join(dir, 'value'), '0\n');
      await fs.appendFile(path.join(this.root, 'export'), `${line}\n`);
      return;
    }
    try {
      await fs.writeFile(path.join(this.root, 'export'), String(line));
    } catch (e) {
      // EBUSY: exported meanwhile (by us earlier, or another process) — fine.
      if ((e as NodeJS.ErrnoException).code !== 'EBUSY') throw e;
    }
  }
}

/**
 * After an export the kernel creates `gpioN/` at once, but udev may still be fixing its
 * permissions for a few hundred milliseconds: retry ENOENT/EACCES for up to ~2 s.
 */
async function retryWhileNotReady(op: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (attempt >= 40 || (code !== 'ENOENT' && code !== 'EACCES')) throw e;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** A folder laid out like `/sys/class/gpio`, for tests and the simulated board. */
export interface SimulatedSysfs {
  root: string;
  /** A line's value as its `value` file holds it. */
  value(line: number): Promise<Bit>;
  /** A line's `direction` file (`in` or `out`). */
  direction(line: number): Promise<string>;
  exported(line: number): Promise<boolean>;
}

/**
 * Lays out `root` like sysfs (`export` and `unexport` files; existing lines are kept) and
 * returns readers for its lines. Pass the same root to a `SysfsGpio` with `simulated: true`.
 */
export async function createSimulatedSysfs(root: string): Promise<SimulatedSysfs> {
  await fs.mkdir(root, { recursive: true });
  for (const name of ['export', 'unexport']) {
    const file = path.join(root, name);
    if (!(await exists(file))) await fs.writeFile(file, '');
  }
  const gpio = new SysfsGpio({ root, simulated: true });
  return {
    root,
    value: (line) => gpio.read(line),
    direction: (line) => gpio.readDirection(line),
    exported: (line) => gpio.isExported(line),
  };
}
