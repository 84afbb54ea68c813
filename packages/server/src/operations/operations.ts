import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import { ConflictError, notFound } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { StoreContext } from '../store-context.ts';
import type { Db } from '../db/database.ts';
import { AgentOperations } from './agent-operations.ts';
import { BoardQueue } from './board-queue.ts';
import type { LogEventData, OperationEventLog } from './event-log.ts';
import { isAgentKind, type OperationKindRegistry } from './kinds.ts';
import type { FinalStatus, OperationLifecycle } from './lifecycle.ts';
import {
  isFinal,
  toOperationObject,
  type OperationError,
  type OperationObject,
  type OperationProgress,
  type OperationRow,
} from './operation-object.ts';
import { LiveOperations, type LiveOperation } from './live-operations.ts';
import { OperationRecorder } from './operation-recorder.ts';
import { replaceNul } from './replace-nul.ts';
import { ServerRuns } from './server-runs.ts';
import {
  assignBoard,
  assignToBoard,
  boardLoads,
  boardsWithQueuedWork,
  busyBoardIds,
  cancelQueued,
  claimNextQueued,
  expiredQueued,
  claimQueued,
  findOperation,
  finishOperation,
  insertOperation,
  insertOperationsUnderLock,
  insertOrJoinQueued,
  markCancelRequested,
  listOperationRows,
  releaseStrandedAssignments,
  requeueRunning,
  runningOperations,
  unfinishedOperations,
  type AssignableBoard,
  type NewOperation,
  type OperationFilters,
} from './store.ts';
import type { BoardSelector } from '../boards/board-selector.ts';

/** The error message of a run whose board did not confirm a cancel within MM_CANCEL_GRACE_S (power/ counts it as a hang). */
export const CANCEL_UNCONFIRMED_MESSAGE = 'Cancelled; the board did not confirm in time.';

/** Background writes that fail (the database is away) are retried after 0.25 s, doubling up to this. */
const RETRY_MAX_DELAY_MS = 30_000;
const RETRY_FIRST_DELAY_MS = 250;

export type { FinalStatus } from './lifecycle.ts';
export type { AssignableBoard } from './store.ts';

/** What a new operation is: its kind, board (or selector), invocation, params and fleet scheduling. */
export interface NewOperationInput {
  kind: string;
  boardId: string | null;
  invocationId?: number | null;
  params?: Record<string, unknown>;
  /** Fleet scheduling (fleet/scheduler.ts): what a board must hold, its priority, how long it may wait, the health check it runs. */
  boardSelector?: Record<string, string> | null;
  priority?: number;
  /** How long it may wait queued (from now, on the injected clock); its `queue_deadline`. */
  queueTimeoutMs?: number | null;
  healthCheckId?: number | null;
  /** Who asked for it, when not the request's user (a rollout's step: the rollout's creator). */
  createdBy?: string | null;
}

/**
 * The fleet scheduler's ears (fleet/scheduler.ts), called by this process only: new selector
 * work, and a board whose operation ended here. One call per event: the scheduler is woken
 * by these, not by the bus.
 */
export interface SchedulingHooks {
  /** Selector work was created here: a pass over the idle boards that match it. */
  workCreated(selector: BoardSelector): void;
  /** An operation of this board ended here (stored; `row` is its final row): the board is free. */
  boardFreed(row: OperationRow): void;
}

export interface OperationsDeps extends StoreContext {
  agents: BoardLinks;
  bus: EventBus;
  events: OperationEventLog;
  kinds: OperationKindRegistry;
  /** Time for the cancel grace, retries, the progress throttle and waits (tests pass a ManualClock). */
  clock?: Clock;
}

/**
 * Operations: everything that touches a board. Stored in the database with their events;
 * one at a time per board (FIFO by id), started by the board queue when the board is
 * online, idle and not rebooting; `transfer`/`execute` run on the agent
 * (agent-operations.ts), registered kinds on the server (server-runs.ts, kinds.ts).
 *
 * This class owns every status change (queued → running → succeeded/failed/cancelled, each
 * one conditional UPDATE of store.ts) and the one live record per operation that holds
 * what this process keeps for it (live-operations.ts): `finish` drops the record whole.
 * An operation may be created without a board: it waits, queued, until `assign` gives it one.
 */
