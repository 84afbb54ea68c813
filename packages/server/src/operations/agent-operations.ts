import { PassThrough } from 'node:stream';
import { and, eq, inArray } from 'drizzle-orm';
import {
  StreamError,
  systemClock,
  writableSink,
  type ByteSink,
  type Clock,
  type FileRef,
  type MessageOf,
  type TimerHandle,
  type OperationOutcome,
  type ProducedFile,
  type StreamSource,
} from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { BoardWork } from '../agent-link/board-work.ts';
import type { BoardLink, HelloMessage, OperationMessage, PullMessage } from '../agent-link/board-link.ts';
import { isDatabaseUnavailable } from '../db/pg-error.ts';
import { invocationFiles, invocations } from '../db/schema.ts';
import { NotFoundError, PayloadTooLargeError } from '../errors.ts';
import type { BlobWriter, StoredBlob } from '../storage/blob-store.ts';
import { attachInvocationFile, discardIngestedContent } from '../services/invocation-files.ts';
import { plainFileName } from '../http/file-name.ts';
import { INPUT_FILE_KINDS } from '../services/invocation-records.ts';
import { isAgentKind, type AgentKind } from './kinds.ts';
import { isFinal, type OperationRow } from './operation-object.ts';
import type { StoreContext } from '../store-context.ts';
import type { OperationLifecycle } from './lifecycle.ts';
import { findOperation, saveParams, unfinishedOperations } from './store.ts';

/** What `op.start` carries, kept in the operation's params so a restart sends the same. */
interface StartParams {
  invocation_name: string;
  files: FileRef[];
}

interface ActiveOperation {
  boardId: string;
  kind: AgentKind;
  invocationId: number | null;
  /** The files of its op.start (for naming them in the log). */
  files: FileRef[];
}

/** An output video announced by `op.output`, pulled before its `op.result` (see receiveOutput). */
interface EarlyOutput {
  writer: BlobWriter;
  /** Settles when the pull has ended; rejects when it failed (the writer is then aborted). */
  pulled: Promise<void>;
  size: number;
  expiry: TimerHandle;
}

/** What the server saw of a transfer (bytes it sent, from which offsets), for the result. */
interface TransferStats {
  bytesSent: number;
  pulls: Array<{ filename: string | null; sha256: string; offset: number; bytes: number; complete: boolean }>;
}

const KIND_ORDER: ReadonlyMap<string, number> = new Map<string, number>(INPUT_FILE_KINDS.map((k, i) => [k, i]));
const RECENTLY_FINAL_KEPT = 1000;
/** An outcome that could not be settled because the database is away is tried again after this, doubling… */
const OUTCOME_RETRY_FIRST_MS = 250;
/** …up to this, for as long as its link is open. */
const OUTCOME_RETRY_MAX_MS = 5_000;

/**
 * `transfer` and `execute`, the operations the agent runs (docs/agent-link.md, "Operations"):
 * `op.start` when the board queue starts one, progress and log as they come, the outcome
 * (with the output video pulled from the board and attached to the invocation) when it
 * ends, and the settling of a reconnecting agent's hello.
 */
export class AgentOperations implements BoardWork {
  private readonly active = new Map<number, ActiveOperation>();
  private readonly runningOnBoard = new Map<string, number>();
  private readonly stats = new Map<number, TransferStats>();
  private readonly outcomes = new Map<number, Promise<void>>();
  private readonly earlyOutputs = new Map<number, EarlyOutput>();
  /** Ids of operations known to have ended, so late messages cost no database read. */
  private readonly recentlyFinal = new Set<number>();

  constructor(
    private readonly ops: OperationLifecycle,
    private readonly ctx: StoreContext & { agents: BoardLinks },
    private readonly clock: Clock = systemClock,
  ) {}

  // ── start ────────────────────────────────────────────────────────────────────────

