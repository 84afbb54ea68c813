import { spawn } from 'node:child_process';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { XlnxConfigError, type XlnxConfigErrorCode } from './pac-errors.ts';
import { parseXlnxConfigQuery, type PacQueryResult } from './xlnx-config-output.ts';
import type { ToolChildren } from '../board/tool-children.ts';

export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** Activation generates a boot binary (bootgen) and writes the boot partition: allow minutes. */
export const DEFAULT_ACTIVATE_TIMEOUT_MS = 300_000;
export const DEFAULT_REBOOT_TIMEOUT_MS = 60_000;

/** How long a killed command gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** Output kept per command; a runaway command keeps its last bytes. */
const MAX_OUTPUT_CHARS = 1_000_000;

export interface CommandOptions {
  /** The command's environment; the agent's own when left out. */
  env?: NodeJS.ProcessEnv;
  /** Killed (SIGTERM, then SIGKILL) after this long. */
  timeoutMs?: number;
  /** The time limit's clock (default: the system clock). */
  clock?: Clock;
  /** The agent's running tools: the command is ended with them when the agent stops. */
  children?: ToolChildren;
}

export interface XlnxConfigOptions extends CommandOptions {
  /** The xlnx-config executable: a path or a name looked up in PATH (setting MM_XLNX_CONFIG). */
  xlnxConfig: string;
}

/** Runs `xlnx-config -q` and parses its table. */
export async function queryPacs(options: XlnxConfigOptions): Promise<PacQueryResult> {
  const run = await runXlnxConfig(['-q'], options, DEFAULT_QUERY_TIMEOUT_MS);
  return parseXlnxConfigQuery(run.stdout);
}

/**
 * Runs `xlnx-config -a <pac>` and answers what it printed. It does not reboot: the new
 * configuration takes effect at the next boot (see runReboot). A non-zero exit throws an
 * XlnxConfigError `xlnx_config_failed` carrying the command's output.
 */
export async function activatePac(pac: string, options: XlnxConfigOptions): Promise<{ output: string }> {
  // A name starting with '-' would be read by xlnx-config as one of its options.
  if (pac.trim() === '' || pac.startsWith('-') || /[\0\r\n]/.test(pac)) {
    throw new XlnxConfigError('invalid_pac_name', `not a PAC configuration name: ${JSON.stringify(pac)}`);
  }
  const run = await runXlnxConfig(['-a', pac], options, DEFAULT_ACTIVATE_TIMEOUT_MS);
  return { output: run.output };
}

/**
 * Runs the reboot command (setting MM_REBOOT, e.g. `systemctl reboot`). The command line is
 * split on whitespace into a program and its arguments and run without a shell: no quoting,
 * no variables, no pipes; a program path holding spaces cannot be expressed. It resolves
 * once the command has exited 0 (systemctl returns as soon as the reboot is queued).
 */
export async function runReboot(commandLine: string, options: CommandOptions = {}): Promise<{ output: string }> {
  const argv = splitCommandLine(commandLine);
  const [program, ...args] = argv;
  if (program === undefined) throw new XlnxConfigError('reboot_failed', 'the reboot command (MM_REBOOT) is empty');
  const run = await runCommand(program, args, {
    env: options.env,
    timeoutMs: options.timeoutMs ?? DEFAULT_REBOOT_TIMEOUT_MS,
    clock: options.clock ?? systemClock,
    children: options.children,
  });
  const failure = describeFailure(commandLine, run);
  if (failure) throw new XlnxConfigError('reboot_failed', failure.message, run.output);
  return { output: run.output };
}

/** `"systemctl  reboot"` → `['systemctl', 'reboot']`: a plain whitespace split, no quoting. */
export function splitCommandLine(commandLine: string): string[] {
  return commandLine.split(/\s+/).filter((word) => word !== '');
}

async function runXlnxConfig(
  args: string[],
  options: XlnxConfigOptions,
  defaultTimeoutMs: number,
): Promise<CommandRun> {
  const run = await runCommand(options.xlnxConfig, args, {
    env: options.env,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
    clock: options.clock ?? systemClock,
    children: options.children,
  });
  const failure = describeFailure(`${options.xlnxConfig} ${args.join(' ')}`, run);
  if (failure) throw new XlnxConfigError(failure.code, failure.message, run.output);
  return run;
}

interface CommandRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Set when the command could not be started (ENOENT, EACCES...). */
  spawnError: NodeJS.ErrnoException | null;
  stdout: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
}

function describeFailure(
  what: string,
  run: CommandRun,
): { code: XlnxConfigErrorCode; message: string } | null {
  if (run.spawnError) {
    return { code: 'xlnx_config_unavailable', message: `could not run ${what}: ${run.spawnError.message}` };
  }
  if (run.timedOut) return { code: 'xlnx_config_timeout', message: `${what} did not finish in time and was killed` };
  if (run.exitCode !== 0) {
    const how = run.signal ? `was killed by ${run.signal}` : `exited with status ${run.exitCode}`;
    const tail = run.output.trim().split('\n').slice(-5).join('\n');
    return { code: 'xlnx_config_failed', message: `${what} ${how}${tail ? `:\n${tail}` : ''}` };
  }
  return null;
}

/** Spawns `program args...` (never through a shell) and collects its output; never rejects. */
function runCommand(
  program: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv | undefined; timeoutMs: number; clock: Clock; children: ToolChildren | undefined },
): Promise<CommandRun> {
  const { clock } = options;
  return new Promise((resolve) => {
    const run: CommandRun = { exitCode: null, signal: null, timedOut: false, spawnError: null, stdout: '', output: '' };
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timeout);
      clock.clearTimeout(killTimer);
      resolve(run);
    };

    const child = spawn(program, args, {
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
    });
    options.children?.track(child, false);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      run.stdout = keepTail(run.stdout + text);
      run.output = keepTail(run.output + text);
    });
    child.stderr.on('data', (text: string) => {
      run.output = keepTail(run.output + text);
    });

    let killTimer: TimerHandle | undefined;
    const timeout = clock.setTimeout(() => {
      run.timedOut = true;
      child.kill('SIGTERM');
      killTimer = clock.setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    }, options.timeoutMs);

    child.on('error', (err: NodeJS.ErrnoException) => {
      // Emitted when the program cannot be started (then 'close' may not follow).
      if (child.pid === undefined) {
        run.spawnError = err;
        settle();
      }
    });
    child.on('close', (code, signal) => {
      run.exitCode = code;
      run.signal = signal;
      settle();
    });
  });
}

function keepTail(text: string): string {
  return text.length > MAX_OUTPUT_CHARS ? text.slice(-MAX_OUTPUT_CHARS) : text;
}
