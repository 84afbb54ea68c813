import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { systemClock, type Clock, type ErrorInfo, type InputFileKind } from '@mm/protocol';
import { LogBatcher, type LogStream } from './log-batcher.ts';
import { findOutputVideo } from './output-video.ts';
import { readRunnerMetrics, type RunnerMetrics } from './run-metrics.ts';
import { findResultsFile } from './results-file.ts';
import { signalGroup, terminateGroup } from './process-group.ts';

/** The variable that names each input kind's file in the runner's environment. */
export const INPUT_ENV: Record<InputFileKind, string> = {
  parameter: 'MM_PARAMETER',
  bitstream: 'MM_BITSTREAM',
  weights: 'MM_WEIGHTS',
  input_video: 'MM_INPUT_VIDEO',
};

/** Variables of the agent's own environment a runner must not see. */
const HIDDEN_FROM_RUNNER = ['MM_BOARD_TOKEN', 'MM_BOARD_TOKEN_FILE'];

/**
 * Another user to run the runner as (MM_RUNNER_USER). An agent running as root spawns it
 * with that uid/gid and hands it its work folder; any other agent goes through
 * `sudo -n -u <name> --` (sudoers must allow exactly that, and keep the MM_* variables),
 * and opens the work folder to its group.
 */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

export interface RunRequest<T> {
  argv: readonly string[];
  /** A fresh work folder is made under it for this run and removed afterwards. */
  workRoot: string;
  opId: number;
  invocation: { id: number; name: string };
  /** Absolute path of each input file the invocation has. */
  inputs: ReadonlyMap<string, string>;
  timeoutMs: number;
  /** Cancels the run: SIGTERM to the process group, SIGKILL after `graceMs`. */
  signal?: AbortSignal;
  graceMs?: number;
  /** Environment the runner inherits (the agent's, by default). */
  baseEnv?: NodeJS.ProcessEnv;
  /** The board's labels (MM_BOARD_LABELS, JSON; `{}` when the server sent none). */
  boardLabels?: Record<string, string>;
  /** Run as this user instead of the agent's. */
  runAs?: RunAs;
  /** Live output, batched a little. */
  onLog: (stream: LogStream, text: string) => void;
  /** The runner started as the leader of process group `pid` (journal it). */
  onSpawn?: (pid: number) => void | Promise<void>;
  /** Takes the output video away (into the cache) before the work folder is removed. */
  collectOutput: (file: string) => Promise<T>;
  /** Takes the runner's results.jsonl away likewise, when it left one (after the video). */
  collectResults?: (file: string) => Promise<T>;
  /** A line for the operation's log (a results file left on the board, and why). */
  onNote?: (line: string) => void;
  /** The run's timeout and log batching (default: the system clock). */
  clock?: Clock;
}

export type RunResult<T> = (
  | { status: 'succeeded'; exitCode: 0; output: T; outputFilename: string; durationMs: number; results?: T }
  | { status: 'failed' | 'cancelled'; error: ErrorInfo; exitCode: number | null; signal: NodeJS.Signals | null; durationMs: number }
) & {
  /** The runner's metrics.json, read once it exited (`none` if it never started). */
  runnerMetrics: RunnerMetrics;
};

/**
 * Runs an invocation as "Running an invocation on the board" says: a fresh work folder as
 * cwd, the `MM_*` variables, the runner as leader of its own process group (so cancel and
 * timeout reach everything it started), stdout/stderr live to `onLog`, exit status 0 as
 * success and the newest `.mp4`/`.avi` in `MM_OUTPUT_DIR` as the output video.
 */