export class Operations implements OperationLifecycle {
  readonly events: OperationEventLog;
  private readonly queue = new BoardQueue(
    (boardId) => this.startNext(boardId),
    (err, boardId) => this.ctx.log.error({ err, board_id: boardId }, 'could not start the next operation'),
  );
  /** What this process holds per live operation. */
  readonly live = new LiveOperations();
  /** The fleet scheduler, when one runs here (it sets and clears this). */
  scheduling: SchedulingHooks | undefined;
  private readonly clock: Clock;
  private stopping = false;
  /** Progress and log of the live operations. */
  private readonly record: OperationRecorder;
  /** `transfer` and `execute`: the hub's BoardWork (op messages, hello settling, pull statistics). */
  readonly agent: AgentOperations;
  /** Registered kinds, run on the server. */
  readonly server: ServerRuns;
  constructor(private readonly ctx: OperationsDeps) {
    this.events = ctx.events;
    this.clock = ctx.clock ?? systemClock;
    this.record = new OperationRecorder({ ...ctx, live: this.live, clock: this.clock });
    this.agent = new AgentOperations(this, this.live, ctx, this.clock);
    this.server = new ServerRuns(this, this.live, { agents: ctx.agents, kinds: ctx.kinds, log: ctx.log, clock: this.clock });
    // For the server's lifetime: a board that drops during shutdown still ends what it was asked to cancel.
    ctx.bus.subscribe('board.status', undefined, ({ boardId, status }) => {
      // (Another replica's link closing says nothing about a link here.)
      if (status === 'offline') {
        if (!ctx.agents.connection(boardId)) this.onBoardOffline(boardId);
      } else this.queue.kick(boardId);
    });
    // Work queued through any replica: the one holding the board's link starts it.
    ctx.bus.subscribe('board.work', undefined, ({ boardId }) => this.queue.kick(boardId));
    // A cancel asked for through another replica, of a run this one holds.
    ctx.bus.subscribe('operation.cancel', undefined, ({ operationId }) => {
      this.onCancelAsked(operationId).catch((err: unknown) => ctx.log.warn({ err, op_id: operationId }, 'could not pass a cancel on to the board'));
    });
  }

  /** Asks the replica holding the board's link (this one included) to look at its queue. */
  private announceWork(boardId: string): void {
    this.ctx.bus.publish('board.work', boardId, { boardId });
  }

