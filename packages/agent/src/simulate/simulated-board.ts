import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { GPIO_MOTOR_SCRIPT, startMotorServer, type MotorServer } from '@mm/gpio-motor';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { writeSimulatedHostTree, type SimulatedBoardModel } from './simulated-host-tree.ts';
import { simulatedRunnerCommand } from './simulated-programs.ts';
import { simulatedXlnxConfigPath } from './xlnx-config/index.ts';
import { simulatedDfxMgrClientPath, simulatedXdputilPath, simulatedXmutilPath } from './accel-tools/index.ts';
import { bootSimulatedFpga, simulatedFpgautilPath } from './fpgautil/index.ts';
import { writeSimulatedHwmon } from './simulated-hwmon.ts';

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
    fpgautil: [simulatedFpgautilPath],
    pacDir: path.join(dir, 'pacs'),
    bootIdFile: path.join(dir, 'boot_id'),
    // The simulated dfx-mgr-client, xmutil and xdputil (accel-tools/), their apps in the board's folder.
    accelerator: {
      dfxMgrClient: [simulatedDfxMgrClientPath],
      xmutil: [simulatedXmutilPath],
      xdputil: [simulatedXdputilPath],
      appsDir: path.join(dir, 'firmware', 'xilinx'),
    },
  };
}

export interface SimulatedBoardOptions {
  agentDir: string;
  bootIdFile: string;
  pacDir: string;
  log: Logger;
  /** The GPIO motor script's port; default its catalogue entry's (GPIO_MOTOR_SCRIPT.port), 0 picks one. */
  motorPort?: number;
  /** How a reboot goes (settings MM_SIM_REBOOT_*); default: down 3 s, back with a new boot id. */
  reboot?: Partial<SimulatedRebootOptions>;
  /** The board it reports being (MM_SIM_BOARD_MODEL); default `zcu104`. */
  model?: SimulatedBoardModel;
  /** When a requested reboot happens (default: the system clock). */
  clock?: Clock;
}

/**
 * How the simulated board reboots. The failure modes exist for tests of what the control
 * plane does when a reboot goes wrong.
 */
export interface SimulatedRebootOptions {
  /** How long the board stays down before the agent reconnects (MM_SIM_REBOOT_DELAY_MS). */
  downMs: number;
  /** The board never comes back: the agent stays disconnected until stopped (MM_SIM_REBOOT_NEVER_RETURN). */
  neverReturn: boolean;
  /** The board comes back with the boot id it had, as if it had not rebooted (MM_SIM_REBOOT_SAME_BOOT_ID). */
  sameBootId: boolean;
  /**
   * The new boot configuration "fails" and the board falls back to the PAC that was active
   * when it last booted (none on a fresh board), as a multi-boot fallback would
   * (MM_SIM_REBOOT_FALLBACK).
   */
  fallback: boolean;
}

export const DEFAULT_SIMULATED_REBOOT: SimulatedRebootOptions = { downMs: 3000, neverReturn: false, sameBootId: false, fallback: false };

/** Longest pause a timer takes (about 24.8 days): "never", for a board that does not come back. */
const NEVER_MS = 2 ** 31 - 1;
/** Where the simulated xlnx-config keeps the active configuration (its MM_SIM_STATE_DIR is the board's folder). */
const XLNX_CONFIG_STATE_FILE = 'xlnx-config-sim-state.json';

/**
 * The stand-ins of `mm-agent --simulate`, so the whole product works on a laptop:
 *
 * - the runner: `simulatedRunnerCommand()` (a real child process; see simulated-runner.ts);
 * - xlnx-config: `simulatedXlnxConfigPath`, with `commandEnv` telling it where the
 *   simulated PAC folder and its state are (pass it to every xlnx-config run);
 * - a boot id of its own, in a file under MM_AGENT_DIR that a simulated reboot rewrites;
 * - reboot: `rebootSoon(delayMs)`: after the delay the boot id changes and the `onReboot`
 *   hook runs (the agent sets it: it drops its link with 4004, ends what was running as a
 *   real reboot would, and comes back with the new boot id after `rebootDownMs`); the
 *   failure modes of `SimulatedRebootOptions` (never back, same boot id, PAC fallback)
 *   stand in for reboots that go wrong;
 * - GPIO: the motor script, in process, on simulated sysfs lines under MM_AGENT_DIR, at the
 *   port of its catalogue entry.
 */
