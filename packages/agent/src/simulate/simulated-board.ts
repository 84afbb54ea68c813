import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { GPIO_MOTOR_SCRIPT, startMotorServer, type MotorServer } from '@mm/gpio-motor';
import type { Logger } from '../logger.ts';
import { simulatedRunnerCommand } from './simulated-programs.ts';
import { simulatedXlnxConfigPath } from './xlnx-config/index.ts';

/** Where the simulated board keeps its state, under MM_AGENT_DIR. */
export function simulatedBoardDir(agentDir: string): string {
  return path.join(agentDir, 'simulated-board');
}

/** The settings `--simulate` supplies where the environment sets none (see loadAgentConfig). */
export function simulatedDefaults(agentDir: string) {
  const dir = simulatedBoardDir(agentDir);
  return {
    runner: simulatedRunnerCommand(),
    xlnxConfig: simulatedXlnxConfigPath,
    pacDir: path.join(dir, 'pacs'),
    bootIdFile: path.join(dir, 'boot_id'),
  };
}

export interface SimulatedBoardOptions {
  agentDir: string;
  bootIdFile: string;
  pacDir: string;
  log: Logger;
  /** The GPIO motor script's port; default its catalogue entry's (GPIO_MOTOR_SCRIPT.port), 0 picks one. */
  motorPort?: number;
}

/**
 * The stand-ins of `mm-agent --simulate`, so the whole product works on a laptop:
 *
 * - the runner: `simulatedRunnerCommand()` (a real child process; see simulated-runner.ts);
 * - xlnx-config: `simulatedXlnxConfigPath`, with `commandEnv` telling it where the
 *   simulated PAC folder and its state are (pass it to every xlnx-config run);
 * - a boot id of its own, in a file under MM_AGENT_DIR that a simulated reboot rewrites;
 * - reboot: `rebootSoon(delayMs)`: after the delay the boot id changes and the `onReboot`
 *   hook runs (the agent sets it: it drops its link with 4004, ends what was running as a
 *   real reboot would, and comes back with the new boot id);
 * - GPIO: the motor script, in process, on simulated sysfs lines under MM_AGENT_DIR, at the
 *   port of its catalogue entry.
 */
export class SimulatedBoard {
  readonly dir: string;
  readonly gpioRoot: string;
  /** Environment for the simulated xlnx-config (and other board commands). */
  readonly commandEnv: NodeJS.ProcessEnv;
  /** Set by the agent: what a reboot does to it. */
  onReboot: (() => Promise<void>) | undefined;
  private motor: MotorServer | undefined;
  private rebootTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SimulatedBoardOptions) {
    this.dir = simulatedBoardDir(opts.agentDir);
    this.gpioRoot = path.join(this.dir, 'gpio');
    this.commandEnv = { ...process.env, MM_PAC_DIR: opts.pacDir, MM_SIM_STATE_DIR: this.dir };
  }

  get bootIdFile(): string {
    return this.opts.bootIdFile;
  }

  /** The GPIO motor script's URL once started. */
  get motorUrl(): string | undefined {
    return this.motor?.url;
  }

  /** Lays out the board's folders and boot id, and starts its devices. */
  async start(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    await fsp.mkdir(this.opts.pacDir, { recursive: true });
    const existing = await fsp.readFile(this.opts.bootIdFile, 'utf8').catch(() => '');
    if (!existing.trim()) await this.newBootId();
    const port = this.opts.motorPort ?? GPIO_MOTOR_SCRIPT.port;
    try {
      const log = this.opts.log.child({ component: 'gpio-motor' });
      this.motor = await startMotorServer({ port, gpioRoot: this.gpioRoot, simulated: true, log: (line) => log.info(line) });
      this.opts.log.info({ url: this.motor.url, gpio_root: this.gpioRoot }, 'simulated GPIO motor script running');
    } catch (err) {
      // The rest of the simulated board works without it (e.g. a second simulated agent on the same machine).
      this.opts.log.warn({ err, port }, 'could not start the simulated GPIO motor script');
    }
  }

  async bootId(): Promise<string> {
    return (await fsp.readFile(this.opts.bootIdFile, 'utf8')).trim();
  }

  /** Reboots the simulated board `delayMs` from now (the agent answers its RPC first). */
  rebootSoon(delayMs: number): void {
    clearTimeout(this.rebootTimer);
    this.rebootTimer = setTimeout(() => {
      this.rebootTimer = undefined;
      void this.reboot();
    }, delayMs);
  }

  private async reboot(): Promise<void> {
    this.opts.log.warn('simulated reboot');
    try {
      await this.newBootId();
      await this.onReboot?.();
    } catch (err) {
      this.opts.log.error({ err }, 'simulated reboot failed');
    }
  }

  private async newBootId(): Promise<void> {
    await fsp.mkdir(path.dirname(this.opts.bootIdFile), { recursive: true });
    await fsp.writeFile(this.opts.bootIdFile, `${randomUUID()}\n`);
  }

  async stop(): Promise<void> {
    clearTimeout(this.rebootTimer);
    await this.motor?.close();
    this.motor = undefined;
  }
}
