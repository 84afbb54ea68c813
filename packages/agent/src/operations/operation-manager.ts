import type fsp from 'node:fs/promises';
import path from 'node:path';
import type { ChunkReader, Clock, ErrorInfo, MessageOf, OperationOutcome, ProducedFile } from '@mm/protocol';
import { LinkFeature, openFileReader, StreamError } from '@mm/protocol';
import type { Board } from '../board/board.ts';
import type { ContentCache } from '../cache/content-cache.ts';
import { syncInvocationFolder } from '../cache/invocation-folder.ts';
import { openOwnDescriptor } from '../cache/own-descriptor.ts';
import type { Journal } from '../journal/journal.ts';
import type { ControlPlaneLink, HelloMessage } from '../link/control-plane-link.ts';
import type { ServerLink } from '../link/server-link.ts';
import type { Logger } from '../logger.ts';
import { processStartTime } from '../runner/process-group.ts';
import { videoContentType } from '../runner/output-video.ts';
import { RESULTS_CONTENT_TYPE, RESULTS_FILE } from '../runner/results-file.ts';
import { runInvocation, type RunAs, type RunResult } from '../runner/run-invocation.ts';
import type { RunAccelerator } from '../runner/accelerator-swap.ts';
import { buildRunMetrics } from '../runner/run-metrics.ts';
import { OperationError, OperationStopped } from './operation-errors.ts';
import { OpReporter } from './op-reporter.ts';
import { transferFiles } from './transfer-files.ts';
import type { RunWatch } from '../telemetry/telemetry-sampler.ts';

type OpStart = MessageOf<'op.start'>;

export interface OperationManagerOptions {
  cache: ContentCache;
  journal: Journal;
  link: ServerLink;
  board: Board;
  log: Logger;
  /** `$MM_AGENT_DIR/invocations`: where each invocation's files are linked. */
  invocationsDir: string;
  /** `$MM_AGENT_DIR/work`: parent of the runners' work folders. */
  workDir: string;
  runnerArgv: readonly string[];
  runTimeoutMs: number;
  /** Between SIGTERM and SIGKILL when a run is stopped. */
  cancelGraceMs?: number;
  /** The runner's inherited environment (the agent's by default). */
  runnerEnv?: NodeJS.ProcessEnv;
  /** Progress throttles, log batching and run timeouts (default: the system clock). */
  clock?: Clock;
  /** The user the runner runs as (MM_RUNNER_USER); the agent's own when unset. */
  runAs?: RunAs;
  /** Measures a run (peak temperature, mean power) for `result.metrics`; absent: nothing measured. */
  watchRun?: () => RunWatch;
  /** An operation ended (the board's facts may have changed). */
  onEnded?: () => void;
  /**
   * Runs before an execute moves any file (accelerator/run-preparation.ts: the app it needs,
   * the model's DPU fingerprint); answers what goes into its result, throws an
   * OperationError to fail it.
   */
  prepareRun?: (msg: OpStart, report: { note(line: string): void; progress(phase: string): void }) => Promise<Record<string, unknown>>;
  /** Loads an mm-runner run's bitstream and puts the accelerator back after (runner/accelerator-swap.ts). */
  accelerator?: RunAccelerator;
  /** The board's hottest sensor now (a run's `start_temperature_c`); absent or undefined: not known. */
  startTemperature?: () => Promise<number | undefined>;
  /** What runs the invocations (`mm-runner 0.1.0`, `simulated 0.1.0`): a run's `runner_version`; absent: not known (a custom MM_RUNNER). */
  runnerVersion?: string;
  /** Variables the board adds to the runner's environment (MM_PYTHON; the simulated board's sensors). */
  runnerExtraEnv?: Record<string, string>;
}

/** An output video offered before it is hashed (`op.output`): served from a descriptor of the agent's own. */
interface EarlyOutput {
  handle: fsp.FileHandle;
  size: number;
}

interface RunningOperation {
  opId: number;
  kind: OpStart['kind'];
  stop: AbortController;
  /** Why it is being stopped: a cancel is an outcome, a shutdown leaves the journal as is. */
  stopReason: 'cancel' | 'shutdown' | undefined;
  reporter: OpReporter;
  done: Promise<void>;
}

