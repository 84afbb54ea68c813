import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Command } from 'commander';
import type { Invocation, Operation } from '../api.ts';
import { runBoard } from '../board-choice.ts';
import { type CommandContext, say } from '../context.ts';
import { downloadFile } from '../download.ts';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.ts';
import { followOperation } from '../follow.ts';
import { bytes, duration } from '../format.ts';
import { checkLocalFiles, hashFiles, type LocalFile, sendFiles } from '../send-files.ts';
import { cacheDir } from '../settings.ts';
import { stateFile } from '../state-file.ts';
import { metricLines } from '../metrics-format.ts';
import { checkSelector, confirm, waitingLine } from '../fleet-view.ts';
import { collectLabel } from './board-fleet.ts';
import { withContext } from './shared.ts';
import { checkBaseline, collectDirection, collectThreshold, finishGate, type GateOptions, gateReport, gateWanted, intOption } from '../gate/gate.ts';
import { runOnAll } from './run-on-all.ts';

interface RunOptions extends GateOptions {
  name?: string;
  description?: string;
  parameter?: string;
  bitstream?: string;
  weights?: string;
  input?: string;
  board?: string;
  /** `--label k=v`: run on any matching board (the execute's `board_selector`). */
  label: Record<string, string>;
  output?: string;
  detach?: boolean;
  /** `--all`: on every board the labels match at once (a rollout, run-on-all.ts). */
  all?: boolean;
  /** Counted runs of the invocation (1–100) and uncounted warm-up runs before them (0–20). */
  repeat?: number;
  warmup?: number;
}

/** An interrupted `mm run` (same server, name and files) continues with the invocation it created. */
interface PendingRun {
  invocation_id: number;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('create an invocation, send the files the server lacks, run it on a board, follow it and save the output video')
    .option('--name <name>', 'invocation name (default: the weights or input file name)')
    .option('--description <text>', 'invocation description', '')
    .option('--parameter <file>', 'parameter file')
    .option('--bitstream <file>', 'bitstream file')
    .option('--weights <file>', 'model weights file')
    .option('--input <file>', 'input video file')
    .option('--board <board>', "the board's name or id (may be left out when exactly one is registered)")
    .option('--label <k=v>', 'run on any idle board with this label (repeatable: all must match; mm/board-model=kv260 ...); with --all: on every matching board', collectLabel, {})
    .option('-o, --output <file>', 'where to save the output video (default: <name>-<id>.mp4)')
    .option('--detach', 'start the run and return at once (follow it with `mm ops logs <id> -f`)')
    .option('--all', 'run on every matching board at once (a rollout); outputs saved as <name>-<id>-<board>.mp4')
    .option('--repeat <n>', 'run the invocation n times (1-100) on each board; the result has each run and a summary per metric', intOption(1, 100, '--repeat'))
    .option('--warmup <n>', 'uncounted runs before the counted ones (0-20)', intOption(0, 20, '--warmup'))
    .option('--baseline <name>', 'compare the finished runs with this baseline (checked before anything runs)')
    .option('--fail-on-regression', 'exit 5 when the comparison with --baseline finds a regression')
    .option('--threshold <metric=percent>', "a metric's regression threshold (repeatable; default 3 %)", collectThreshold, {})
    .option('--direction <metric=higher|lower>', 'which way is better for a metric whose name does not say (repeatable)', collectDirection, {})
    .option('--summary-md <file>', 'append a Markdown table of boards × metrics with verdicts to the file (e.g. $GITHUB_STEP_SUMMARY)')
    .option('--junit <file>', 'write the comparison as JUnit XML (one test suite per metric, a failing test case per regressed board)')
    .addHelpText(
      'after',
      '\nAn interrupted run (Ctrl-C during the upload) continues where it stopped when the same\ncommand is run again. Ctrl-C while following leaves the run going on the board.\n\n' +
        'CI gate: --baseline NAME compares the runs with a baseline; exit 5 with --fail-on-regression\nwhen it finds a regression (1 when a run failed, 3 no board, 2 an unknown baseline).',
    )
    .action(withContext((ctx, opts: RunOptions) => run(ctx, opts)));
}

