import { sql, type SQL } from 'drizzle-orm';
import { systemClock, type Clock } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/rows.ts';
import type { OperationRow } from '../operations/operation-object.ts';
import type { NewOperationInput, Operations } from '../operations/operations.ts';
import { selectorHeldBySql, selectorMatchesSql, type BoardSelector } from '../boards/board-selector.ts';
import { waitingRequiredAppsSql } from '../accelerators/board-fit.ts';
import { DUE_CHECK_RUNS_LOCK, dueCheckRuns, refreshBoardHealth } from './health-checks.ts';
import type { Verdict } from './health-evaluation.ts';

/**
 * What the fleet scheduler (scheduler.ts) asks of the database, as an interface: the engine
 * decides, a store answers. `PgSchedulerStore` answers from PostgreSQL (the operations' rows
 * change only through Operations); the unit tests (test/fleet-scheduler.unit.test.ts) answer
 * from memory.
 */
export interface SchedulerStore {
  /** The distinct selectors of waiting selector work. */
  waitingSelectors(): Promise<BoardSelector[]>;
  /**
   * Boards that may take selector work now, longest idle first (see PgSchedulerStore.idleBoards);
   * `hasRequiredApp`: its active app is one some waiting work requires (those go first).
   */
  idleBoards(only?: IdleBoardFilter): Promise<IdleBoard[]>;
  /** Gives the board the best waiting operation it matches (Operations.assignNext); undefined when it took nothing. */
  assign(board: IdleBoard, opts: { waitForLock?: boolean }): Promise<OperationRow | undefined>;
  /** Whether waiting selector work not being assigned by another replica right now could go to a board with these labels. */
  anyWaitingFor(labels: Record<string, string>): Promise<boolean>;
  /** Whether any registered (not pending) board's labels hold the selector. */
  anyBoardMatches(selector: BoardSelector): Promise<boolean>;
  /** Assignments to boards that can no longer take them go back to the pool; their operation ids. */
  releaseStranded(): Promise<number[]>;
  /** Boards flagged busy with nothing queued or running go back into the idle-board index; how many. */
  clearStaleBusy(): Promise<number>;
  /** Queued operations past their deadline fail (`queue_timeout`); how many. */
  expireQueued(): Promise<number>;
  /** The due health-check runs are created (one replica at a time); how many. */
  createDueCheckRuns(): Promise<number>;
  /** Boards linked here with queued work look at their queues again (Operations.resync). */
  resync(): Promise<void>;
  /** The board's operation ended: idle since now, and back in the idle-board index. */
  markIdleSince(boardId: string): Promise<void>;
  /** The board's health from its checks' latest runs; undefined when none has run. */
  refreshBoardHealth(boardId: string): Promise<{ verdict: Verdict; changed: boolean } | undefined>;
}

export interface IdleBoard {
  id: string;
  labels: Record<string, string>;
  /** Its active app (`mm/app`) is one that waiting work requires (docs/accelerators.md): such boards are walked first. */
  hasRequiredApp?: boolean;
}

export interface IdleBoardFilter {
  /** Only these boards (just freed or back online), read by id, busy flag or not. */
  boardIds?: string[];
  /** Only boards matching one of these selectors. */
  selectors?: BoardSelector[];
  /** At most this many (a pass for N new operations needs N boards at most). */
  limit?: number;
}

/**
 * SQL conditions a board (alias `b`) must meet to take selector work, besides the scheduler's
 * own (linked, not pending, not in maintenance, not `bad`, not rebooting, nothing queued or
 * running). Other features plug in here (e.g. reservations: boards reserved by someone else).
 */
export type BoardEligibility = (b: SQL) => SQL;

export interface PgSchedulerStoreDeps {
  db: Db;
  operations: Operations;
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  /** MM_QUEUE_TIMEOUT_S in ms: health-check runs wait at most this long. */
  queueTimeoutMs: number;
  eligibility?: BoardEligibility[];
  /** The time reservations are looked at (tests pass a ManualClock). */
  clock?: Clock;
}

/**
 * The scheduler's store on PostgreSQL. Safe with several replicas on one database (the
 * assignment's locks: operations/store.ts `assignToBoard`).
 */
export class PgSchedulerStore implements SchedulerStore {
  private readonly db: Db;
  constructor(private readonly deps: PgSchedulerStoreDeps) {
    this.db = deps.db;
  }

  private staleBefore(): SQL {
    return sql`now() - ${Math.round(this.deps.sessionStaleMs)}::int * interval '1 millisecond'`;
  }

  /**
   * A loose index scan over `operations_waiting_selector_idx`: one index probe per distinct
   * selector, however much work waits (a plain `select distinct` reads every waiting row).
   */
  async waitingSelectors(): Promise<BoardSelector[]> {
    const waiting = sql`status = 'queued' and board_id is null and board_selector is not null`;
    const rows = await queryRows(
      this.db,
      sql`with recursive s(sel) as (
          (select board_selector from operations where ${waiting} order by board_selector limit 1)
          union all
          select (select board_selector from operations where ${waiting} and board_selector > s.sel order by board_selector limit 1)
          from s where s.sel is not null)
        select sel from s where sel is not null`,
    );
    return rows.map((r) => r['sel'] as BoardSelector);
  }