export async function runInvocation<T>(req: RunRequest<T>): Promise<RunResult<T>> {
  const clock = req.clock ?? systemClock;
  const started = clock.now();
  const workDir = path.join(req.workRoot, `op-${req.opId}-${randomBytes(4).toString('hex')}`);
  const outputDir = path.join(workDir, 'output');
  await fsp.mkdir(outputDir, { recursive: true });
  try {
    if (req.runAs) await handOver([workDir, outputDir], req.runAs);
    const env: NodeJS.ProcessEnv = { ...(req.baseEnv ?? process.env) };
    for (const name of [...HIDDEN_FROM_RUNNER, ...Object.values(INPUT_ENV)]) delete env[name];
    env.MM_INVOCATION_ID = String(req.invocation.id);
    env.MM_INVOCATION_NAME = req.invocation.name;
    env.MM_OUTPUT_DIR = outputDir;
    env.MM_BOARD_LABELS = JSON.stringify(req.boardLabels ?? {});
    if (req.runAs) {
      env.USER = env.LOGNAME = req.runAs.name;
    }
    for (const [kind, variable] of Object.entries(INPUT_ENV)) {
      const file = req.inputs.get(kind);
      if (file) env[variable] = path.resolve(file);
    }

    const ended = await runProcess(req, workDir, env);
    const durationMs = clock.now() - started;
    if (ended.kind === 'spawn_failed') {
      return { status: 'failed', error: { code: 'runner_failed', message: `could not start the runner ${JSON.stringify(req.argv[0])}: ${ended.message}` }, exitCode: null, signal: null, durationMs, runnerMetrics: { kind: 'none' } };
    }
    const runnerMetrics = await readRunnerMetrics(outputDir);
    const { code, signal, reason } = ended;
    if (reason === 'cancelled') return { status: 'cancelled', error: { code: 'cancelled', message: 'cancelled on request' }, exitCode: code, signal, durationMs, runnerMetrics };
    if (reason === 'timeout') {
      return { status: 'failed', error: { code: 'timeout', message: `the runner did not finish within ${req.timeoutMs / 1000} s and was stopped` }, exitCode: code, signal, durationMs, runnerMetrics };
    }
    if (code !== 0) {
      const how = code !== null ? `exited with status ${code}` : `was killed by signal ${signal}`;
      return { status: 'failed', error: { code: 'runner_failed', message: `the runner ${how}` }, exitCode: code, signal, durationMs, runnerMetrics };
    }
    const video = await findOutputVideo(outputDir);
    if (!video) {
      return { status: 'failed', error: { code: 'no_output_video', message: 'the runner exited with status 0 but left no .mp4 or .avi file in MM_OUTPUT_DIR' }, exitCode: 0, signal: null, durationMs, runnerMetrics };
    }
    const output = await req.collectOutput(video);
    const results = req.collectResults ? await findResultsFile(outputDir) : { kind: 'none' as const };
    if (results.kind === 'ignored') req.onNote?.(results.problem);
    const collected = results.kind === 'found' ? await req.collectResults!(results.file) : undefined;
    return { status: 'succeeded', exitCode: 0, output, outputFilename: path.basename(video), durationMs, runnerMetrics, ...(collected !== undefined ? { results: collected } : {}) };
  } finally {
    await fsp.rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
}

type ProcessEnd =
  | { kind: 'spawn_failed'; message: string }
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null; reason: 'exit' | 'timeout' | 'cancelled' };

const isRoot = () => process.getuid?.() === 0;

/** The runner's work folders become the other user's (as root), or its group's (through sudo). */
async function handOver(dirs: readonly string[], user: RunAs): Promise<void> {
  for (const dir of dirs) {
    if (isRoot()) await fsp.chown(dir, user.uid, user.gid);
    else await fsp.chmod(dir, 0o770);
  }
}

/** How the runner is started: as is, with another uid/gid (root), or through sudo. */
export function runnerSpawn(argv: readonly string[], runAs: RunAs | undefined, root = isRoot()): { command: string; args: string[]; ids: { uid?: number; gid?: number } } {
  const [command = '', ...args] = argv;
  if (!runAs) return { command, args, ids: {} };
  if (root) return { command, args, ids: { uid: runAs.uid, gid: runAs.gid } };
  return { command: 'sudo', args: ['-n', '-u', runAs.name, '--', command, ...args], ids: {} };
}

async function runProcess(req: RunRequest<unknown>, cwd: string, env: NodeJS.ProcessEnv): Promise<ProcessEnd> {
  if (!req.argv[0]) return { kind: 'spawn_failed', message: 'empty command line' };
  const graceMs = req.graceMs ?? 5000;
  const { command, args, ids } = runnerSpawn(req.argv, req.runAs);
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  const spawned = await new Promise<{ ok: true } | { ok: false; message: string }>((resolve) => {
    child.once('spawn', () => resolve({ ok: true }));
    child.once('error', (err) => resolve({ ok: false, message: err.message }));
  });
  if (!spawned.ok || child.pid === undefined) return { kind: 'spawn_failed', message: spawned.ok ? 'no pid' : spawned.message };
  const pgid = child.pid;

  const clock = req.clock ?? systemClock;
  const logs = new LogBatcher(req.onLog, undefined, clock);
  const streamsClosed = Promise.all(
    (['stdout', 'stderr'] as const).map(
      (name) =>
        new Promise<void>((resolve) => {
          const stream = child[name];
          stream.on('data', (chunk: Buffer) => logs.push(name, chunk));
          stream.once('close', () => resolve());
          stream.once('error', () => resolve());
        }),
    ),
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  let reason: 'exit' | 'timeout' | 'cancelled' = 'exit';
  let stopping: Promise<void> | undefined;
  const stop = (why: 'timeout' | 'cancelled') => {
    if (stopping) return;
    reason = why;
    stopping = terminateGroup(pgid, graceMs, clock);
  };
  const timer = clock.setTimeout(() => stop('timeout'), req.timeoutMs);
  const onAbort = () => stop('cancelled');
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    await req.onSpawn?.(pgid);
  } catch {
    // Journaling the pid is best effort: the run itself goes on.
  }
  const { code, signal } = await exited;
  clock.clearTimeout(timer);
  req.signal?.removeEventListener('abort', onAbort);
  // Whatever the runner left behind in its group goes with it.
  signalGroup(pgid, 'SIGKILL');
  await stopping;
  // A process that left the group may still hold the pipes; do not wait for it forever.
  await Promise.race([streamsClosed, clock.sleep(2000)]);
  child.stdout.destroy();
  child.stderr.destroy();
  logs.end();
  return { kind: 'exited', code, signal, reason };
}
