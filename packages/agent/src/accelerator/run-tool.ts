import { spawn } from 'node:child_process';
import type { ToolChildren } from '../board/tool-children.ts';

/** Output kept per run; a runaway tool keeps its last characters. */
const MAX_OUTPUT_CHARS = 256_000;
/** Between SIGTERM and SIGKILL of a tool that did not end in time. */
const KILL_GRACE_MS = 2_000;

export interface ToolRun {
  /** The command line as run (for logs and messages). */
  command: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** It did not end within its bound and was killed (its whole process group). */
  timedOut: boolean;
  /** It could not be started at all (not installed: ENOENT; not executable: EACCES). */
  spawnError: NodeJS.ErrnoException | null;
  stdout: string;
  /** stdout and stderr interleaved as they came. */
  output: string;
}

export interface RunToolOptions {
  env?: NodeJS.ProcessEnv | undefined;
  timeoutMs: number;
  /** The agent's running tools: the tool is ended with them when the agent stops. */
  children?: ToolChildren | undefined;
}

/**
 * Runs a board tool: `argv` (a setting such as MM_XMUTIL, already split: a program and its
 * leading arguments, e.g. `sudo -n /usr/bin/xmutil`) followed by `args`, without a shell.
 * Never rejects: what happened is in the answer, and the caller decides from the OUTPUT what
 * it means (xmutil and dfx-mgr-client exit 0 whatever happened).
 *
 * The tool runs in a process group of its own: `xmutil` is a Python script that runs
 * `dfx-mgr-client`, so a hang is usually the grandchild's. When the bound passes, the whole
 * group gets SIGTERM, then SIGKILL.
 */
export function runTool(argv: readonly string[], args: readonly string[], opts: RunToolOptions): Promise<ToolRun> {
  const [program, ...lead] = argv;
  const command = [...argv, ...args].join(' ');
  const run: ToolRun = { command, exitCode: null, signal: null, timedOut: false, spawnError: null, stdout: '', output: '' };
  if (program === undefined) {
    run.spawnError = Object.assign(new Error('no command configured'), { code: 'ENOENT' });
    return Promise.resolve(run);
  }
  return new Promise((resolve) => {
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killTimer);
      resolve(run);
    };
    const child = spawn(program, [...lead, ...args], {
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
      detached: true,
    });
    opts.children?.track(child, true);
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Gone already (or never started).
      }
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      run.stdout = keepTail(run.stdout + text);
      run.output = keepTail(run.output + text);
    });
    child.stderr.on('data', (text: string) => {
      run.output = keepTail(run.output + text);
    });
    const timer = setTimeout(() => {
      run.timedOut = true;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    }, opts.timeoutMs);
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        run.spawnError = err;
        settle();
      }
    });
    child.on('close', (code, signal) => {
      run.exitCode = code;
      run.signal = signal;
      // A grandchild that outlived the tool (killed or not) must not linger.
      if (run.timedOut) killGroup('SIGKILL');
      settle();
    });
  });
}

/** Whether the tool is not there at all (as opposed to failing). */
export function isMissing(run: ToolRun): boolean {
  const code = run.spawnError?.code;
  return code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR';
}

function keepTail(text: string): string {
  return text.length > MAX_OUTPUT_CHARS ? text.slice(-MAX_OUTPUT_CHARS) : text;
}