  /** After missed bus messages: every board linked here looks at its queue again. */
  async resync(): Promise<void> {
    for (const boardId of await boardsWithQueuedWork(this.ctx.database.db)) {
      if (this.ctx.agents.canRun(boardId)) this.queue.kick(boardId);
    }
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  // ── startup and shutdown ─────────────────────────────────────────────────────────

  /**
   * After a restart: agent operations that were running stay running (their agent settles
   * them when it says hello); server-side runs were lost, so each is failed
   * (`server_restarted`) or queued again, as its kind says; queued work waits for its board.
   */
  async recover(): Promise<void> {
    for (const op of await runningOperations(this.ctx.database.db)) {
      if (isAgentKind(op.kind)) continue;
      // Another replica's run (several replicas on one database): not this restart's to settle.
      const runner = op.runnerReplica;
      if (runner !== null && runner !== this.ctx.agents.replicaId && (await this.ctx.agents.isReplicaAlive(runner))) continue;
      await this.settleLostRun(op, 'The server restarted while this operation ran on it.');
    }
    for (const boardId of await boardsWithQueuedWork(this.ctx.database.db)) this.queue.kick(boardId);
  }

  /** A server-side run whose process is gone: failed (`server_restarted`) or queued again, as its kind says. */
  private async settleLostRun(op: OperationRow, message: string): Promise<void> {
    const policy = this.ctx.kinds.get(op.kind)?.onServerRestart ?? 'fail';
    if (policy === 'requeue') {
      const row = await requeueRunning(this.ctx.database.db, op.id);
      if (row) {
        await this.events.append(op.id, 'status', { status: 'queued', reason: 'server_restarted' });
        if (row.boardId) this.announceWork(row.boardId);
      }
    } else {
      await this.finish(op.id, 'failed', null, { code: 'server_restarted', message });
    }
  }

  /** Runs seen orphaned once (their replica gone): settled if still so at the next look. */
  private readonly orphanSuspects = new Set<number>();

  /**
   * Several replicas: server-side runs of a replica that died (its listening connection is
   * gone, twice in a row, so a reconnecting replica is not mistaken for a dead one) are
   * settled by whichever replica looks, as a restart would.
   */
  async settleOrphanedRuns(): Promise<void> {
    const seen = new Set<number>();
    for (const op of await runningOperations(this.ctx.database.db)) {
      if (isAgentKind(op.kind)) continue;
      const runner = op.runnerReplica;
      if (runner === null || runner === this.ctx.agents.replicaId) continue;
      if (await this.ctx.agents.isReplicaAlive(runner)) continue;
      seen.add(op.id);
      if (!this.orphanSuspects.has(op.id)) continue;
      this.ctx.log.warn({ op_id: op.id, kind: op.kind, replica: runner }, 'the replica running this operation is gone; settling it');
      await this.settleLostRun(op, 'The replica that ran this operation stopped.');
    }
    this.orphanSuspects.clear();
    for (const id of seen) this.orphanSuspects.add(id);
  }

  /** Shutdown, part 1: no operation starts any more, server-side runs stop. */
  stop(): void {
    this.stopping = true;
    this.server.abortAll();
    for (const op of this.live.values()) this.clock.clearTimeout(op.cancel?.grace);
  }

  /** Shutdown, part 2 (after the links closed): everything held back is stored. */
  async drain(): Promise<void> {
    await this.queue.idle();
    await this.record.storeHeldProgress();
    await this.events.flush();
  }

  // ── create, read ─────────────────────────────────────────────────────────────────

  /** The stored form of a new operation; its queue deadline computed here, once, on the injected clock. */
  private toNew(input: NewOperationInput): NewOperation {
    if (!this.ctx.kinds.isKnown(input.kind)) throw new Error(`unknown operation kind ${input.kind}`);
    const timeout = input.queueTimeoutMs;
    return {
      kind: input.kind,
      boardId: input.boardId,
      invocationId: input.invocationId ?? null,
      params: input.params ?? {},
      boardSelector: input.boardSelector ?? null,
      priority: input.priority ?? 0,
      queueDeadline: timeout === undefined || timeout === null ? null : new Date(this.clock.now() + timeout),
      healthCheckId: input.healthCheckId ?? null,
      ...(input.createdBy !== undefined ? { createdBy: input.createdBy } : {}),
    };
  }

  /**
   * A queued operation. Named to a board, that board's queue is told; with a selector (board
   * null), the fleet scheduler is (`scheduling.workCreated`); with neither it waits until
   * `assign` gives it a board.
   */
  async create(input: NewOperationInput): Promise<OperationObject> {
    const row = await insertOperation(this.ctx.database.db, this.toNew(input));
    return this.announceCreated(row);
  }

  /**
   * Like `create`, but a request that repeats one still waiting last in its board's queue
   * (same kind, board, invocation and parameters) answers that operation instead of queueing
   * another (store.ts `insertOrJoinQueued`): a PAC list asked for twice is listed once.
   */
  async createOrJoin(input: NewOperationInput & { boardId: string }): Promise<OperationObject> {
    const { row, joined } = await insertOrJoinQueued(this.ctx.database.db, { ...this.toNew(input), boardId: input.boardId });
    return joined ? toOperationObject(row) : this.announceCreated(row);
  }

  /**
   * Many queued operations in one statement, chosen by `pick` inside a transaction that holds
   * the advisory lock `lockName` (one replica at a time; the others create nothing this round):
   * fleet/health-checks.ts creates the due check runs so.
   */
  async createUnderLock(lockName: string, pick: (tx: Db) => Promise<NewOperationInput[]>): Promise<OperationObject[]> {
    const rows = await insertOperationsUnderLock(this.ctx.database.db, lockName, async (tx) => (await pick(tx)).map((input) => this.toNew(input)));
    const out: OperationObject[] = [];
    for (const row of rows) out.push(await this.announceCreated(row));
    return out;
  }

  /**
   * Work that must not wait in its board's queue (power/: the board may be off, hung, or busy
   * with the run that hung it): a server-side kind, stored and started at once by this
   * replica whatever the board runs or its link says. Its board's queue holds meanwhile.
   */
  async runNow(input: { kind: string; boardId: string; params?: Record<string, unknown> }): Promise<OperationObject> {
    if (isAgentKind(input.kind) || !this.ctx.kinds.isKnown(input.kind)) throw new Error(`runNow takes a registered server-side kind, not ${input.kind}`);
    const db = this.ctx.database.db;
    const row = await insertOperation(db, { kind: input.kind, boardId: input.boardId, invocationId: null, params: input.params ?? {} });
    this.events.startNew(row.id);
    await this.events.append(row.id, 'status', { status: 'queued' });
    const claimed = await claimQueued(db, row.id, this.ctx.agents.replicaId, input.boardId);
    // Taken by the board's own queue meanwhile (it was idle): it runs from there.
    if (!claimed) return toOperationObject((await findOperation(db, row.id)) ?? row);
    await this.events.append(claimed.id, 'status', { status: 'running' });
    this.server.begin(claimed);
    return toOperationObject(claimed);
  }

  /**
   * The seam of a scheduler that chooses the board at dispatch time: gives a queued
   * operation without a board its board, whose queue then takes it in turn. Undefined if it
   * already has one or is no longer queued.
   */
  async assign(id: number, boardId: string): Promise<OperationObject | undefined> {
    const row = await assignBoard(this.ctx.database.db, id, boardId);
    if (!row) return undefined;
    this.announceWork(boardId);
    return toOperationObject(row);
  }

  /** A new operation's first event; its board's queue, or the fleet scheduler, is told. */
  private async announceCreated(row: OperationRow): Promise<OperationObject> {
    this.events.startNew(row.id);
    await this.events.append(row.id, 'status', { status: 'queued' });
    if (row.boardId !== null) this.announceWork(row.boardId);
    else if (row.boardSelector) this.scheduling?.workCreated(row.boardSelector);
    return toOperationObject(row);
  }

  // ── fleet scheduling (fleet/scheduler.ts decides; the rows change here) ─────────

  /**
   * Gives the board the best waiting selector operation its labels hold, if the board is still
   * free (store.ts `assignToBoard`: safe across replicas); then the `assigned` event, and the
   * board's queue takes it. The operation's row, or undefined when the board took nothing.
   */
  async assignNext(board: AssignableBoard, opts: { waitForLock?: boolean } = {}): Promise<OperationRow | undefined> {
    // The board's link is here: the assignment claims the operation too (one transaction, and
    // no `board.work` round trip to this same replica's queue).
    const claimHere = !this.stopping && this.ctx.agents.canRun(board.id);
    const at = new Date(this.clock.now());
    const row = await assignToBoard(this.ctx.database.db, board, { ...opts, at, ...(claimHere ? { claimAs: this.ctx.agents.replicaId } : {}) });
    if (!row?.boardId) return undefined;
    if (row.status === 'running') {
      // Started in the board's turn, as its queue starts work, not inside the scheduler's pass.
      this.queue.run(row.boardId, () => this.begin(row, { assigned: true }));
      return row;
    }
    await this.events.append(row.id, 'assigned', { board_id: row.boardId });
    this.announceWork(row.boardId);
    return row;
  }

  /** Selector work assigned to boards that can no longer take it (offline, maintenance, `bad`) waits for a board again; their ids. */
  releaseStranded(sessionStaleMs: number): Promise<number[]> {
    return releaseStrandedAssignments(this.ctx.database.db, sessionStaleMs, new Date(this.clock.now()));
  }

  /** Queued operations past their queue deadline (on the injected clock) fail with `queue_timeout`; how many. */
  async expireQueued(): Promise<number> {
    let n = 0;
    for (const id of await expiredQueued(this.ctx.database.db, new Date(this.clock.now()))) {
      if (await this.finish(id, 'failed', null, { code: 'queue_timeout', message: 'No board took it before its queue timeout.' })) n++;
    }
    return n;
  }

  /** Per board: the operation it runs and how many wait for it (the board object's `current_operation_id` and `queued`). */
  boardLoads(boardIds: string[]): Promise<Map<string, { running: number | null; queued: number }>> {
    return boardLoads(this.ctx.database.db, boardIds);
  }

  async get(id: number): Promise<OperationObject | undefined> {
    const row = await findOperation(this.ctx.database.db, id);
    return row && toOperationObject(row);
  }

  async require(id: number): Promise<OperationObject> {
    const op = await this.get(id);
    if (!op) throw notFound.operation(id);
    return op;
  }

  async list(filters: OperationFilters, page: { limit: number; offset: number }): Promise<{ operations: OperationObject[]; total: number }> {
    const { rows, total } = await listOperationRows(this.ctx.database.db, filters, page);
    return { operations: rows.map(toOperationObject), total };
  }

  /** Which of these boards run an operation now (their `busy` flag). */
  busyBoards(boardIds: string[]): Promise<Set<string>> {
    return busyBoardIds(this.ctx.database.db, boardIds);
  }

  /** Kicks the board's queue (e.g. after a reboot watch ended elsewhere). */
  kick(boardId: string): void {
    this.queue.kick(boardId);
  }

  // ── waiting ──────────────────────────────────────────────────────────────────────

  /** The operation once it has ended, or undefined if it is still going after `timeoutMs`. */
  async waitForEnd(id: number, timeoutMs: number, signal?: AbortSignal): Promise<OperationObject | undefined> {
    let unsubscribe: (() => void) | undefined;
    let timer: TimerHandle | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const ended = new Promise<OperationObject | undefined>((resolve) => {
        // The `end` event carries the final operation: no need to read it again.
        unsubscribe = this.events.subscribe(id, (e) => {
          if (e.type === 'end') resolve(e.data as OperationObject);
        });
        timer = this.clock.setTimeout(() => resolve(undefined), timeoutMs);
        if (signal) {
          onAbort = () => resolve(undefined);
          signal.addEventListener('abort', onAbort, { once: true });
        }
      });
      // Subscribed before looking, so an end between the two is not missed.
      const now = await this.get(id);
      if (!now || isFinal(now.status)) return now;
      return await ended;
    } finally {
      unsubscribe?.();
      this.clock.clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  // ── the board queue ──────────────────────────────────────────────────────────────

  /** Starts the board's oldest queued operation if it runs nothing (claimNextQueued: safe across replicas). */
  private async startNext(boardId: string): Promise<void> {
    if (this.stopping || !this.ctx.agents.canRun(boardId)) return;
    // Server-side runs note their replica: a restart of another one leaves them alone.
    const claimed = await claimNextQueued(this.ctx.database.db, boardId, this.ctx.agents.replicaId, new Date(this.clock.now()));
    if (claimed) await this.begin(claimed);
  }

  /** A claimed operation starts (`assigned`: claimed by its assignment, whose event comes first). */
  private async begin(claimed: OperationRow, opts: { assigned?: boolean } = {}): Promise<void> {
    // Appended in the same tick: stored in one write.
    await Promise.all([
      ...(opts.assigned ? [this.events.append(claimed.id, 'assigned', { board_id: claimed.boardId })] : []),
      this.events.append(claimed.id, 'status', { status: 'running' }),
    ]);
    if (isAgentKind(claimed.kind)) await this.agent.begin(claimed);
    else this.server.begin(claimed);
  }

  // ── progress, log, end ───────────────────────────────────────────────────────────

  reportProgress(id: number, progress: OperationProgress): void {
    this.record.reportProgress(id, progress);
  }

  appendLog(id: number, stream: LogEventData['stream'], data: string): Promise<void> {
    return this.record.appendLog(id, stream, data);
  }

  appendAgentLog(id: number, stream: 'stdout' | 'stderr' | 'agent', data: string, offset: number | undefined): Promise<void> {
    return this.record.appendAgentLog(id, stream, data, offset);
  }

  /**
   * Ends a queued or running operation (a no-op if it already ended, so outcomes are
   * idempotent): stores it, then its `status` and `end` events, and lets the board go on.
   */
  async finish(id: number, status: FinalStatus, result: unknown, error: OperationError | null): Promise<OperationObject | undefined> {
    // The last progress held back by the throttle goes into the same row update and event write.
    const held = this.live.get(id);
    const progress = held && (await this.record.takeProgress(held));
    const row = await finishOperation(this.ctx.database.db, id, replaceNul({ status, result, error, ...(progress ? { progress } : {}) }));
    // Stored (or it had ended before): what this process held for it goes, all at once.
    const live = this.live.close(id);
    if (live) this.release(live);
    if (!row) return undefined;
    // The fleet scheduler hears of the idle board at once, not after the events are stored.
    if (row.boardId) this.scheduling?.boardFreed(row);
    // The kept tail of a log that outgrew its cap, before the status and end events.
    this.record.storeLogTail(id, live);
    const op = toOperationObject(row);
    // Queued together, so they are stored in one write.
    await Promise.all([
      ...(progress ? [this.events.append(id, 'progress', { ...progress, at: new Date().toISOString() })] : []),
      this.events.append(id, 'status', { status, ...(error ? { error } : {}) }),
      this.events.append(id, 'end', op),
    ]);
    this.ctx.log.info({ op_id: id, kind: op.kind, board_id: op.board_id, status, error: error ?? undefined }, 'operation ended');
    if (row.boardId) this.announceWork(row.boardId);
    return op;
  }

  /** Lets go of the timers and bytes an ended operation's record held. */
  private release(op: LiveOperation): void {
    this.clock.clearTimeout(op.cancel?.grace);
    this.clock.clearTimeout(op.progress?.timer);
    this.agent.output.drop(op);
  }

  /**
   * `finish` for callers that cannot wait for it (timers, link events): a failure (the
   * database is away) is logged and retried with a capped exponential backoff until it
   * lands or the server stops, never left as an unhandled rejection.
   */
  finishEventually(id: number, status: FinalStatus, result: unknown, error: OperationError | null): void {
    let delay = RETRY_FIRST_DELAY_MS;
    const attempt = () => {
      this.finish(id, status, result, error).catch((err: unknown) => {
        if (this.stopping) {
          this.ctx.log.error({ err, op_id: id, status }, 'could not store the end of an operation; the server is stopping');
          return;
        }
        this.ctx.log.warn({ err, op_id: id, status, retry_in_ms: delay }, 'could not store the end of an operation; retrying');
        this.clock.setTimeout(attempt, delay).unref();
        delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS);
      });
    };
    attempt();
  }

  // ── cancel ───────────────────────────────────────────────────────────────────────

  /**
   * Cancels an operation: a queued one at once; a running one on an online board is asked
   * to stop and becomes `cancelled` when the board (or the server-side run) confirms, or
   * after MM_CANCEL_GRACE_S; a running one on an offline board at once (the agent is told
   * when it comes back). 409 `operation_finished` if it already ended.
   */
  async cancel(id: number): Promise<OperationObject> {
    const db = this.ctx.database.db;
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await findOperation(db, id);
      if (!row) throw notFound.operation(id);
      if (isFinal(row.status)) {
        throw new ConflictError('operation_finished', `Operation ${id} already ended (${row.status}).`, { operation: toOperationObject(row) });
      }
      if (row.status === 'queued') {
        // Only a row still queued is cancelled here; one claimed meanwhile is handled as running.
        const cancelled = await cancelQueued(db, id, { code: 'cancelled', message: 'Cancelled before it started.' });
        if (!cancelled) continue;
        const live = this.live.close(id);
        if (live) this.release(live);
        const op = toOperationObject(cancelled);
        // An assigned selector operation that had not started: its board is free for the next.
        if (cancelled.boardId) this.scheduling?.boardFreed(cancelled);
        await Promise.all([this.events.append(id, 'status', { status: 'cancelled', error: op.error }), this.events.append(id, 'end', op)]);
        return op;
      }
      await this.cancelRunning(row);
      return (await this.get(id)) ?? toOperationObject(row);
    }
    return this.require(id);
  }

