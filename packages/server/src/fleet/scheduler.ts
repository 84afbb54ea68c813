import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import type { Operations } from '../operations/operations.ts';
import { matchesSelector, type BoardSelector } from './board-selector.ts';
import { checksOfBoard, healthCheckIdOf, insertDueCheckRuns, newCheckRun, refreshBoardHealth } from './health-checks.ts';
import { anyBoardMatches, anyWaitingFor, assignToBoard, clearStaleBusy, expiredQueued, idleBoards, markIdleSince, releaseStrandedAssignments, waitingSelectors, type IdleBoard } from './scheduler-store.ts';

/** Boards assigned at once in one pass (each a short transaction of its own). */
const PASS_CONCURRENCY = 4;

export interface FleetSchedulerDeps {
  db: Db;
  bus: EventBus;
  operations: Operations;
  log: Logger;
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  /** MM_QUEUE_TIMEOUT_S in ms: health-check runs wait at most this long too. */
  queueTimeoutMs: number;
  /** MM_SCHEDULER_SWEEP_S in ms: the periodic pass (timeouts, due checks, stranded work, dispatch). */
  sweepMs: number;
  clock?: Clock;
}

/**
 * The fleet scheduler (docs/fleet.md): gives waiting selector work its board. Every replica
 * runs one; they coordinate only through PostgreSQL (scheduler-store.ts), so any of them may
 * dispatch any operation, and each dispatch is safe against the others.
 *
 * A dispatch pass takes the idle eligible boards, longest idle first, keeps those matching
 * some waiting selector, and for each asks the database for the best waiting operation its
 * labels satisfy (priority, then age). Its cost follows the number of idle boards and of
 * distinct waiting selectors, not the number of boards or of waiting operations: busy boards
 * are kept out of the idle-board index (`boards.scheduler_busy`), a pass for new work
 * stops after as many boards as operations were created, and a pass stops walking the boards
 * of a selector once one of them found nothing left for it.
 *
 * Triggers: new selector work (`kick`), a board online or ready again, an operation ended on
 * this replica (its board is idle), maintenance or health changes, and the sweep.
 */
