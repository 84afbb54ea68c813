import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { OperationRow } from '../operations/operation-object.ts';
import type { SchedulingHooks } from '../operations/operations.ts';
import { matchesSelector, type BoardSelector } from '../boards/board-selector.ts';
import type { IdleBoard, IdleBoardFilter, SchedulerStore } from './scheduler-store.ts';

/** Boards assigned at once in one pass (each a short transaction of its own). */
const PASS_CONCURRENCY = 4;

export interface FleetSchedulerDeps {
  store: SchedulerStore;
  /** `board.status`: a board online or ready again may take work. */
  bus: Pick<EventBus, 'subscribe'>;
  /** Where the scheduler's ears go (Operations.scheduling): new selector work, a board freed here. */
  attach(hooks: SchedulingHooks | undefined): void;
  log: Logger;
  /** MM_SCHEDULER_SWEEP_S in ms: the periodic pass (timeouts, due checks, stranded work, dispatch). */
  sweepMs: number;
  clock?: Clock;
}

/**
 * The fleet scheduler (docs/fleet.md): gives waiting selector work its board. Every replica
 * runs one; they coordinate only through PostgreSQL (its store, scheduler-store.ts, and the
 * assignment of operations/store.ts), so any of them may dispatch any operation, and each
 * dispatch is safe against the others.
 *
 * A dispatch pass takes the idle eligible boards, longest idle first, keeps those matching
 * some waiting selector, and for each asks the store for the best waiting operation its
 * labels satisfy (priority, then age). Its cost follows the number of idle boards and of
 * distinct waiting selectors, not the number of boards or of waiting operations: busy boards
 * are kept out of the idle-board index (`boards.scheduler_busy`), a pass for new work
 * stops after as many boards as operations were created, and a pass stops walking the boards
 * of a selector once one of them found nothing left for it.
 *
 * Woken by: new selector work created here (`workCreated`, from Operations), an operation
 * ended here (`boardFreed`, once per end), a board online or ready again, maintenance or
 * health changes (`boardChanged`), a new health check, and the sweep.
 */
export class FleetScheduler implements SchedulingHooks {
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
  /** Ends being noted (markIdleSince, health): stop() waits for them. */
  private readonly noting = new Set<Promise<void>>();

  constructor(private readonly deps: FleetSchedulerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  start(): void {
    this.unsubscribe.push(
      // Online, or back from a reboot: that board may take work.
      this.deps.bus.subscribe('board.status', undefined, ({ boardId, status }) => {
        if (status !== 'offline') this.kick({ boardId });
      }),
    );
    this.deps.attach(this);
    this.timer = this.clock.setInterval(() => void this.sweep(), this.deps.sweepMs);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearInterval(this.timer);
    this.deps.attach(undefined);
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all(this.noting);
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

  /** Selector work was created here (Operations): a pass over the idle boards it matches. */
  workCreated(selector: BoardSelector): void {
    this.kick({ selector });
  }

  /** Whether any registered board could ever take work with this selector (else `no_matching_board`). */
  anyBoardMatches(selector: Record<string, string>): Promise<boolean> {
    return this.deps.store.anyBoardMatches(selector);
  }

  /** Resolves when no dispatch pass runs (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * One pass: each idle eligible board (all, or only those named or matching), longest idle
   * first, takes the best waiting operation it matches. Returns how many were assigned.
   */
  async dispatch(only?: IdleBoardFilter): Promise<number> {
    const { store } = this.deps;
    // A pass for new work knows its selectors (if another replica took the work already, the
    // first board that finds nothing ends the walk); the others ask which selectors wait.
    const selectors = only?.selectors ?? (await store.waitingSelectors());
    if (selectors.length === 0) return 0;
    const found = await store.idleBoards(only);
    // The selectors whose work may still wait: one a board took nothing for (while nothing else
    // holds such work) has none left, and boards only it matches are not walked in vain. Without
    // this, a pass whose new work another replica had already taken walked every idle board of
    // its selector, a transaction each, and delayed the passes behind it by seconds.
    const open = new Map(selectors.map((s) => [JSON.stringify(s), s]));
    const wanted = (b: IdleBoard) => [...open.values()].some((s) => matchesSelector(b.labels, s));
    // Boards whose active app some waiting work requires go first (docs/accelerators.md).
    const candidates = found.filter(wanted);
    const boards = [...candidates.filter((b) => b.hasRequiredApp), ...candidates.filter((b) => !b.hasRequiredApp)];
    // Boards in order, a few at a time (each has its own lock; SKIP LOCKED keeps their picks apart).
    let assigned = 0;
    let next = 0;
    const worker = async () => {
      while (next < boards.length && !this.stopped && open.size > 0) {
        const board = boards[next++]!;
        if (!wanted(board)) continue;
        const row = await store.assign(board, { waitForLock: only?.boardIds !== undefined });
        if (!row) {
          if (!(await store.anyWaitingFor(board.labels))) {
            for (const [key, s] of open) if (matchesSelector(board.labels, s)) open.delete(key);
          }
          continue;
        }
        assigned++;
        this.deps.log.info({ op_id: row.id, board_id: board.id, priority: row.priority }, 'fleet scheduler: board assigned');
      }
    };
    await Promise.all(Array.from({ length: Math.min(PASS_CONCURRENCY, boards.length) }, worker));
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
      const { store } = this.deps;
      try {
        await store.expireQueued();
        const released = await store.releaseStranded();
        await store.clearStaleBusy();
        if (released.length) this.deps.log.info({ op_ids: released }, 'fleet scheduler: assignments to boards that can no longer take them were released');
        await store.createDueCheckRuns();
        // Boards linked here with queued work look at it again (a lost bus message costs one sweep).
        await store.resync();
      } catch (err) {
        this.deps.log.warn({ err }, 'fleet scheduler: the sweep failed');
      } finally {
        this.sweeping = undefined;
      }
      this.kick();
    })();
    await this.sweeping;
  }

  /** Maintenance, health or reservation of a board changed: its stranded assignments go back, and work may move. */
  async boardChanged(): Promise<void> {
    await this.deps.store.releaseStranded();
    this.kick();
  }

  /**
   * An operation of this board ended here (Operations, once per end): the board has been idle
   * since now; a health-check run sets the board's health; then the board looks for work.
   */
  boardFreed(row: OperationRow): void {
    const boardId = row.boardId;
    if (!boardId) return;
    const { store } = this.deps;
    const noted = (async () => {
      try {
        await store.markIdleSince(boardId);
        if (row.healthCheckId !== null) {
          const health = await store.refreshBoardHealth(boardId);
          if (health?.changed) {
            this.deps.log.info({ board_id: boardId, health: health.verdict }, 'board health changed');
            await store.releaseStranded();
          }
        }
      } catch (err) {
        this.deps.log.warn({ err, op_id: row.id, board_id: boardId }, 'fleet scheduler: could not note the end of an operation');
      }
      this.kick({ boardId });
    })();
    this.noting.add(noted);
    void noted.finally(() => this.noting.delete(noted));
  }
}