  /** The board queue claimed this operation: snapshot the invocation's files and send op.start. */
  async begin(row: OperationRow): Promise<void> {
    const { db } = this.ctx.database;
    const invocationId = row.invocationId;
    const [[inv], fileRows] = invocationId
      ? await Promise.all([
          db.select({ id: invocations.id, name: invocations.name }).from(invocations).where(eq(invocations.id, invocationId)),
          db
            .select()
            .from(invocationFiles)
            .where(and(eq(invocationFiles.invocationId, invocationId), inArray(invocationFiles.kind, [...INPUT_FILE_KINDS]))),
        ])
      : [[], []];
    if (!inv || !row.boardId) {
      await this.ops.finish(row.id, 'failed', null, { code: 'invocation_not_found', message: 'The invocation no longer exists.' });
      return;
    }
    fileRows.sort((a, b) => (KIND_ORDER.get(a.kind) ?? 9) - (KIND_ORDER.get(b.kind) ?? 9));
    const start: StartParams = {
      invocation_name: inv.name,
      files: fileRows.map((f) => ({ kind: f.kind as FileRef['kind'], filename: f.filename, sha256: f.sha256, size: f.size })),
    };
    const params = { ...row.params, ...start };
    const total = start.files.reduce((n, f) => n + f.size, 0);
    // One write: the op.start snapshot and the first progress (the agent reports the rest).
    await saveParams(db, row.id, params, { phase: 'transfer', bytes_done: 0, bytes_total: total });
    const withParams = { ...row, params };
    this.track(withParams);
    const conn = this.ctx.agents.connection(row.boardId);
    // Offline now: the agent's next hello finds it running and unknown to it, and gets op.start then.
    if (conn) this.sendStart(conn, withParams);
  }

  private sendStart(conn: BoardLink, row: OperationRow): void {
    const p = row.params as Partial<StartParams>;
    conn.sendMessage({
      type: 'op.start',
      op_id: row.id,
      kind: row.kind as AgentKind,
      invocation: { id: row.invocationId ?? 0, name: p.invocation_name ?? '' },
      files: p.files ?? [],
    });
  }

  private track(row: OperationRow): void {
    if (!row.boardId || !isAgentKind(row.kind)) return;
    this.active.set(row.id, {
      boardId: row.boardId,
      kind: row.kind,
      invocationId: row.invocationId,
      files: (row.params as Partial<StartParams>).files ?? [],
    });
    this.runningOnBoard.set(row.boardId, row.id);
  }

  /** The operation ended: drop what was kept for it. */
  forget(id: number): void {
    const a = this.active.get(id);
    if (a && this.runningOnBoard.get(a.boardId) === id) this.runningOnBoard.delete(a.boardId);
    this.active.delete(id);
    this.stats.delete(id);
    this.dropEarlyOutput(id);
    this.recentlyFinal.add(id);
    if (this.recentlyFinal.size > RECENTLY_FINAL_KEPT) {
      const oldest = this.recentlyFinal.values().next().value;
      if (oldest !== undefined) this.recentlyFinal.delete(oldest);
    }
  }

  /** The running agent operation this message may refer to, read from the database on a miss. */
  private async lookup(id: number): Promise<ActiveOperation | 'final' | undefined> {
    const known = this.active.get(id);
    if (known) return known;
    if (this.recentlyFinal.has(id)) return 'final';
    const row = await findOperation(this.ctx.database.db, id);
    if (!row || !isAgentKind(row.kind)) return undefined;
    if (isFinal(row.status)) return 'final';
    if (row.status !== 'running') return undefined;
    this.track(row);
    return this.active.get(id);
  }

  // ── messages from the agent ──────────────────────────────────────────────────────

  async onOperationMessage(conn: BoardLink, m: OperationMessage): Promise<void> {
    if (m.type === 'op.result') return this.handleOutcome(conn, m.outcome);
    const op = await this.lookup(m.op_id);
    if (op === 'final') return; // e.g. the tail of a run cancelled while the board was away
    if (!op || op.boardId !== conn.boardId) {
      conn.sendMessage({ type: 'error', code: 'unknown_operation', message: `no running operation ${m.op_id} for this board`, ref_type: m.type });
      return;
    }
    if (m.type === 'op.output') this.startEarlyOutput(conn, op, m);
    else if (m.type === 'op.progress') this.ops.reportProgress(m.op_id, m.progress);
    else await this.ops.appendAgentLog(m.op_id, m.stream, m.data, m.offset);
  }