  private async cancelRunning(row: OperationRow): Promise<void> {
    if (this.isCancelRequested(row.id)) return;
    const cancelledError = { code: 'cancelled', message: 'Cancelled while running.' };
    const onAgent = isAgentKind(row.kind);
    const conn = onAgent && row.boardId ? this.ctx.agents.connection(row.boardId) : undefined;
    if (onAgent ? !conn : !this.server.isRunning(row.id)) {
      const elsewhere = await this.runnerElsewhere(row);
      if (elsewhere) {
        await this.cancelElsewhere(row);
        return;
      }
      // Nobody to ask (board offline, or a run no live replica has): cancelled now.
      await this.finish(row.id, 'cancelled', null, cancelledError);
      return;
    }
    // Stored before anything is asked (a database failure here is the client's 5xx, nothing acted on),
    // so the request outlives this process: a board that reports the run later gets op.cancel.
    await markCancelRequested(this.ctx.database.db, row.id);
    // Recorded before asking, so a run that stops at once is seen as cancelled, not failed.
    this.armCancelGrace(row, onAgent);
    if (conn) conn.sendMessage({ type: 'op.cancel', op_id: row.id });
    else this.server.abort(row.id);
    await this.appendLog(row.id, 'server', 'cancel requested\n');
  }

  /**
   * Whether another live replica runs it: an agent operation's board is linked there; a
   * server-side run was claimed by a replica that still holds the board's link.
   */
  private async runnerElsewhere(row: OperationRow): Promise<boolean> {
    if (!row.boardId) return false;
    const holder = await this.ctx.agents.holderElsewhere(row.boardId);
    if (!holder) return false;
    if (isAgentKind(row.kind)) return true;
    const runner = row.runnerReplica;
    return runner === null || runner === holder;
  }