async function run(ctx: CommandContext, opts: RunOptions): Promise<void> {
  const { api, progress, signal } = ctx;
  const files: LocalFile[] = [];
  if (opts.parameter) files.push({ kind: 'parameter', path: opts.parameter });
  if (opts.bitstream) files.push({ kind: 'bitstream', path: opts.bitstream });
  if (opts.weights) files.push({ kind: 'weights', path: opts.weights });
  if (opts.input) files.push({ kind: 'input_video', path: opts.input });
  await checkLocalFiles(files);
  const name = (opts.name ?? path.parse(opts.weights ?? opts.input ?? opts.parameter ?? opts.bitstream ?? 'run').name).trim();
  if (!name) throw new UsageError('The invocation name must not be empty (--name).');
  if (opts.all && opts.board !== undefined) throw new UsageError('--all runs on every matching board: leave out --board.');
  // Nothing is created before the request is known to be valid: the board first.
  const selector = !opts.all && Object.keys(opts.label).length ? opts.label : undefined;
  if (selector && opts.board !== undefined) throw new UsageError('Give either --board or --label, not both.', '--board names one board; --label runs on any board whose labels match.');
  // With --label the server picks the board (and answers 400 no_matching_board if none could ever serve it); --all is a rollout.
  const gated = gateWanted(opts, opts);
  const board = opts.all || selector ? undefined : await runBoard(api, opts.board);
  // A selector no board matches is refused here, before anything is created or sent (exit 3, with the nearest label).
  if (selector || (opts.all && Object.keys(opts.label).length)) await checkSelector(api, opts.label, signal);
  if (gated) await checkBaseline(api, opts.baseline!, signal);
  const repeat = { ...(opts.repeat !== undefined ? { repeat: opts.repeat } : {}), ...(opts.warmup !== undefined ? { warmup: opts.warmup } : {}) };
  const started = Date.now();

  const hashed = await hashFiles(files, progress, signal);
  const hashMs = Date.now() - started;

  // The same command after an interruption reuses the invocation it created (and its uploads).
  const pending = stateFile<PendingRun>(path.join(cacheDir(), 'runs.json'));
  const runKey = createHash('sha256')
    .update(JSON.stringify([api.server, name, opts.description ?? '', files.map((f) => [f.kind, hashed.get(f.kind)!.sha256])]))
    .digest('hex');
  let invocation: Pick<Invocation, 'id' | 'name'> | undefined;
  const previous = await pending.get(runKey);
  if (previous) {
    invocation = await api.call(api.client.GET('/api/invocations/{id}/', { params: { path: { id: previous.invocation_id } } })).catch(() => undefined);
    if (invocation) progress.note(`continuing invocation ${invocation.id} (${invocation.name}) from an interrupted run`);
  }
  if (!invocation) {
    const created = await api.call(api.client.POST('/api/invocations/create/', { body: { name, description: opts.description ?? '' }, signal }));
    await pending.set(runKey, { invocation_id: created.id });
    progress.note(`created invocation ${created.id} (${name})`);
    invocation = created;
  }
  const id = invocation.id;

  const uploadStart = Date.now();
  let sent;
  try {
    sent = await sendFiles(api, id, files, hashed, progress, signal);
  } catch (err) {
    progress.stop();
    if (err instanceof InterruptedError) {
      throw new InterruptedError(`Interrupted during the upload; invocation ${id} keeps what arrived.`, 'Run the same command again to continue where it stopped.', { invocation_id: id });
    }
    throw err;
  }
  const uploadMs = Date.now() - uploadStart;
  if (opts.all) {
    await runOnAll(ctx, { id, name, labels: opts.label, detach: Boolean(opts.detach), files: sent, repeat, gate: gated ? opts : undefined, clearPending: () => pending.set(runKey, undefined) });
    return;
  }

  const op = (await api.call(
    api.client.POST('/api/invocations/{id}/execute/', {
      params: { path: { id }, header: { prefer: 'respond-async' } },
      // `repeat`/`warmup` only when given (a control plane without them then still runs it).
      body: { ...(selector ? { board_selector: selector } : { board_id: board!.id }), ...repeat } as { board_id: string },
      signal,
    }),
  )) as Operation;
  // Started: a failure before this point leaves the invocation to the same command's next try.
  await pending.set(runKey, undefined);
  const follow = `mm ops logs ${op.id} -f`;
  if (opts.detach) {
    ctx.result({ invocation_id: id, operation: op, files: sent }, () => {
      say(`Invocation ${id}: operation ${op.id} started.`);
      say(`Follow it with: ${follow}`);
    });
    return;
  }
  progress.note(`running invocation ${id} as operation ${op.id}`);

  const phases = new Map<string, number>();
  const runStart = Date.now();
  let final: Operation;
  // Queued selector work: why it waits, said again whenever the reason changes, until a board takes it.
  const waiting = selector ? watchWaiting(ctx, op) : undefined;
  try {
    final = await followOperation(
      api,
      op.id,
      {
        log: (_stream, data) => {
          if (!ctx.settings.json) process.stdout.write(data);
        },
        status: (s) => {
          if (s.status && s.status !== 'queued') waiting?.stop();
        },
        progress: (p) => {
          waiting?.stop();
          if (!phases.has(p.phase)) {
            phases.set(p.phase, Date.now());
            progress.note(`phase: ${p.phase}${p.bytes_total ? ` (${bytes(p.bytes_total)})` : ''}`);
          }
        },
      },
      signal,
    );
  } catch (err) {
    waiting?.stop();
    if (err instanceof InterruptedError) await interruptedWhileFollowing(ctx, op.id, id, follow);
    throw err;
  }
  waiting?.stop();
  const runMs = Date.now() - runStart;
  const title = `${name} (invocation ${id})`;
  const gateRun = { board_id: final.board_id, board_name: board?.name ?? final.board_id ?? '-', operation_id: op.id, status: final.status, run_ms: runMs };
  if (final.status !== 'succeeded') {
    const why = final.error ? `${final.error.code}: ${final.error.message}` : final.status;
    const failure = new CliError(EXIT.failed, `The run ${final.status === 'cancelled' ? 'was cancelled' : 'failed'} (operation ${op.id}, ${why}).`, `The whole log: mm ops logs ${op.id}`, {
      invocation_id: id,
      operation: final,
    });
    if (!gated) throw failure;
    const report = await gateReport(ctx, opts as GateOptions & { baseline: string }, { title, runs: [{ ...gateRun, error: why }], target: { operation_ids: [op.id] } });
    await finishGate(ctx, report, opts, { invocation_id: id, operation: final }, () => {}, failure);
    return;
  }

  const after = await api.call(api.client.GET('/api/invocations/{id}/', { params: { path: { id } } }));
  const video = after.files.output_video;
  if (!video) throw new CliError(EXIT.failed, `Operation ${op.id} succeeded but invocation ${id} has no output video.`, `See the log: mm ops logs ${op.id}`);
  const ext = path.extname(video.filename) || '.mp4';
  const out = opts.output ?? `${name.replace(/[^\w.-]+/g, '-')}-${id}${ext}`;
  const downloadStart = Date.now();
  const bar = progress.bar('downloading output', video.size);
  const video$ = (headers: Record<string, string>) => api.client.GET('/api/invocations/{id}/video/', { params: { path: { id } }, parseAs: 'stream', headers, signal });
  await downloadFile({ api, request: video$, out, size: video.size, sha256: video.sha256, bar, signal, note: (l) => progress.note(l) });
  bar.done();
  const downloadMs = Date.now() - downloadStart;

  const phaseTimes: Record<string, number> = {};
  const ordered = [...phases.entries()].sort((a, b) => a[1] - b[1]);
  const runEnd = runStart + runMs;
  ordered.forEach(([phase, at], i) => (phaseTimes[phase] = (ordered[i + 1]?.[1] ?? runEnd) - at));
  const doc = {
    invocation_id: id,
    operation: final,
    files: sent,
    output: { path: path.resolve(out), size: video.size, sha256: video.sha256 },
    timings_ms: { hash: hashMs, upload: uploadMs, run: runMs, phases: phaseTimes, download: downloadMs, total: Date.now() - started },
  };
  const human = () => {
    say(`Saved ${out} (${bytes(video.size)}, sha256 verified). Invocation ${id}, operation ${op.id}, ${duration(Date.now() - started)} in all.`);
    const metrics = metricLines((final.result as { metrics?: unknown } | null)?.metrics);
    if (metrics.length) say(['Metrics:', ...metrics].join('\n'));
  };
  if (!gated) {
    ctx.result(doc, human);
    return;
  }
  const report = await gateReport(ctx, opts as GateOptions & { baseline: string }, { title, runs: [gateRun], target: { operation_ids: [op.id] } });
  await finishGate(ctx, report, opts, doc, human);
}