  /** Handles an outcome once at a time per operation; a repeat for an ended operation is just acknowledged. */
  handleOutcome(conn: BoardLink, outcome: OperationOutcome): Promise<void> {
    const id = outcome.op_id;
    const inFlight = this.outcomes.get(id);
    const run = (inFlight ?? Promise.resolve()).then(() => this.settleOutcomeWhileLinked(conn, outcome));
    const tracked = run.finally(() => {
      if (this.outcomes.get(id) === tracked) this.outcomes.delete(id);
    });
    this.outcomes.set(id, tracked);
    return tracked;
  }

  /**
   * settleOutcome, tried again while the database is unreachable and the link is open. The
   * agent sends an outcome again only when it reconnects, so one that came during an outage
   * would otherwise wait for the next reconnect, however long the link stays up. A try that
   * failed after the output video came is tried whole again: the video is pulled again, and
   * attaching the same content again replaces nothing.
   */
  private async settleOutcomeWhileLinked(conn: BoardLink, outcome: OperationOutcome): Promise<void> {
    let delay = OUTCOME_RETRY_FIRST_MS;
    for (;;) {
      try {
        await this.settleOutcome(conn, outcome);
        return;
      } catch (err) {
        if (!isDatabaseUnavailable(err) || !conn.isOpen) throw err;
        conn.log.warn({ err, op_id: outcome.op_id, retry_in_ms: delay }, 'could not settle an outcome: the database is unreachable; trying again');
        await new Promise<void>((resolve) => this.clock.setTimeout(resolve, delay));
        delay = Math.min(delay * 2, OUTCOME_RETRY_MAX_MS);
      }
    }
  }

  private async settleOutcome(conn: BoardLink, outcome: OperationOutcome): Promise<void> {
    const id = outcome.op_id;
    const ack = () => conn.sendMessage({ type: 'op.result.ack', op_id: id });
    const row = await findOperation(this.ctx.database.db, id);
    if (!row) {
      conn.log.warn({ op_id: id }, 'outcome of an unknown operation; acknowledged');
      ack();
      return;
    }
    if (row.boardId !== conn.boardId) {
      conn.sendMessage({ type: 'error', code: 'unknown_operation', message: `operation ${id} is not this board's`, ref_type: 'op.result' });
      return;
    }
    if (isFinal(row.status)) {
      ack();
      return;
    }
    // Only the board's running transfer/execute is the agent's to end: not queued work, not server-side runs.
    if (row.status !== 'running' || !isAgentKind(row.kind)) {
      conn.log.warn({ op_id: id, kind: row.kind, status: row.status }, 'outcome of an operation the agent does not run; refused');
      conn.sendMessage({ type: 'error', code: 'unknown_operation', message: `operation ${id} is not running on this board's agent`, ref_type: 'op.result' });
      return;
    }

    let status = outcome.status;
    let error = outcome.error;
    const result: Record<string, unknown> = { ...(outcome.result ?? {}) };
    // What the operation was about: the files of its op.start.
    result.files ??= (row.params as Partial<StartParams>).files ?? [];
    const stats = this.stats.get(id);
    if (stats) {
      // Measured on this side of the link (since this server process started).
      result.bytes_sent = stats.bytesSent;
      result.pulls = stats.pulls;
    }

    let received: StoredBlob | undefined;
    if (status === 'succeeded' && outcome.output) {
      try {
        received = await this.receiveOutput(conn, id, outcome.output);
      } catch (err) {
        if (err instanceof StreamError && err.info.code === 'link_closed') {
          // Not acknowledged: the agent reports it again (hello.finished) when it is back.
          conn.log.info({ op_id: id }, 'link closed while pulling the output; waiting for the agent to report again');
          return;
        }
        // Not the board's fault: the whole outcome is tried again (settleOutcomeWhileLinked).
        if (isDatabaseUnavailable(err)) throw err;
        status = 'failed';
        error = { code: 'output_unavailable', message: `Could not receive the output video: ${err instanceof Error ? err.message : String(err)}` };
      }
      if (status === 'succeeded' && row.kind === 'execute') {
        if (row.invocationId) {
          try {
            // What was received, not what the agent says: the stored size, a base name, the type sniffed here.
            result.output_video = await attachInvocationFile(this.ctx, row.invocationId, 'output_video', {
              filename: plainFileName(outcome.output.filename, 'output'),
              sha256: received!.sha256,
              size: received!.size,
            });
          } catch (err) {
            // attachInvocationFile released the content; the invocation went away meanwhile.
            if (!(err instanceof NotFoundError)) throw err;
            result.output_video = null;
          }
        } else {
          await discardIngestedContent(this.ctx, outcome.output.sha256);
          result.output_video = null;
        }
      } else if (status === 'succeeded') {
        await discardIngestedContent(this.ctx, outcome.output.sha256);
      }
    }
    if (status !== 'succeeded' && !error) error = { code: status === 'cancelled' ? 'cancelled' : 'failed', message: `The board reported ${status}.` };
    await this.ops.finish(id, status, result, status === 'succeeded' ? null : error);
    ack();
  }

