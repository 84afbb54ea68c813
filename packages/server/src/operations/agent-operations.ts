import { noteLateResult } from './board-lost.ts';
import {
  StreamError,
  systemClock,
  type Clock,
  type MessageOf,
  type OperationOutcome,
  type FileRef,
} from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import type { BoardWork } from '../agent-link/board-work.ts';
import type { BoardLink, HelloMessage, OperationMessage, PullMessage } from '../agent-link/board-link.ts';
import type { AgentStart } from '../db/schema.ts';
import { isDatabaseUnavailable } from '../db/pg-error.ts';
import { OUTCOME_NOT_SETTLED, settleOutcomeWithRetries } from './outcome-retry.ts';
import { NotFoundError } from '../errors.ts';
import type { StoredBlob } from '../storage/blob-store.ts';
import { attachInvocationFile, discardIngestedContent } from '../invocations/invocation-files.ts';
import { plainFileName } from '../http/file-name.ts';
import { INPUT_FILE_KINDS } from '../invocations/invocation-records.ts';
import { isAgentKind } from './kinds.ts';
import type { LiveOperation, LiveOperations } from './live-operations.ts';
import { isFinal, type OperationRow } from './operation-object.ts';
import { OutputReceiver } from './output-receiver.ts';
import { receiveRunResults } from './run-results-receiver.ts';
import type { StoreContext } from '../store-context.ts';
import type { OperationLifecycle } from './lifecycle.ts';
import { findOperation, saveAgentStart, startSnapshot, unfinishedOperations } from './store.ts';
import { describeRuns, runOf, startContextOf } from '../results/run-record.ts';

const KIND_ORDER: ReadonlyMap<string, number> = new Map<string, number>(INPUT_FILE_KINDS.map((k, i) => [k, i]));

/**
 * `transfer` and `execute`, the operations the agent runs (docs/agent-link.md, "Operations"):
 * `op.start` when the board queue starts one, progress and log as they come, the outcome
 * (with the output video pulled from the board and attached to the invocation) when it
 * ends, and the settling of a reconnecting agent's hello. What it keeps per operation is
 * in the operation's live record (live-operations.ts), which the operations service owns.
 */
export class AgentOperations implements BoardWork {
  /** The output videos (output-receiver.ts). */
  readonly output: OutputReceiver;

  constructor(
    private readonly ops: OperationLifecycle,
    private readonly live: LiveOperations,
    private readonly ctx: StoreContext & { agents: BoardLinks },
    private readonly clock: Clock = systemClock,
  ) {
    this.output = new OutputReceiver({
      files: ctx.files,
      config: ctx.config,
      clock,
      note: (opId, text) => ops.appendLog(opId, 'server', text),
    });
  }

  // ── start ────────────────────────────────────────────────────────────────────────

  /** The board queue claimed this operation: snapshot the invocation's files and send op.start. */
  async begin(row: OperationRow): Promise<void> {
    // The invocation, its files and needs, and the board: one read.
    const snap = row.invocationId && row.boardId ? await startSnapshot(this.ctx.database.db, row.invocationId, row.boardId, INPUT_FILE_KINDS) : undefined;
    if (!snap || !row.boardId) {
      await this.ops.finish(row.id, 'failed', null, { code: 'invocation_not_found', message: 'The invocation no longer exists.' });
      return;
    }
    snap.files.sort((a, b) => (KIND_ORDER.get(a.kind) ?? 9) - (KIND_ORDER.get(b.kind) ?? 9));
    // The app the run needs and the model's DPU fingerprints: the agent loads and checks before any file moves (docs/accelerators.md).
    const needs = row.kind === 'execute' ? snap.needs : undefined;
    const start: AgentStart = {
      invocation_name: snap.name,
      files: snap.files.map((f) => ({ kind: f.kind as FileRef['kind'], filename: f.filename, sha256: f.sha256, size: f.size })),
      // The runner sees the board's labels as they were when it started (MM_BOARD_LABELS).
      ...(row.kind === 'execute' ? { board_labels: snap.board?.labels ?? {} } : {}),
      ...(needs?.requiresApp ? { requires_app: needs.requiresApp } : {}),
      ...(needs?.fingerprints.length ? { model_fingerprints: needs.fingerprints } : {}),
      // Repeats and warm-ups, and what the run depends on as the board was at its start (docs/results.md).
      ...(row.kind === 'execute' ? { ...runOf(row.params), context: startContextOf(snap.board, row.boardId, snap.files) } : {}),
    };
    const total = start.files.reduce((n, f) => n + f.size, 0);
    // One write: the op.start snapshot and the first progress (the agent reports the rest).
    await saveAgentStart(this.ctx.database.db, row.id, start, { phase: 'transfer', bytes_done: 0, bytes_total: total });
    const started = { ...row, agentStart: start };
    this.track(started);
    const conn = this.ctx.agents.connection(row.boardId);
    // Offline now: the agent's next hello finds it running and unknown to it, and gets op.start then.
    if (!conn) return;
    this.sendStart(conn, started);
    // The files right behind it, unless the board holds them: no pull's round trip. Only for a
    // fresh start: an agent resuming after a reconnect may hold a partial file, and pulls.
    // Nor for a run the agent checks first (its app, its DPU): no byte moves before that.
    if (start.requires_app !== undefined || start.model_fingerprints !== undefined) return;
    const boardId = row.boardId;
    conn.pushContent([...new Set(start.files.map((f) => f.sha256))], () => this.live.agentOnBoard(boardId)?.id === row.id);
  }