/** Polls a queued operation and notes why it waits whenever that changes (stop() ends it). */
function watchWaiting(ctx: CommandContext, op: Operation): { stop(): void } {
  let last = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async (current?: Operation) => {
    if (stopped) return;
    const now = current ?? (await ctx.api.call(ctx.api.client.GET('/api/operations/{id}/', { params: { path: { id: op.id } } })).catch(() => undefined));
    if (stopped || !now) return;
    if (now.status !== 'queued' || now.board_id !== null) return stop();
    const line = waitingLine(now);
    if (line && line !== last) {
      last = line;
      ctx.progress.note(line);
    }
  };
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  if (op.status !== 'queued' || op.board_id !== null) return { stop };
  void look();
  timer = setInterval(() => void look(), 5000);
  timer.unref();
  return { stop };
}

/**
 * Ctrl-C while following: a run still queued (no board took it) is said to be queued, not
 * running, and the user is offered to cancel it; otherwise it keeps running on the board.
 */
async function interruptedWhileFollowing(ctx: CommandContext, opId: number, invocationId: number, follow: string): Promise<never> {
  const details = { invocation_id: invocationId, operation_id: opId };
  const now = await ctx.api.call(ctx.api.client.GET('/api/operations/{id}/', { params: { path: { id: opId } } })).catch(() => undefined);
  if (now?.status === 'queued') {
    const why = waitingLine(now);
    process.stderr.write(`Operation ${opId} is still queued: no board has taken it yet.${why ? `\n${why}` : ''}\n`);
    if (!ctx.settings.json && (await confirm(`Cancel operation ${opId}? [y/N] `))) {
      await ctx.api.call(ctx.api.client.POST('/api/operations/{id}/cancel/', { params: { path: { id: opId } } }));
      throw new InterruptedError(`Cancelled operation ${opId} before it started.`, undefined, { ...details, cancelled: true });
    }
    throw new InterruptedError(`Detached from operation ${opId}; it is still queued and starts when a board takes it.`, `Cancel it with: mm ops cancel ${opId} · follow it with: ${follow}`, details);
  }
  throw new InterruptedError(`Detached from operation ${opId}; it keeps running on the board.`, `Follow it again with: ${follow}`, details);
}
