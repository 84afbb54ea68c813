import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { operations } from '../db/schema.ts';
import type { OperationRow } from '../operations/operation-object.ts';
import type { BoardSelector } from './board-selector.ts';

/**
 * The fleet scheduler's queries (docs/fleet.md). Safe with several replicas on one database:
 *
 * - a waiting operation is taken with `FOR UPDATE SKIP LOCKED` and given its board by a
 *   conditional UPDATE (`board_id is null`): one assignment per operation;
 * - a board is taken with `pg_try_advisory_xact_lock` on the same key the board queue's
 *   claim uses (operations/store.ts `claimNextQueued`), and its idleness is looked at again
 *   under that lock by a new statement (READ COMMITTED: it sees every commit made before the
 *   lock was granted): one operation per board at a time. A row lock on the board would not
 *   do: the assignment writes the operation, not the board, so a second replica that waited
 *   for the board row would re-check a snapshot from before the first one's commit.
 *
 * Assignment only sets `board_id`; the replica holding the board's link claims it as any
 * queued work of that board. A replica killed mid-assignment rolls its transaction back.
 */

type Row = Record<string, unknown>;

/** postgres-js answers an array, PGlite `{ rows }`. */
function rowsOf(result: unknown): Row[] {
  if (Array.isArray(result)) return result as Row[];
  return ((result as { rows?: Row[] }).rows ?? []) as Row[];
}

async function query(db: Db, q: SQL): Promise<Row[]> {
  return rowsOf(await db.execute(q));
}

/** The same key as the board queue's claim: dispatch and claim of one board never overlap. */
export const boardLockKey = (boardId: string) => `mm-board:${boardId}`;

const staleBefore = (staleMs: number) => sql`now() - ${Math.round(staleMs)}::int * interval '1 millisecond'`;

/**
 * The distinct selectors of waiting selector work (few: the combinations people ask for).
 * A loose index scan over `operations_waiting_selector_idx`: one index probe per distinct
 * selector, however much work waits (a plain `select distinct` reads every waiting row).
 */
export async function waitingSelectors(db: Db): Promise<BoardSelector[]> {
  const waiting = sql`status = 'queued' and board_id is null and board_selector is not null`;
  const rows = await query(
    db,
    sql`with recursive s(sel) as (
        (select board_selector from operations where ${waiting} order by board_selector limit 1)
        union all
        select (select board_selector from operations where ${waiting} and board_selector > s.sel order by board_selector limit 1)
        from s where s.sel is not null)
      select sel from s where sel is not null`,
  );
  return rows.map((r) => r['sel'] as BoardSelector);
}

export interface IdleBoard {
  id: string;
  labels: Record<string, string>;
}

/**
 * Boards that may take selector work now: linked (a fresh board session), not rebooting, not
 * pending, not in maintenance, not `bad`, with nothing queued or running on them. Longest idle
 * first (`idle_since` carries a random fraction of its second, so boards idle since the same
 * second come in random order and wear spreads).
 *
 * Without `boardIds` the walk follows `boards_idle_idx`, which leaves out the boards the
 * scheduler keeps busy (`scheduler_busy`): its cost follows the idle boards, not all boards;
 * `limit` stops it after that many (a pass for N new operations needs N boards at most).
 * With `boardIds` (boards just freed or back online) those boards are read by id, flag or not.
 */
export async function idleBoards(db: Db, staleMs: number, only?: { boardIds?: string[]; selectors?: BoardSelector[]; limit?: number }): Promise<IdleBoard[]> {
  const narrow: SQL[] = [];
  if (only?.boardIds) narrow.push(sql`b.id in (${sql.join(only.boardIds.length ? only.boardIds.map((id) => sql`${id}::uuid`) : [sql`null`], sql`, `)})`);
  else narrow.push(sql`not b.scheduler_busy`);
  if (only?.selectors) {
    const any = only.selectors.map((sel) => sql`b.labels @> ${JSON.stringify(sel)}::jsonb`);
    narrow.push(any.length ? sql`(${sql.join(any, sql` or `)})` : sql`false`);
  }
  const rows = await query(
    db,
    sql`select b.id, b.labels from boards b
      join board_sessions s on s.board_id = b.id and s.heartbeat_at >= ${staleBefore(staleMs)}
      where not b.pending and not b.maintenance and b.health <> 'bad' and ${sql.join(narrow, sql` and `)}
        and not exists (select 1 from board_reboots r where r.board_id = b.id and r.expires_at > now())
        and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running'))
      order by coalesce(b.idle_since, b.created_at)
      ${only?.limit !== undefined ? sql`limit ${Math.max(0, Math.floor(only.limit))}` : sql``}`,
  );
  return rows.map((r) => ({ id: String(r['id']), labels: (r['labels'] ?? {}) as Record<string, string> }));
}