  private sendStart(conn: BoardLink, row: OperationRow): void {
    if (!isAgentKind(row.kind)) return;
    conn.sendMessage({
      type: 'op.start',
      op_id: row.id,
      kind: row.kind,
      invocation: { id: row.invocationId ?? 0, name: row.agentStart?.invocation_name ?? '' },
      files: row.agentStart?.files ?? [],
      ...(row.agentStart?.board_labels ? { board_labels: row.agentStart.board_labels } : {}),
      ...(row.agentStart?.requires_app ? { requires_app: row.agentStart.requires_app } : {}),
      ...(row.agentStart?.model_fingerprints ? { model_fingerprints: row.agentStart.model_fingerprints } : {}),
      ...(row.agentStart?.run ? { run: row.agentStart.run } : {}),
    });
  }

  /** Notes in the operation's live record that it runs on its board's agent. */
  private track(row: OperationRow): LiveOperation | undefined {
    if (!row.boardId || !isAgentKind(row.kind)) return undefined;
    const op = this.live.open(row.id);
    if (op) op.agent = { boardId: row.boardId, kind: row.kind, invocationId: row.invocationId, files: row.agentStart?.files ?? [] };
    return op;
  }

  /** The running agent operation this message may refer to, read from the database on a miss. */
  private async lookup(id: number): Promise<LiveOperation | 'final' | undefined> {
    const known = this.live.get(id);
    if (known?.agent) return known;
    if (this.live.hasEnded(id)) return 'final';
    const row = await findOperation(this.ctx.database.db, id);
    if (!row || !isAgentKind(row.kind)) return undefined;
    if (isFinal(row.status)) return 'final';
    if (row.status !== 'running') return undefined;
    return this.track(row) ?? 'final';
  }

  // ── messages from the agent ──────────────────────────────────────────────────────

  async onOperationMessage(conn: BoardLink, m: OperationMessage): Promise<void> {
    if (m.type === 'op.result') return this.handleOutcome(conn, m.outcome);
    const op = await this.lookup(m.op_id);
    if (op === 'final') return; // e.g. the tail of a run cancelled while the board was away
    if (!op || op.agent?.boardId !== conn.boardId) {
      conn.sendMessage({ type: 'error', code: 'unknown_operation', message: `no running operation ${m.op_id} for this board`, ref_type: m.type });
      return;
    }
    if (m.type === 'op.output') this.output.startEarly(conn, op, m);
    else if (m.type === 'op.progress') this.ops.reportProgress(m.op_id, m.progress);
    else await this.ops.appendAgentLog(m.op_id, m.stream, m.data, m.offset);
  }

  /** Handles an outcome once at a time per operation; a repeat for an ended operation is just acknowledged. */
  handleOutcome(conn: BoardLink, outcome: OperationOutcome): Promise<void> {
    const op = this.live.get(outcome.op_id);
    const run = (op?.outcome ?? Promise.resolve()).then(() => this.settleOutcomeWhileLinked(conn, outcome));
    if (!op) return run;
    const tracked = run.finally(() => {
      if (op.outcome === tracked) op.outcome = undefined;
    });
    op.outcome = tracked;
    return tracked;
  }