  /**
   * Pulls the produced file from the agent's cache into the content store, checking its
   * sha256 as it is stored and taking at most the declared size; or keeps what an `op.output`
   * pull already received, when that is the same content. Pulled even when the store
   * already holds that hash, so an agent cannot claim another invocation's content as its
   * output. Given up after MM_OUTPUT_PULL_TIMEOUT_S in all or MM_OUTPUT_PULL_IDLE_S without a
   * byte, so a stalled agent does not hold the link's message chain. The content stays
   * pinned until it is attached or discarded.
   */
  private async receiveOutput(conn: BoardLink, opId: number, output: ProducedFile): Promise<StoredBlob> {
    const early = this.earlyOutputs.get(opId);
    if (early) {
      this.earlyOutputs.delete(opId);
      this.clock.clearTimeout(early.expiry);
      const kept = await this.keepEarlyOutput(conn, opId, early, output);
      if (kept) return kept;
    }
    const files = this.ctx.files;
    if (files.createWriter) {
      // The link's receiver writes its batches straight into the store (hash + writev).
      const writer = files.createWriter({ expectedSha256: output.sha256, maxBytes: output.size });
      await this.pullInto(conn, opId, { kind: 'produced', sha256: output.sha256 }, writer, output.size);
      // commit() fsyncs, checks and stores once the pull has ended.
      return writer.commit();
    }
    const { giveUp, armIdle, stop } = this.outputPullTimers(opId);
    const tooLarge = () => tooLargeError(output.size);
    const pipe = new PassThrough({ highWaterMark: 1024 * 1024 });
    // The pull may fail before ingest has wired its pipeline: never an unhandled 'error'.
    pipe.on('error', () => {});
    const ingest = files.ingest(pipe, { expectedSha256: output.sha256, maxBytes: output.size });
    ingest.catch(() => {});
    armIdle();
    try {
      await conn.pull({ kind: 'produced', sha256: output.sha256 }, writableSink(pipe), { onBytes: armIdle, signal: giveUp.signal });
    } catch (err) {
      pipe.destroy(err instanceof Error ? err : new Error(String(err)));
      const stored = await ingest.catch((e: unknown) => e);
      // Past the declared size: ingest's refusal says why better than the write failure.
      if (stored instanceof PayloadTooLargeError) throw tooLarge();
      if (giveUp.signal.aborted) conn.log.warn({ op_id: opId }, 'output pull timed out');
      throw err;
    } finally {
      stop();
    }
    try {
      return await ingest;
    } catch (err) {
      if (err instanceof PayloadTooLargeError) throw tooLarge();
      throw err;
    }
  }

  /**
   * `op.output`: the runner exited and the agent is hashing its video into its cache. Pull
   * the video now (source `output`) into a writer of the store that hashes what it
   * receives; `receiveOutput` keeps it once `op.result` names the same sha256 and size.
   * Started, not awaited: the link's operation messages go on meanwhile.
   */
  private startEarlyOutput(conn: BoardLink, op: ActiveOperation, m: MessageOf<'op.output'>): void {
    const files = this.ctx.files;
    if (!files.createWriter || op.kind !== 'execute' || this.earlyOutputs.has(m.op_id)) return;
    const writer = files.createWriter({ maxBytes: m.size });
    const pulled = this.pullInto(conn, m.op_id, { kind: 'output', op_id: m.op_id }, writer, m.size);
    // Its failure is handled where it is awaited (receiveOutput) or when it expires.
    pulled.catch(() => {});
    // An op.result that never comes (the operation was cancelled meanwhile, the server is
    // stopping): the written bytes go after the longest an output pull may take.
    const expiry = this.clock.setTimeout(() => this.dropEarlyOutput(m.op_id), this.ctx.config.outputPullTimeoutMs * 2);
    this.earlyOutputs.set(m.op_id, { writer, pulled, size: m.size, expiry });
  }