/**
 * Gives the board the first waiting operation (priority, then age) whose selector its labels
 * hold, if the board is still free for it; the operation's row, or undefined (board taken by
 * another replica, busy meanwhile, or nothing matches). A board whose lock another replica
 * holds is skipped, unless `waitForLock` (a pass for that one board: it waits its turn).
 */
export async function assignToBoard(db: Db, board: IdleBoard, opts: { waitForLock?: boolean } = {}): Promise<OperationRow | undefined> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    if (opts.waitForLock) {
      // A board that just became idle: its own queue's claim may hold the lock for a moment.
      await query(t, sql`select pg_advisory_xact_lock(hashtext(${boardLockKey(board.id)}))`);
    } else {
      const [lock] = await query(t, sql`select pg_try_advisory_xact_lock(hashtext(${boardLockKey(board.id)})) as got`);
      if (lock?.['got'] !== true) return undefined;
    }
    // One statement, after the lock: its snapshot holds every commit made before the lock was granted.
    const [row] = await tx
      .update(operations)
      .set({ boardId: board.id, assignedAt: sql`now()` })
      .where(
        sql`${operations.status} = 'queued' and ${operations.boardId} is null and ${operations.id} = (
          select o.id from operations o
          where o.status = 'queued' and o.board_id is null and o.board_selector is not null
            and o.board_selector <@ ${JSON.stringify(board.labels)}::jsonb
            and exists (select 1 from boards b where b.id = ${board.id} and not b.pending and not b.maintenance and b.health <> 'bad')
            and not exists (select 1 from operations x where x.board_id = ${board.id} and x.status in ('queued', 'running'))
          order by o.priority desc, o.id
          limit 1
          for update skip locked)`,
      )
      .returning();
    // Out of the idle-board index until its work ends (markIdleSince) or goes back (releaseStrandedAssignments).
    if (row) await t.execute(sql`update boards set scheduler_busy = true where id = ${board.id}`);
    return row;
  });
}

/**
 * Whether any waiting selector work, not being assigned by another replica right now (SKIP
 * LOCKED), could go to a board with these labels. After a board took nothing, false means the
 * selectors its labels hold have no work left: a pass stops walking boards for them.
 */
export async function anyWaitingFor(db: Db, labels: Record<string, string>): Promise<boolean> {
  const rows = await query(
    db,
    sql`select 1 as waiting from operations
      where status = 'queued' and board_id is null and board_selector is not null and board_selector <@ ${JSON.stringify(labels)}::jsonb
      limit 1 for update skip locked`,
  );
  return rows.length > 0;
}

/**
 * Selector operations given a board that has not started them, whose board can no longer take
 * selector work (gone offline, in maintenance, `bad`): back to the pool. The board queue's claim
 * checks the board again, so one taken meanwhile is left where it is.
 */
export async function releaseStrandedAssignments(db: Db, staleMs: number): Promise<number[]> {
  const rows = await query(
    db,
    sql`with released as (
        update operations o set board_id = null, assigned_at = null
        where o.status = 'queued' and o.board_selector is not null and o.board_id is not null
          and (exists (select 1 from boards b where b.id = o.board_id and (b.maintenance or b.health = 'bad'))
            or not exists (select 1 from board_sessions s where s.board_id = o.board_id and s.heartbeat_at >= ${staleBefore(staleMs)}))
        returning o.id, o.board_id),
      freed as (update boards set scheduler_busy = false where id in (select board_id from released))
      select id from released`,
  );
  return rows.map((r) => Number(r['id']));
}

/**
 * Boards flagged busy with nothing queued or running on them (an end this replica did not hear
 * of, a replica killed mid-way): back into the idle-board index. One sweep's work, not a pass's.
 */
export async function clearStaleBusy(db: Db): Promise<number> {
  const rows = await query(
    db,
    sql`update boards b set scheduler_busy = false
      where b.scheduler_busy and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running'))
      returning b.id`,
  );
  return rows.length;
}

/** Queued operations past their queue deadline. */
export async function expiredQueued(db: Db): Promise<number[]> {
  const rows = await query(db, sql`select id from operations where status = 'queued' and queue_deadline <= now() order by queue_deadline limit 1000`);
  return rows.map((r) => Number(r['id']));
}

/** Whether any registered (not pending) board's labels hold the selector. */
export async function anyBoardMatches(db: Db, selector: BoardSelector): Promise<boolean> {
  const rows = await query(db, sql`select 1 as ok from boards where not pending and labels @> ${JSON.stringify(selector)}::jsonb limit 1`);
  return rows.length > 0;
}

/**
 * The board's last operation ended now: it has been idle since, and is back in the idle-board
 * index. A random fraction of the second is added so that boards freed in the same second are
 * taken in random order by a plain index walk (wear spreads, as LAVA's shuffled devices).
 */
export async function markIdleSince(db: Db, boardId: string): Promise<void> {
  await db.execute(sql`update boards set idle_since = date_trunc('second', now()) + random() * interval '1 second', scheduler_busy = false where id = ${boardId}`);
}
