import type { AgentConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import { runReboot } from '../pac/xlnx-config.ts';
import { hwmonSensors, type SensorSource } from '../telemetry/telemetry-sampler.ts';
import type { AcceleratorStateSource } from '../runner/accelerator-swap.ts';

/**
 * The machine the agent drives: how it runs an invocation, manages PACs and reboots.
 * main.ts chooses one (the real board, or `--simulate`'s stand-ins in src/simulate) and
 * the rest of the agent sees only this interface.
 */
export interface BoardDriver {
  /** `hello.platform`: the OS, and whether the board is simulated. */
  readonly platform: string;
  /** Where the boot id is read (afresh each time, so a reboot shows). */
  readonly bootIdFile: string;
  /** The runner's argv (MM_RUNNER). */
  readonly runner: readonly string[];
  /** The xlnx-config executable and the PAC folder it reads. */
  readonly xlnxConfig: string;
  readonly pacDir: string;
  /** Environment for xlnx-config and other board commands (undefined: the agent's own). */
  readonly commandEnv: NodeJS.ProcessEnv | undefined;
  /** The folder /proc, /sys and /etc are read under for the board's facts (MM_HOST_ROOT; the simulated board's fake tree). */
  readonly factsRoot: string;
  /**
   * Reboots the board. A real reboot ends this process; a promise that rejects means the
   * command failed and the board keeps running.
   */
  reboot(): Promise<void>;
  /**
   * Set by a board on which the agent process lives through a reboot (the simulated one):
   * the agent hands over what a reboot does to it; `downMs` is how long the board stays down.
   */
  onAgentReboot?(hook: (downMs: number) => Promise<void>): void;
  /**
   * Loopback ports of device scripts this driver itself runs (the simulated board's GPIO
   * script); the relay reaches them besides MM_SCRIPT_PORTS.
   */
  scriptPorts?(): number[];
  /** Temperatures and power for telemetry (the real board: its hwmon tree). */
  readonly sensors: SensorSource;
  /** Variables the board adds to the runner's environment (the simulated board: where its sensors are). */
  readonly runnerEnv?: Record<string, string>;
  /** What the accelerator holds, to put back after an mm-runner run that loads a bitstream (runner/accelerator-swap.ts). */
  readonly acceleratorState?: AcceleratorStateSource;
  stop(): Promise<void>;
}

/** The real board: MM_RUNNER, xlnx-config on PATH (or MM_XLNX_CONFIG), MM_REBOOT. */
export function realBoardDriver(config: AgentConfig, log: Logger): BoardDriver {
  if (!config.runner) throw new Error('no runner command (MM_RUNNER)');
  return {
    platform: process.platform,
    bootIdFile: config.bootIdFile,
    runner: config.runner,
    xlnxConfig: config.xlnxConfig,
    pacDir: config.pacDir,
    commandEnv: undefined,
    sensors: hwmonSensors('/'),
    factsRoot: config.hostRoot,
    reboot: async () => {
      log.warn({ command: config.reboot }, 'rebooting the board');
      const { output } = await runReboot(config.reboot);
      if (output.trim()) log.info({ output: output.trim() }, 'reboot command output');
    },
    stop: async () => {},
  };
}