  /**
   * Linked (a fresh board session), not rebooting, not pending, not in maintenance, not `bad`,
   * with nothing queued or running on them, plus the eligibility hooks. Longest idle first
   * (`idle_since` carries a random fraction of its second, so boards idle since the same
   * second come in random order and wear spreads). Whether the board's active app is one
   * waiting work requires is answered in the same statement.
   *
   * Without `boardIds` the walk follows `boards_idle_idx`, which leaves out the boards the
   * scheduler keeps busy (`scheduler_busy`): its cost follows the idle boards, not all boards;
   * `limit` stops it after that many.
   */
  async idleBoards(only?: IdleBoardFilter): Promise<IdleBoard[]> {
    const narrow: SQL[] = [];
    if (only?.boardIds) narrow.push(sql`b.id in (${sql.join(only.boardIds.length ? only.boardIds.map((id) => sql`${id}::uuid`) : [sql`null`], sql`, `)})`);
    else narrow.push(sql`not b.scheduler_busy`);
    if (only?.selectors) {
      const any = only.selectors.map((sel) => selectorMatchesSql(sql`b.labels`, sel));
      narrow.push(any.length ? sql`(${sql.join(any, sql` or `)})` : sql`false`);
    }
    for (const hook of this.deps.eligibility ?? []) narrow.push(hook(sql`b`));
    const rows = await queryRows(
      this.db,
      sql`with apps as (${waitingRequiredAppsSql()})
        select b.id, b.labels, (b.labels->>'mm/app') in (select app from apps) as has_app from boards b
        join board_sessions s on s.board_id = b.id and s.heartbeat_at >= ${this.staleBefore()}
        where not b.pending and not b.maintenance and b.health <> 'bad' and ${sql.join(narrow, sql` and `)}
          and not exists (select 1 from board_reboots r where r.board_id = b.id and r.expires_at > now())
          and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running'))
        order by coalesce(b.idle_since, b.created_at)
        ${only?.limit !== undefined ? sql`limit ${Math.max(0, Math.floor(only.limit))}` : sql``}`,
    );
    return rows.map((r) => ({ id: String(r['id']), labels: (r['labels'] ?? {}) as Record<string, string>, hasRequiredApp: r['has_app'] === true }));
  }

  assign(board: IdleBoard, opts: { waitForLock?: boolean }): Promise<OperationRow | undefined> {
    return this.deps.operations.assignNext(board, opts);
  }

  async anyWaitingFor(labels: Record<string, string>): Promise<boolean> {
    return anyWaitingFor(this.db, labels);
  }

  async anyBoardMatches(selector: BoardSelector): Promise<boolean> {
    const rows = await queryRows(this.db, sql`select 1 as ok from boards where not pending and ${selectorMatchesSql(sql`labels`, selector)} limit 1`);
    return rows.length > 0;
  }

  releaseStranded(): Promise<number[]> {
    return this.deps.operations.releaseStranded(this.deps.sessionStaleMs);
  }

  clearStaleBusy(): Promise<number> {
    return clearStaleBusy(this.db);
  }

  expireQueued(): Promise<number> {
    return this.deps.operations.expireQueued();
  }

  async createDueCheckRuns(): Promise<number> {
    const created = await this.deps.operations.createUnderLock(DUE_CHECK_RUNS_LOCK, (tx): Promise<NewOperationInput[]> =>
      dueCheckRuns(tx, this.deps.sessionStaleMs, this.deps.queueTimeoutMs, new Date((this.deps.clock ?? systemClock).now())),
    );
    return created.length;
  }

  resync(): Promise<void> {
    return this.deps.operations.resync();
  }

  markIdleSince(boardId: string): Promise<void> {
    return markIdleSince(this.db, boardId);
  }

  refreshBoardHealth(boardId: string): Promise<{ verdict: Verdict; changed: boolean } | undefined> {
    return refreshBoardHealth(this.db, boardId);
  }
}

/**
 * Whether any waiting selector work, not being assigned by another replica right now (SKIP
 * LOCKED), could go to a board with these labels. After a board took nothing, false means the
 * selectors its labels hold have no work left: a pass stops walking boards for them.
 */
export async function anyWaitingFor(db: Db, labels: Record<string, string>): Promise<boolean> {
  const rows = await queryRows(
    db,
    sql`select 1 as waiting from operations
      where status = 'queued' and board_id is null and board_selector is not null and ${selectorHeldBySql(sql`board_selector`, labels)}
      limit 1 for update skip locked`,
  );
  return rows.length > 0;
}

/**
 * Boards flagged busy with nothing queued or running on them (an end this replica did not hear
 * of, a replica killed mid-way): back into the idle-board index. One sweep's work, not a pass's.
 */
export async function clearStaleBusy(db: Db): Promise<number> {
  const rows = await queryRows(
    db,
    sql`update boards b set scheduler_busy = false
      where b.scheduler_busy and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running'))
      returning b.id`,
  );
  return rows.length;
}

/**
 * The board's last operation ended now: it has been idle since, and is back in the idle-board
 * index. A random fraction of the second is added so that boards freed in the same second are
 * taken in random order by a plain index walk (wear spreads, as LAVA's shuffled devices).
 */
export async function markIdleSince(db: Db, boardId: string): Promise<void> {
  await db.execute(sql`update boards set idle_since = date_trunc('second', now()) + random() * interval '1 second', scheduler_busy = false where id = ${boardId}`);
}