  /**
   * The run lives on another replica: the request is stored (cancel_requested), then that
   * replica is told (`operation.cancel`) and asks the board. This one keeps the same grace
   * timer, so the operation ends even if that replica dies meanwhile.
   */
  private async cancelElsewhere(row: OperationRow): Promise<void> {
    await markCancelRequested(this.ctx.database.db, row.id);
    this.armCancelGrace(row, false);
    this.ctx.bus.publish('operation.cancel', row.id, { operationId: row.id, boardId: row.boardId });
  }

  /**
   * The cancel grace (MM_CANCEL_GRACE_S): the operation becomes `cancelled` when it fires,
   * unless the board (or the run) confirmed first; noted in its live record.
   */
  private armCancelGrace(row: OperationRow, onAgent: boolean): void {
    const op = this.live.open(row.id);
    if (!op) return; // it ended meanwhile
    const grace = this.clock.setTimeout(() => {
      this.finishEventually(row.id, 'cancelled', null, { code: 'cancelled', message: CANCEL_UNCONFIRMED_MESSAGE });
    }, this.ctx.config.cancelGraceMs);
    grace.unref();
    op.cancel = { boardId: row.boardId, onAgent, grace };
  }

  /** Another replica asked to cancel a run: if this one holds it, the board (or the run) is asked to stop. */
  private async onCancelAsked(id: number): Promise<void> {
    if (this.isCancelRequested(id)) return; // asked here (or already passed on)
    const row = await findOperation(this.ctx.database.db, id);
    if (!row || row.status !== 'running') return;
    const mine = isAgentKind(row.kind) ? row.boardId !== null && this.ctx.agents.connection(row.boardId) !== undefined : this.server.isRunning(id);
    if (mine) await this.cancelRunning(row);
  }