/**
 * Runs the operations the server starts (`transfer`, `execute`) and keeps their outcomes
 * until the server acknowledges them. An operation does not depend on the connection it
 * was started on: it goes on while the link is down, and reports on whatever connection
 * is up when it has something to say (outcomes reach the server through the journal and
 * `hello.finished` if the link is down when they happen).
 */
export class OperationManager {
  private readonly running = new Map<number, RunningOperation>();
  /** Outputs of unacknowledged outcomes, kept from eviction until the server has them. */
  private readonly outputPins = new Map<number, () => void>();
  /** Output videos announced by `op.output`, until the server's one pull of each ends. */
  private readonly earlyOutputs = new Map<number, EarlyOutput>();
  private shuttingDown = false;
  /**
   * Reporters of ended operations whose outcome the server has not acknowledged: after a
   * reconnect their log goes again (it may have died in flight) before the outcome.
   */
  private readonly awaitingAck = new Map<number, OpReporter>();

  constructor(private readonly opts: OperationManagerOptions) {
    for (const outcome of opts.journal.outcomes()) this.pinOutput(outcome);
  }

  /** Ids of operations in progress here (for `hello.running`). */
  runningIds(): number[] {
    return [...this.running.keys()];
  }

  /**
   * Ended operations whose outcome is not acknowledged and whose log this process still
   * holds. The hello lists them as running, not finished, so the server keeps taking their
   * log: `onLinkReady` sends the log again first and the outcome after it, as they went
   * live. (Reported as finished, the server would settle them from the hello and drop the
   * late log.)
   */
  endedAwaitingAck(): Set<number> {
    return new Set(this.awaitingAck.keys());
  }

