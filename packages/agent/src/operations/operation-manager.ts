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
import { runInvocation, type RunAs } from '../runner/run-invocation.ts';
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
      const stats = await transferFiles({ files: msg.files, cache, link: this.opts.link, reporter: op.reporter, log, signal: op.stop.signal });
      const paths = await syncInvocationFolder(cache, this.opts.invocationsDir, msg.invocation.id, msg.files);
      const transferResult = {
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
    const { journal, cache } = this.opts;
    // Journaled before the spawn: if the agent dies from here on, the run is reported failed.
    await journal.setPhase(msg.op_id, 'run');
    op.reporter.progress('run', 0, 0);
    const timeoutMs = msg.timeout_s !== undefined ? Math.round(msg.timeout_s * 1000) : this.opts.runTimeoutMs;
    op.reporter.note(`running ${JSON.stringify(this.opts.runnerArgv)} (timeout ${Math.round(timeoutMs / 1000)} s)`);
    const watch = this.opts.watchRun?.();
    const result = await runInvocation<ProducedFile>({
      argv: this.opts.runnerArgv,
      workRoot: this.opts.workDir,
      opId: msg.op_id,
      invocation: msg.invocation,
      inputs: paths,
      timeoutMs,
      signal: op.stop.signal,
      ...(this.opts.cancelGraceMs !== undefined ? { graceMs: this.opts.cancelGraceMs } : {}),
      ...(this.opts.runnerEnv ? { baseEnv: this.opts.runnerEnv } : {}),
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
        const { sha256, size } = await cache.importFile(file, {
          onOpened: (handle, openedSize) => this.offerOutput(msg.op_id, handle, { filename, size: openedSize, content_type }),
        });
        return { filename, sha256, size, content_type };
      },
    });
    // What the board measured during the run (max_temperature_c, mean_power_w) goes into result.metrics.
    const measured = watch?.stop() ?? {};
    const seconds = (result.durationMs / 1000).toFixed(1);
    // A bad metrics.json is a line in the log, never a failed run.
    if (result.runnerMetrics.kind === 'ignored') op.reporter.note(result.runnerMetrics.problem);
    const metrics = buildRunMetrics({ runMs: result.durationMs, runner: result.runnerMetrics.kind === 'ok' ? result.runnerMetrics.metrics : undefined, measured });
    if (result.status === 'succeeded') {
      op.reporter.note(`runner exited with status 0 after ${seconds} s; output video ${result.output.filename} (${result.output.size} bytes)`);
      return this.outcome(msg.op_id, 'succeeded', { ...transferResult, exit_code: 0, duration_ms: result.durationMs, output_filename: result.outputFilename, metrics }, null, result.output);
    }
    op.reporter.note(`${result.error.message} (after ${seconds} s)`);
    const runResult = { ...transferResult, exit_code: result.exitCode, signal: result.signal, duration_ms: result.durationMs, metrics };
    return this.outcome(msg.op_id, result.status, runResult, result.error, null);
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
    if (outcome.output && !this.outputPins.has(outcome.op_id)) this.outputPins.set(outcome.op_id, this.opts.cache.pin([outcome.output.sha256]));
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