  /** An early output nobody will take (the operation ended without one): its bytes go. */
  private dropEarlyOutput(id: number): void {
    const early = this.earlyOutputs.get(id);
    if (!early) return;
    this.earlyOutputs.delete(id);
    this.clock.clearTimeout(early.expiry);
    void early.pulled.then(() => early.writer.abort(), () => {});
  }

  /**
   * What an early pull received, stored if it is what `op.result` names (the same size,
   * hashing to the same sha256); undefined otherwise (it failed, the link dropped, the
   * runner's file changed under it), and the caller pulls `produced` by sha256 instead.
   */
  private async keepEarlyOutput(conn: BoardLink, opId: number, early: EarlyOutput, output: ProducedFile): Promise<StoredBlob | undefined> {
    const log = conn.log.child({ op_id: opId });
    const fallBack = async (why: string) => {
      await this.ops.appendLog(opId, 'server', `the output video as first received is not usable (${why}): pulling it again by its sha256\n`);
      return undefined;
    };
    try {
      await early.pulled;
    } catch (err) {
      log.info({ err }, 'the early pull of the output failed: pulling it by its sha256');
      return fallBack(err instanceof Error ? err.message : String(err));
    }
    if (early.writer.size !== output.size) {
      log.warn({ received: early.writer.size, reported: output.size }, 'the early output differs in size from the reported one: pulling it by its sha256');
      await early.writer.abort();
      return fallBack(`${early.writer.size} bytes, the board reported ${output.size}`);
    }
    try {
      const stored = await early.writer.commit(output.sha256);
      await this.ops.appendLog(opId, 'server', `received the output video (${stored.size} bytes) while the board was hashing it\n`);
      return stored;
    } catch (err) {
      // ContentMismatchError: the file changed while the agent hashed it. commit removed the bytes.
      log.warn({ err }, 'the early output is not the reported content: pulling it by its sha256');
      return fallBack(err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * Pulls `source` from the agent into `writer` under the output pull's limits: given up
   * after MM_OUTPUT_PULL_TIMEOUT_S in all or MM_OUTPUT_PULL_IDLE_S without a byte; on any
   * failure the writer is aborted (nothing is kept).
   */
  private async pullInto(conn: BoardLink, opId: number, source: StreamSource, writer: BlobWriter, declared: number): Promise<void> {
    const { giveUp, armIdle, stop } = this.outputPullTimers(opId);
    let refused = false;
    const sink: ByteSink = {
      write: (chunk) => sink.writev!([chunk]),
      writev: (chunks) =>
        writer.writev(chunks).catch((err: unknown) => {
          if (err instanceof PayloadTooLargeError) refused = true;
          throw err;
        }),
      // The caller commits once the pull has ended.
      finish: async () => {},
      destroy: () => void writer.abort(),
    };
    armIdle();
    try {
      await conn.pull(source, sink, { onBytes: armIdle, signal: giveUp.signal });
    } catch (err) {
      await writer.abort();
      if (refused) throw tooLargeError(declared);
      if (giveUp.signal.aborted) conn.log.warn({ op_id: opId, source: source.kind }, 'output pull timed out');
      throw err;
    } finally {
      stop();
    }
  }

  /** The output pull's deadline and idle timer: `giveUp` aborts when either fires. */
  private outputPullTimers(opId: number): { giveUp: AbortController; armIdle: () => void; stop: () => void } {
    const { outputPullTimeoutMs, outputPullIdleMs } = this.ctx.config;
    const giveUp = new AbortController();
    const deadline = this.clock.setTimeout(
      () => giveUp.abort(new Error(`the board did not send the output of operation ${opId} within ${outputPullTimeoutMs / 1000} s`)),
      outputPullTimeoutMs,
    );
    let idle: TimerHandle | undefined;
    const armIdle = () => {
      this.clock.clearTimeout(idle);
      idle = this.clock.setTimeout(
        () => giveUp.abort(new Error(`the board sent no output bytes for ${outputPullIdleMs / 1000} s`)),
        outputPullIdleMs,
      );
    };
    const stop = () => {
      this.clock.clearTimeout(deadline);
      this.clock.clearTimeout(idle);
    };
    return { giveUp, armIdle, stop };
  }

  // ── reconnect ────────────────────────────────────────────────────────────────────

  /**
   * docs/agent-link.md step 6: outcomes of `hello.finished` are handled as live ones;
   * running operations of this board the agent does not know are started again;
   * operations the agent still runs but the server has ended get `op.cancel`.
   */
  async settleHello(conn: BoardLink, hello: HelloMessage): Promise<void> {
    const { db } = this.ctx.database;
    for (const outcome of hello.finished) await this.handleOutcome(conn, outcome);
    const reported = new Set([...hello.running, ...hello.finished.map((f) => f.op_id)]);
    const open = await unfinishedOperations(db, { boardId: conn.boardId });
    for (const row of open) {
      if (row.status !== 'running' || !isAgentKind(row.kind)) continue;
      this.track(row);
      if (reported.has(row.id)) continue;
      if (!(row.params as Partial<StartParams>).files) {
        // Claimed but never sent (the server stopped in between): snapshot and send now.
        await this.begin(row);
        continue;
      }
      await this.ops.appendLog(row.id, 'server', 'the board reconnected without this operation: starting it again\n');
      this.sendStart(conn, row);
    }
    for (const id of hello.running) {
      const op = await this.lookup(id);
      if (op === 'final' || op === undefined || op.boardId !== conn.boardId) {
        conn.sendMessage({ type: 'op.cancel', op_id: id });
      } else if (this.ops.isCancelRequested(id) || (await this.cancelStored(id))) {
        conn.sendMessage({ type: 'op.cancel', op_id: id });
      }
    }
  }

  /** A cancel asked for before a restart (stored in the operation's params). */
  private async cancelStored(id: number): Promise<boolean> {
    const row = await findOperation(this.ctx.database.db, id);
    return (row?.params as { cancel_requested?: unknown } | undefined)?.cancel_requested === true;
  }

  // ── transfer statistics ──────────────────────────────────────────────────────────

  mayPullContent(boardId: string, sha256: string): boolean {
    const id = this.runningOnBoard.get(boardId);
    return id !== undefined && this.fileOf(id, sha256) !== undefined;
  }

  /** A pull of content by this board began (`size` total, from `offset`): noted in the log. */
  onServing(boardId: string, pull: PullMessage, size: number): void {
    if (pull.source.kind !== 'content') return;
    const id = this.runningOnBoard.get(boardId);
    if (id === undefined) return;
    const sha = pull.source.sha256;
    const file = this.fileOf(id, sha);
    const name = file?.filename ?? sha.slice(0, 12);
    const text =
      pull.offset > 0
        ? `sending ${name}: resuming at byte ${pull.offset} of ${size}\n`
        : `sending ${name} (${size} bytes)\n`;
    void this.ops.appendLog(id, 'server', text);
  }

  onServed(boardId: string, pull: PullMessage, bytes: number, ok: boolean): void {
    if (pull.source.kind !== 'content') return;
    const id = this.runningOnBoard.get(boardId);
    if (id === undefined) return;
    let s = this.stats.get(id);
    if (!s) {
      s = { bytesSent: 0, pulls: [] };
      this.stats.set(id, s);
    }
    s.bytesSent += bytes;
    s.pulls.push({ filename: this.fileOf(id, pull.source.sha256)?.filename ?? null, sha256: pull.source.sha256, offset: pull.offset, bytes, complete: ok });
  }

  private fileOf(id: number, sha256: string): FileRef | undefined {
    return this.active.get(id)?.files.find((f) => f.sha256 === sha256);
  }
}

function tooLargeError(declared: number): Error {
  return new Error(`the board sent more than the declared ${declared} bytes`);
}