  /** Resolves once every operation in progress has ended. */
  async idle(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  handle(message: MessageOf<'op.start'> | MessageOf<'op.cancel'> | MessageOf<'op.result.ack'>): Promise<void> {
    switch (message.type) {
      case 'op.start':
        return this.start(message);
      case 'op.cancel':
        return this.cancel(message.op_id);
      case 'op.result.ack':
        return this.acknowledge(message.op_id);
    }
  }

  /** A connection was welcomed: send what the operations have for it. */
  onLinkReady(connection: ControlPlaneLink, hello: HelloMessage): void {
    for (const op of this.running.values()) op.reporter.resume();
    for (const reporter of this.awaitingAck.values()) reporter.resume();
    // Outcomes not in the hello (they came after it was built, or their log went first, just above): now.
    const inHello = new Set(hello.finished.map((o) => o.op_id));
    for (const outcome of this.opts.journal.outcomes()) {
      if (!inHello.has(outcome.op_id)) connection.sendMessage({ type: 'op.result', outcome });
    }
  }

  /**
   * The server pulls a file this agent produced: from the cache by sha256 (`produced`), or
   * an output video `op.output` offered before it was hashed (`output`).
   */
  async serveProduced(pull: MessageOf<'stream.pull'>, connection: ControlPlaneLink): Promise<void> {
    const source = pull.source;
    if (source.kind === 'output') return this.serveEarlyOutput(pull, source.op_id, connection);
    if (source.kind !== 'produced') {
      connection.sendMessage({
        type: 'stream.abort',
        stream_id: pull.stream_id,
        error: { code: 'unsupported_source', message: `the agent serves only produced content, not ${source.kind}` },
      });
      return;
    }
    const cache = this.opts.cache;
    await connection.serve(pull, async () => {
      const size = await cache.sizeOf(source.sha256);
      if (size === undefined) throw new StreamError({ code: 'not_found', message: `no content ${source.sha256} on the board` });
      if (pull.offset > size) throw new StreamError({ code: 'invalid_offset', message: `offset ${pull.offset} is past the end (${size} bytes)` });
      await cache.touch(source.sha256);
      return { reader: await openFileReader(cache.pathOf(source.sha256), pull.offset), size };
    });
  }

  /**
   * One pull of an offered output: the bytes as they are now, at most the size announced.
   * Whatever happens to it, the offer ends with it: a pull after a dropped link goes by
   * sha256 from the cache, as without the offer.
   */
  private async serveEarlyOutput(pull: MessageOf<'stream.pull'>, opId: number, connection: ControlPlaneLink): Promise<void> {
    const early = this.earlyOutputs.get(opId);
    this.earlyOutputs.delete(opId);
    let served = false;
    await connection.serve(pull, async () => {
      if (!early) throw new StreamError({ code: 'not_found', message: `no output of operation ${opId} on offer` });
      if (pull.offset > early.size) throw new StreamError({ code: 'invalid_offset', message: `offset ${pull.offset} is past the end (${early.size} bytes)` });
      served = true;
      // The reader closes the handle when the stream ends.
      return { reader: boundedReader(early.handle, pull.offset, early.size), size: early.size };
    });
    if (early && !served) await early.handle.close().catch(() => {});
  }

  /**
   * Offers the output video importFile has just opened (`handle`) to a server that takes
   * `op.output`, so the server pulls it while the cache hashes and syncs it. The offer reads
   * through a descriptor of its own on the same open file, which outlives importFile's.
   */
  private async offerOutput(opId: number, handle: fsp.FileHandle, announced: Omit<MessageOf<'op.output'>, 'type' | 'op_id'>): Promise<void> {
    const connection = this.opts.link.current;
    if (!connection?.welcome?.features?.includes(LinkFeature.earlyOutput)) return;
    const own = await openOwnDescriptor(handle);
    if (!own) return;
    await this.closeEarlyOutput(opId);
    this.earlyOutputs.set(opId, { handle: own, size: announced.size });
    if (!connection.sendMessage({ type: 'op.output', op_id: opId, ...announced })) await this.closeEarlyOutput(opId);
  }

  private async closeEarlyOutput(opId: number): Promise<void> {
    const early = this.earlyOutputs.get(opId);
    this.earlyOutputs.delete(opId);
    await early?.handle.close().catch(() => {});
  }

  /** Stops every operation (agent shutdown). Runs in `run` stay journaled: the next start reports them `agent_restarted`. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    for (const op of this.running.values()) {
      op.stopReason ??= 'shutdown';
      op.stop.abort();
    }
    await this.idle();
  }

  /** Takes operations again after `shutdown()` (the simulated board's reboot). */
  resume(): void {
    this.shuttingDown = false;
  }

  private async start(msg: OpStart): Promise<void> {
    const log = this.opts.log.child({ op_id: msg.op_id });
    if (this.running.has(msg.op_id)) {
      log.info('op.start for an operation already running here: ignored');
      return;
    }
    const known = this.opts.journal.outcome(msg.op_id);
    if (known) {
      log.info('op.start for an operation that already ended here: repeating its outcome');
      this.opts.link.send({ type: 'op.result', outcome: known });
      return;
    }
    if (this.shuttingDown) return;
    // Registered before the first await, so an op.cancel right behind finds it.
    const op: RunningOperation = {
      opId: msg.op_id,
      kind: msg.kind,
      stop: new AbortController(),
      stopReason: undefined,
      reporter: new OpReporter(this.opts.link, msg.op_id, this.opts.clock),
      done: Promise.resolve(),
    };
    this.running.set(msg.op_id, op);
    op.done = this.execute(msg, op, log).finally(() => this.running.delete(msg.op_id));
  }

  private async execute(msg: OpStart, op: RunningOperation, log: Logger): Promise<void> {
    const { cache, journal } = this.opts;
    const releaseInputs = cache.pin(msg.files.map((f) => f.sha256));
    let outcome: OperationOutcome;
    try {
      await journal.recordStart({
        op_id: msg.op_id,
        kind: msg.kind,
        invocation_id: msg.invocation.id,
        started_at: new Date().toISOString(),
        boot_id: await this.opts.board.bootId(),
      });
      log.info({ kind: msg.kind, invocation_id: msg.invocation.id, files: msg.files.length }, 'operation started');
      const prepared =
        msg.kind === 'execute' && this.opts.prepareRun
          ? await this.opts.prepareRun(msg, { note: (line) => op.reporter.note(line), progress: (phase) => op.reporter.progress(phase, 0, 0) })
          : {};
      if (op.stop.signal.aborted) throw new OperationStopped();
      const stats = await transferFiles({ files: msg.files, cache, link: this.opts.link, reporter: op.reporter, log, signal: op.stop.signal });
      const paths = await syncInvocationFolder(cache, this.opts.invocationsDir, msg.invocation.id, msg.files);
      const transferResult = {
        ...prepared,
        invocation_dir: path.join(this.opts.invocationsDir, String(msg.invocation.id)),
        files_pulled: stats.filesPulled,
        files_cached: stats.filesCached,
        bytes_pulled: stats.bytesPulled,
        wire_bytes: stats.wireBytes,
        files: stats.files,
      };
      if (msg.kind === 'transfer') {
        outcome = this.outcome(msg.op_id, 'succeeded', transferResult, null, null);
      } else {
        outcome = await this.run(msg, op, paths, transferResult);
      }
    } catch (err) {
      if (err instanceof OperationStopped || op.stop.signal.aborted) {
        outcome = this.outcome(msg.op_id, 'cancelled', null, { code: 'cancelled', message: 'cancelled on request' }, null);
      } else if (err instanceof OperationError) {
        outcome = this.outcome(msg.op_id, 'failed', null, err.info, null);
      } else {
        log.error({ err }, 'operation failed unexpectedly');
        outcome = this.outcome(msg.op_id, 'failed', null, { code: 'agent_error', message: err instanceof Error ? err.message : String(err) }, null);
      }
    } finally {
      releaseInputs();
    }
    await this.finish(op, outcome, log);
  }

  private async run(
    msg: OpStart,
    op: RunningOperation,
    paths: Map<string, string>,
    transferResult: Record<string, unknown>,
  ): Promise<OperationOutcome> {
    const { journal } = this.opts;
    // Journaled before the spawn: if the agent dies from here on, the run is reported failed.
    await journal.setPhase(msg.op_id, 'run');
    op.reporter.progress('run', 0, 0);
    const timeoutMs = msg.timeout_s !== undefined ? Math.round(msg.timeout_s * 1000) : this.opts.runTimeoutMs;
    op.reporter.note(`running ${JSON.stringify(this.opts.runnerArgv)} (timeout ${Math.round(timeoutMs / 1000)} s)${msg.run ? `, ${msg.run.warmup} warm-up and ${msg.run.repeat} counted runs` : ''}`);
    // An mm-runner run's bitstream is loaded first and what the accelerator held is put back
    // after, however the run ends (docs/runner.md).
    const held = await this.loadAccelerator(paths, op);
    let restored: boolean | undefined;
    // Repeats (docs/results.md): `warmup` runs not counted, then `repeat` counted ones; the
    // output video and results.jsonl are those of the last run.
    const repeat = msg.run?.repeat ?? 1;
    const warmup = msg.run?.warmup ?? 0;
    const total = warmup + repeat;
    const startTemperature = await this.opts.startTemperature?.().catch(() => undefined);
    const runs: Record<string, number>[] = [];
    let result: RunResult<ProducedFile> | undefined;
    let metrics: Record<string, number> = {};
    try {
      for (let i = 0; i < total; i++) {
        if (op.stop.signal.aborted) throw new OperationStopped();
        const last = i === total - 1;
        if (total > 1) op.reporter.note(i < warmup ? `warm-up run ${i + 1} of ${warmup}` : `run ${i - warmup + 1} of ${repeat}`);
        const watch = this.opts.watchRun?.();
        result = await this.runOnce(msg, op, paths, timeoutMs, last);
        // What the board measured during the run (max_temperature_c, mean_power_w) goes into its metrics.
        const measured = watch?.stop() ?? {};
        // A bad metrics.json is a line in the log, never a failed run.
        if (result.runnerMetrics.kind === 'ignored') op.reporter.note(result.runnerMetrics.problem);
        metrics = buildRunMetrics({ runMs: result.durationMs, runner: result.runnerMetrics.kind === 'ok' ? result.runnerMetrics.metrics : undefined, measured });
        if (result.status !== 'succeeded') break;
        if (i >= warmup) runs.push(metrics);
      }
    } finally {
      if (held) restored = await held.restore((line) => op.reporter.note(line));
    }
    if (!result) throw new OperationStopped();
    const seconds = (result.durationMs / 1000).toFixed(1);
    const repeats = {
      ...(msg.run ? { runs, warmup_runs: warmup } : {}),
      ...(startTemperature !== undefined ? { start_temperature_c: startTemperature } : {}),
      ...(this.opts.runnerVersion ? { runner_version: this.opts.runnerVersion } : {}),
    };
    // With repeats, result.metrics holds each metric's median over the counted runs.
    const shown = msg.run && runs.length > 0 ? medians(runs) : metrics;
    if (held) transferResult = { ...transferResult, bitstream_loaded: true, accelerator_restored: restored === true };
    if (result.status === 'succeeded') {
      op.reporter.note(`runner exited with status 0 after ${seconds} s; output video ${result.output.filename} (${result.output.size} bytes)${result.results ? `, ${RESULTS_FILE} (${result.results.size} bytes)` : ''}`);
      const outcome = this.outcome(msg.op_id, 'succeeded', { ...transferResult, exit_code: 0, duration_ms: result.durationMs, output_filename: result.outputFilename, metrics: shown, ...repeats }, null, result.output);
      return result.results ? { ...outcome, results: result.results } : outcome;
    }
    op.reporter.note(`${result.error.message} (after ${seconds} s)`);
    const runResult = { ...transferResult, exit_code: result.exitCode, signal: result.signal, duration_ms: result.durationMs, metrics, ...repeats };
    return this.outcome(msg.op_id, result.status, runResult, result.error, null);
  }

  /** One run of the runner; only the last of a repeated run keeps its output video and results. */
  private runOnce(msg: OpStart, op: RunningOperation, paths: Map<string, string>, timeoutMs: number, keep: boolean): Promise<RunResult<ProducedFile>> {
    const { journal, cache } = this.opts;
    const dropped = (file: string, content_type: string): ProducedFile => ({ filename: path.basename(file), sha256: '', size: 0, content_type });
    return runInvocation<ProducedFile>({
      argv: this.opts.runnerArgv,
      workRoot: this.opts.workDir,
      opId: msg.op_id,
      invocation: msg.invocation,
      inputs: paths,
      timeoutMs,
      signal: op.stop.signal,
      ...(this.opts.cancelGraceMs !== undefined ? { graceMs: this.opts.cancelGraceMs } : {}),
      ...(this.opts.runnerEnv || this.opts.runnerExtraEnv ? { baseEnv: { ...(this.opts.runnerEnv ?? process.env), ...this.opts.runnerExtraEnv } } : {}),
      ...(this.opts.clock ? { clock: this.opts.clock } : {}),
      ...(this.opts.runAs ? { runAs: this.opts.runAs } : {}),
      boardLabels: msg.board_labels ?? {},
      onLog: (stream, text) => op.reporter.log(stream, text),
      onSpawn: async (pgid) => {
        await journal.setPhase(msg.op_id, 'run', { pgid, start_time: await processStartTime(pgid) });
      },
      collectOutput: async (file) => {
        const filename = path.basename(file);
        const content_type = videoContentType(filename) ?? 'application/octet-stream';
        if (!keep) return dropped(file, content_type);
        const { sha256, size } = await cache.importFile(file, {
          onOpened: (handle, openedSize) => this.offerOutput(msg.op_id, handle, { filename, size: openedSize, content_type }),
        });
        return { filename, sha256, size, content_type };
      },
      collectResults: async (file) => {
        if (!keep) return dropped(file, RESULTS_CONTENT_TYPE);
        const { sha256, size } = await cache.importFile(file);
        return { filename: RESULTS_FILE, sha256, size, content_type: RESULTS_CONTENT_TYPE };
      },
      onNote: (line) => op.reporter.note(line),
    });
  }

  /** Loads the run's bitstream when the accelerator hook takes it (runner/accelerator-swap.ts). */
  private async loadAccelerator(paths: ReadonlyMap<string, string>, op: RunningOperation): Promise<{ restore(note: (line: string) => void): Promise<boolean> } | undefined> {
    const bitstream = paths.get('bitstream');
    const accelerator = this.opts.accelerator;
    if (!bitstream || !accelerator || !(await accelerator.applies(paths))) return undefined;
    op.reporter.progress('bitstream', 0, 0);
    const held = await accelerator.load(bitstream, (line) => op.reporter.note(line));
    op.reporter.progress('run', 0, 0);
    return held;
  }

  private async finish(op: RunningOperation, outcome: OperationOutcome, log: Logger): Promise<void> {
    op.reporter.close();
    // An offer whose import failed (or a stopped run) has nothing left to give.
    if (!outcome.output) await this.closeEarlyOutput(outcome.op_id);
    if (op.stopReason === 'shutdown') {
      log.info('operation stopped by the agent shutting down');
      return;
    }
    this.pinOutput(outcome);
    this.awaitingAck.set(outcome.op_id, op.reporter);
    try {
      await this.opts.journal.recordOutcome(outcome);
    } catch (err) {
      // Still tell the server: it is the journal that failed, not the operation.
      log.error({ err }, 'could not journal the outcome');
    }
    log.info({ status: outcome.status, error: outcome.error }, 'operation ended');
    this.opts.link.send({ type: 'op.result', outcome });
    this.opts.onEnded?.();
  }

  private async cancel(opId: number): Promise<void> {
    const op = this.running.get(opId);
    if (op) {
      this.opts.log.info({ op_id: opId }, 'cancelling');
      op.stopReason ??= 'cancel';
      op.reporter.note('cancel requested');
      op.stop.abort();
      return;
    }
    const known = this.opts.journal.outcome(opId);
    if (known) {
      this.opts.link.send({ type: 'op.result', outcome: known });
      return;
    }
    // Not running here (e.g. an interrupted transfer forgotten at restart): it is, then, cancelled.
    const outcome = this.outcome(opId, 'cancelled', null, { code: 'cancelled', message: 'cancelled; it was not running on the board' }, null);
    await this.opts.journal.recordOutcome(outcome);
    this.opts.link.send({ type: 'op.result', outcome });
  }

  private async acknowledge(opId: number): Promise<void> {
    this.awaitingAck.get(opId)?.forgetSent();
    this.awaitingAck.delete(opId);
    this.outputPins.get(opId)?.();
    this.outputPins.delete(opId);
    await this.closeEarlyOutput(opId);
    if (this.opts.journal.outcome(opId)) await this.opts.journal.acknowledge(opId);
  }

  private pinOutput(outcome: OperationOutcome): void {
    const produced = [outcome.output, outcome.results].flatMap((f) => (f ? [f.sha256] : []));
    if (produced.length > 0 && !this.outputPins.has(outcome.op_id)) this.outputPins.set(outcome.op_id, this.opts.cache.pin(produced));
  }

  private outcome(
    opId: number,
    status: OperationOutcome['status'],
    result: Record<string, unknown> | null,
    error: ErrorInfo | null,
    output: ProducedFile | null,
  ): OperationOutcome {
    return { op_id: opId, status, finished_at: new Date().toISOString(), result, error, output };
  }
}

/**
 * Reads `handle` from `start` up to `size` (what was announced), never past it: bytes a
 * runner appended later are not part of the offer. Closing it closes the handle.
 */
function boundedReader(handle: fsp.FileHandle, start: number, size: number): ChunkReader {
  let position = start;
  return {
    read: async (into, offset, length) => {
      const want = Math.min(length, size - position);
      if (want <= 0) return 0;
      const { bytesRead } = await handle.read(into, offset, want, position);
      position += bytesRead;
      return bytesRead;
    },
    close: () => handle.close(),
  };
}

/** Each metric's median over the runs that have it. */
function medians(runs: readonly Record<string, number>[]): Record<string, number> {
  const byName = new Map<string, number[]>();
  for (const run of runs) for (const [k, v] of Object.entries(run)) (byName.get(k) ?? byName.set(k, []).get(k)!).push(v);
  const out: Record<string, number> = {};
  for (const [k, xs] of byName) {
    xs.sort((a, b) => a - b);
    const mid = (xs.length - 1) / 2;
    out[k] = Math.round(((xs[Math.floor(mid)]! + xs[Math.ceil(mid)]!) / 2) * 1e6) / 1e6;
  }
  return out;
}