export class FleetScheduler {
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  /** Asks gathered for the next pass; `newWork` counts the selector kicks (one new operation each). */
  private pending = FleetScheduler.nothingPending();
  private static nothingPending(): { full: boolean; boards: Set<string>; selectors: Map<string, BoardSelector>; newWork: number } {
    return { full: false, boards: new Set(), selectors: new Map(), newWork: 0 };
  }
  private stopped = false;
  private sweeping: Promise<void> | undefined;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(private readonly deps: FleetSchedulerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  start(): void {
    this.unsubscribe.push(
      // Online, or back from a reboot: that board may take work.
      this.deps.bus.subscribe('board.status', undefined, ({ boardId, status }) => {
        if (status !== 'offline') this.kick({ boardId });
      }),
      this.deps.bus.subscribe('operation.event', undefined, ({ event }) => {
        if (event.type === 'end') this.onEnded(event.data as OperationObject);
      }),
    );
    this.deps.operations.onBoardFreed = (boardId) => this.kick({ boardId });
    this.timer = this.clock.setInterval(() => void this.sweep(), this.deps.sweepMs);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearInterval(this.timer);
    this.deps.operations.onBoardFreed = undefined;
    for (const u of this.unsubscribe.splice(0)) u();
    await this.running;
    await this.sweeping;
  }

  /**
   * Asks for a dispatch pass: one runs at a time; asks during one are gathered for the next.
   * Without a target, a full pass; with one, a pass over that board (it became idle) or over
   * the idle boards matching that selector (new work): the cheap common case.
   */
  kick(target?: { boardId: string } | { selector: BoardSelector }): void {
    if (this.stopped) return;
    if (!target) this.pending.full = true;
    else if ('boardId' in target) this.pending.boards.add(target.boardId);
    else {
      this.pending.selectors.set(JSON.stringify(target.selector), target.selector);
      this.pending.newWork++;
    }
    if (this.running) return;
    this.running = (async () => {
      try {
        while (!this.stopped && (this.pending.full || this.pending.boards.size || this.pending.selectors.size)) {
          const { full, boards, selectors, newWork } = this.pending;
          this.pending = FleetScheduler.nothingPending();
          if (full) await this.dispatch();
          else {
            if (boards.size) await this.dispatch({ boardIds: [...boards] });
            // N new operations need N boards at most: the idle-board walk stops there.
            if (selectors.size) await this.dispatch({ selectors: [...selectors.values()], limit: newWork });
          }
        }
      } catch (err) {
        this.deps.log.warn({ err }, 'fleet scheduler: a dispatch pass failed');
      } finally {
        this.running = undefined;
      }
    })();
  }

  /** `POST /api/boards/<id>/health-check/`: a run of each check the board matches, queued ahead of its other work. */
  async runHealthChecksNow(boardId: string): Promise<OperationObject[]> {
    const checks = await checksOfBoard(this.deps.db, boardId);
    const deadline = new Date(Date.now() + this.deps.queueTimeoutMs);
    const out: OperationObject[] = [];
    for (const check of checks) out.push(await this.deps.operations.create(newCheckRun(check, boardId, deadline)));
    return out;
  }

  /** Whether any registered board could ever take work with this selector (else `no_matching_board`). */
  anyBoardMatches(selector: Record<string, string>): Promise<boolean> {
    return anyBoardMatches(this.deps.db, selector);
  }

  /** Resolves when no dispatch pass runs (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * One pass: each idle eligible board (all, or only those named or matching), longest idle
   * first, takes the best waiting operation it matches. Returns how many were assigned.
   */
  async dispatch(only?: { boardIds?: string[]; selectors?: BoardSelector[]; limit?: number }): Promise<number> {
    const { db } = this.deps;
    const selectors = await waitingSelectors(db);
    if (selectors.length === 0) return 0;
    const found = await idleBoards(db, this.deps.sessionStaleMs, only);
    // The selectors whose work may still wait: one a board took nothing for (while nothing else
    // holds such work) has none left, and boards only it matches are not walked in vain. Without
    // this, a pass whose new work another replica had already taken walked every idle board of
    // its selector, a transaction each, and delayed the passes behind it by seconds.
    const open = new Map(selectors.map((s) => [JSON.stringify(s), s]));
    const wanted = (b: IdleBoard) => [...open.values()].some((s) => matchesSelector(b.labels, s));
    const boards = found.filter(wanted);
    // Boards in order, a few at a time (each has its own lock; SKIP LOCKED keeps their picks apart).
    let assigned = 0;
    let next = 0;
    const announced: Array<Promise<void>> = [];
    const worker = async () => {
      while (next < boards.length && !this.stopped && open.size > 0) {
        const board = boards[next++]!;
        if (!wanted(board)) continue;
        const row = await assignToBoard(db, board, { waitForLock: only?.boardIds !== undefined });
        if (!row) {
          if (!(await anyWaitingFor(db, board.labels))) {
            for (const [key, s] of open) if (matchesSelector(board.labels, s)) open.delete(key);
          }
          continue;
        }
        assigned++;
        this.deps.log.info({ op_id: row.id, board_id: board.id, priority: row.priority }, 'fleet scheduler: board assigned');
        announced.push(this.deps.operations.announceAssigned(row));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PASS_CONCURRENCY, boards.length) }, worker));
    await Promise.all(announced);
    // The first N idle boards did not all take work (another replica held or took some) and
    // work may still wait: other idle boards may match it, so look at all of them.
    const stillOpen = only?.selectors?.filter((s) => open.has(JSON.stringify(s))) ?? [];
    if (only?.limit !== undefined && found.length >= only.limit && assigned < only.limit && stillOpen.length > 0 && !this.stopped) {
      return assigned + (await this.dispatch({ selectors: stillOpen }));
    }
    return assigned;
  }

  /** The periodic pass: queue timeouts, stranded assignments, due health checks, then a dispatch. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = (async () => {
      const { db, operations } = this.deps;
      try {
        for (const id of await expiredQueued(db)) {
          await operations.finish(id, 'failed', null, { code: 'queue_timeout', message: 'No board took it before its queue timeout.' });
        }
        const released = await releaseStrandedAssignments(db, this.deps.sessionStaleMs);
        await clearStaleBusy(db);
        if (released.length) this.deps.log.info({ op_ids: released }, 'fleet scheduler: assignments to boards that can no longer take them were released');
        for (const row of await insertDueCheckRuns(db, this.deps.sessionStaleMs, this.deps.queueTimeoutMs)) await operations.announceCreated(row);
        // Boards linked here with queued work look at it again (a lost bus message costs one sweep).
        await operations.resync();
      } catch (err) {
        this.deps.log.warn({ err }, 'fleet scheduler: the sweep failed');
      } finally {
        this.sweeping = undefined;
      }
      this.kick();
    })();
    await this.sweeping;
  }

  /** Maintenance or health of a board changed: its stranded assignments go back, and work may move. */
  async boardChanged(): Promise<void> {
    await releaseStrandedAssignments(this.deps.db, this.deps.sessionStaleMs);
    this.kick();
  }

  /** An operation ended on this replica: its board has been idle since now; a health-check run sets the board's health. */
  private onEnded(op: OperationObject): void {
    const boardId = op.board_id;
    if (!boardId) return;
    void (async () => {
      try {
        const [, checkId] = await Promise.all([markIdleSince(this.deps.db, boardId), op.kind === 'execute' ? healthCheckIdOf(this.deps.db, op.id) : null]);
        if (checkId !== null) {
          const health = await refreshBoardHealth(this.deps.db, boardId);
          if (health?.changed) {
            this.deps.log.info({ board_id: boardId, health: health.verdict }, 'board health changed');
            await releaseStrandedAssignments(this.deps.db, this.deps.sessionStaleMs);
          }
        }
      } catch (err) {
        this.deps.log.warn({ err, op_id: op.id, board_id: boardId }, 'fleet scheduler: could not note the end of an operation');
      }
      this.kick({ boardId });
    })();
  }
}