export class SimulatedBoard {
  readonly dir: string;
  readonly gpioRoot: string;
  /** The fake /proc, /sys and /etc the agent reads the board's facts from. */
  readonly hostRoot: string;
  /** Its hwmon folders (an INA260, the AMS temperatures) that mm-runner reads and the DPU stand-in drives. */
  readonly hwmonRoot: string;
  /** Environment for the simulated xlnx-config (and other board commands). */
  readonly commandEnv: NodeJS.ProcessEnv;
  /** Set by the agent: what a reboot does to it. */
  onReboot: (() => Promise<void>) | undefined;
  readonly rebootOptions: SimulatedRebootOptions;
  private motor: MotorServer | undefined;
  private rebootTimer: TimerHandle | undefined;
  private readonly clock: Clock;
  /** The active PAC (per xlnx-config's state) when the board last booted: what a fallback reboot restores. */
  private bootedPac: string | null = null;

  constructor(private readonly opts: SimulatedBoardOptions) {
    this.dir = simulatedBoardDir(opts.agentDir);
    this.gpioRoot = path.join(this.dir, 'gpio');
    this.hostRoot = path.join(this.dir, 'host');
    this.hwmonRoot = path.join(this.hostRoot, 'sys/class/hwmon');
    this.commandEnv = { ...process.env, MM_PAC_DIR: opts.pacDir, MM_SIM_STATE_DIR: this.dir };
    this.rebootOptions = { ...DEFAULT_SIMULATED_REBOOT, ...opts.reboot };
    this.clock = opts.clock ?? systemClock;
  }

  /** How long the agent stays off the link after a reboot ("never": about 24.8 days, or until stopped). */
  get rebootDownMs(): number {
    return this.rebootOptions.neverReturn ? NEVER_MS : this.rebootOptions.downMs;
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
    await writeSimulatedHostTree(this.hostRoot, this.opts.model ?? 'zcu104');
    await writeSimulatedHwmon(this.hwmonRoot);
    await bootSimulatedFpga(this.dir);
    const existing = await fsp.readFile(this.opts.bootIdFile, 'utf8').catch(() => '');
    if (!existing.trim()) await this.newBootId();
    this.bootedPac = await this.readActivePacState();
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
    this.clock.clearTimeout(this.rebootTimer);
    this.rebootTimer = this.clock.setTimeout(() => {
      this.rebootTimer = undefined;
      void this.reboot();
    }, delayMs);
  }

  private async reboot(): Promise<void> {
    const how = this.rebootOptions;
    this.opts.log.warn({ down_ms: this.rebootDownMs, never_return: how.neverReturn, same_boot_id: how.sameBootId, fallback: how.fallback }, 'simulated reboot');
    try {
      if (!how.sameBootId) await this.newBootId();
      if (how.fallback) await this.writeActivePacState(this.bootedPac);
      this.bootedPac = await this.readActivePacState();
      await this.onReboot?.();
    } catch (err) {
      this.opts.log.error({ err }, 'simulated reboot failed');
    }
  }

  /** The active configuration in the simulated xlnx-config's state file (null: none, or no state yet). */
  private async readActivePacState(): Promise<string | null> {
    try {
      const state = JSON.parse(await fsp.readFile(path.join(this.dir, XLNX_CONFIG_STATE_FILE), 'utf8')) as { active?: unknown };
      return typeof state.active === 'string' ? state.active : null;
    } catch {
      return null;
    }
  }

  /** Sets the active configuration in that state file (other fields kept), as xlnx-config writes it. */
  private async writeActivePacState(active: string | null): Promise<void> {
    const file = path.join(this.dir, XLNX_CONFIG_STATE_FILE);
    const text = await fsp.readFile(file, 'utf8').catch(() => undefined);
    // No state yet: xlnx-config never ran, nothing was activated, nothing to fall back from.
    if (text === undefined) return;
    const state = JSON.parse(text) as Record<string, unknown>;
    const temporary = `${file}.${process.pid}.tmp`;
    await fsp.writeFile(temporary, `${JSON.stringify({ ...state, active }, null, 2)}\n`);
    await fsp.rename(temporary, file);
    this.opts.log.warn({ active }, 'simulated reboot fell back to the previous boot configuration');
  }

  private async newBootId(): Promise<void> {
    await fsp.mkdir(path.dirname(this.opts.bootIdFile), { recursive: true });
    await fsp.writeFile(this.opts.bootIdFile, `${randomUUID()}\n`);
  }

  async stop(): Promise<void> {
    this.clock.clearTimeout(this.rebootTimer);
    await this.motor?.close();
    this.motor = undefined;
  }
}