  /** settleOutcome, tried again until it is settled or, failing that, the operation is failed visibly (outcome-retry.ts). */
  private settleOutcomeWhileLinked(conn: BoardLink, outcome: OperationOutcome): Promise<void> {
    return settleOutcomeWithRetries({
      opId: outcome.op_id,
      settle: () => this.settleOutcome(conn, outcome),
      linked: () => conn.isOpen,
      giveUp: async (err) => {
        const why = err instanceof Error ? err.message : String(err);
        await this.ops.finish(outcome.op_id, 'failed', { ...(outcome.result ?? {}), reported_status: outcome.status }, {
          code: OUTCOME_NOT_SETTLED,
          message: `The board reported ${outcome.status}, but the server could not record it: ${why}`,
        });
        conn.sendMessage({ type: 'op.result.ack', op_id: outcome.op_id });
      },
      clock: this.clock,
      log: conn.log,
    });
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
      // A board lost mid-run reports the real end later: a note, not a second status.
      if (await noteLateResult(this.ctx.database.db, row, outcome, new Date(this.clock.now()))) conn.log.info({ op_id: id, status: outcome.status }, 'late outcome of an operation failed board_lost; kept as a note');
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
    // A board that ran the operation holds its input files: none is pushed to it again.
    if (status === 'succeeded') for (const f of row.agentStart?.files ?? []) conn.noteContentOnBoard(f.sha256);
    const result: Record<string, unknown> = { ...(outcome.result ?? {}) };
    // What the operation was about: the files of its op.start.
    result.files ??= row.agentStart?.files ?? [];
    const stats = this.live.get(id)?.stats;
    if (stats) {
      // Measured on this side of the link (since this server process started).
      result.bytes_sent = stats.bytesSent;
      result.wire_bytes_sent = stats.wireBytesSent;
      result.pulls = stats.pulls;
    }

    let received: StoredBlob | undefined;
    if (status === 'succeeded' && outcome.output) {
      // The output's bytes over the link, both attempts (an early pull and one by sha256) counted.
      const moved = { bytes: 0, wireBytes: 0 };
      try {
        received = await this.output.receive(conn, id, this.live.get(id), outcome.output, moved);
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
      result.output_bytes_received = moved.bytes;
      result.output_wire_bytes = moved.wireBytes;
      if (status === 'succeeded' && row.kind === 'execute') {
        // A health check's run never becomes the invocation's output video (docs/fleet.md).
        if (row.invocationId && row.healthCheckId === null) {
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
    if (status === 'succeeded' && outcome.results && row.kind === 'execute') {
      const results = await receiveRunResults({ ctx: this.ctx, output: this.output, note: (opId, text) => this.ops.appendLog(opId, 'server', text) }, conn, id, row.invocationId, outcome.results);
      if (results === 'link_closed') {
        conn.log.info({ op_id: id }, 'link closed while pulling results.jsonl; waiting for the agent to report again');
        return;
      }
      result.results = results;
    }
    // Each counted run, the summary per metric and the run's context (docs/results.md).
    if (row.kind === 'execute') Object.assign(result, describeRuns(result, row.agentStart?.context, row.agentStart?.requires_app));
    if (status !== 'succeeded' && !error) error = { code: status === 'cancelled' ? 'cancelled' : 'failed', message: `The board reported ${status}.` };
    await this.ops.finish(id, status, result, status === 'succeeded' ? null : error);
    ack();
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
      if (!row.agentStart) {
        // Claimed but never sent (the server stopped in between): snapshot and send now.
        await this.begin(row);
        continue;
      }
      await this.ops.appendLog(row.id, 'server', 'the board reconnected without this operation: starting it again\n');
      this.sendStart(conn, row);
    }
    for (const id of hello.running) {
      const op = await this.lookup(id);
      if (op === 'final' || op === undefined || op.agent?.boardId !== conn.boardId) {
        conn.sendMessage({ type: 'op.cancel', op_id: id });
      } else if (this.ops.isCancelRequested(id) || (await this.cancelStored(id))) {
        conn.sendMessage({ type: 'op.cancel', op_id: id });
      }
    }
  }

  /** A cancel asked for before a restart (stored with the operation). */
  private async cancelStored(id: number): Promise<boolean> {
    const row = await findOperation(this.ctx.database.db, id);
    return row?.cancelRequestedAt != null;
  }

  // ── transfer statistics ──────────────────────────────────────────────────────────

  mayPullContent(boardId: string, sha256: string): boolean {
    const op = this.live.agentOnBoard(boardId);
    return op !== undefined && fileOf(op, sha256) !== undefined;
  }

  /** A pull of content by this board began (`size` total, from `offset`): noted in the log. */
  onServing(boardId: string, pull: PullMessage, size: number): void {
    if (pull.source.kind !== 'content') return;
    const op = this.live.agentOnBoard(boardId);
    if (op === undefined) return;
    const sha = pull.source.sha256;
    const file = fileOf(op, sha);
    const name = file?.filename ?? sha.slice(0, 12);
    const text =
      pull.offset > 0
        ? `sending ${name}: resuming at byte ${pull.offset} of ${size}\n`
        : `sending ${name} (${size} bytes)\n`;
    void this.ops.appendLog(op.id, 'server', text);
  }

  onServed(boardId: string, pull: PullMessage, bytes: number, ok: boolean, wireBytes = bytes, pushed = false): void {
    if (pull.source.kind !== 'content') return;
    const op = this.live.agentOnBoard(boardId);
    if (op === undefined) return;
    const s = (op.stats ??= { bytesSent: 0, wireBytesSent: 0, pulls: [] });
    s.bytesSent += bytes;
    s.wireBytesSent += wireBytes;
    s.pulls.push({ filename: fileOf(op, pull.source.sha256)?.filename ?? null, sha256: pull.source.sha256, offset: pull.offset, bytes, wire_bytes: wireBytes, complete: ok, ...(pushed ? { pushed } : {}) });
  }
}

function fileOf(op: LiveOperation, sha256: string): FileRef | undefined {
  return op.agent?.files.find((f) => f.sha256 === sha256);
}