  isCancelRequested(id: number): boolean {
    return this.live.get(id)?.cancel !== undefined;
  }

  /** The board dropped: operations it was asked to cancel are cancelled now (it is told again on hello). */
  private onBoardOffline(boardId: string): void {
    for (const op of this.live.values()) {
      if (op.cancel?.boardId === boardId && op.cancel.onAgent) {
        this.finishEventually(op.id, 'cancelled', null, { code: 'cancelled', message: 'Cancelled while running.' });
      }
    }
  }

  /** Cancels every queued or running operation of an invocation and waits (a while) for them to end. */
  async cancelOperationsOf(invocationId: number, waitMs = 10_000): Promise<void> {
    const open = await unfinishedOperations(this.ctx.database.db, { invocationId });
    await this.cancelAndWait(open, waitMs);
  }

  /** The board is being deleted: all its work ends now, as `cancelled` (its agent is told, if it listens). */
  async cancelOperationsOfBoard(boardId: string): Promise<void> {
    const conn = this.ctx.agents.connection(boardId);
    for (const op of await unfinishedOperations(this.ctx.database.db, { boardId })) {
      if (op.status === 'running') {
        if (isAgentKind(op.kind)) conn?.sendMessage({ type: 'op.cancel', op_id: op.id });
        else this.server.abort(op.id);
      }
      await this.finish(op.id, 'cancelled', null, { code: 'board_deleted', message: 'The board was deleted.' });
    }
  }

  private async cancelAndWait(open: OperationRow[], waitMs: number): Promise<void> {
    for (const op of open) {
      try {
        await this.cancel(op.id);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    await Promise.all(
      open.map(async (op) => {
        const ended = await this.waitForEnd(op.id, waitMs);
        if (!ended) await this.finish(op.id, 'cancelled', null, { code: 'cancelled', message: 'Cancelled.' });
      }),
    );
  }
}
