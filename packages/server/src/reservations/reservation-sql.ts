import { sql, type SQL } from 'drizzle-orm';

/**
 * The one condition the scheduler, the board queue and rollouts add to keep work off boards
 * other people hold (docs/reservations.md). `boardId` and `actor` are SQL (a column or a
 * value): the board, and the username the work was asked for by (`operations.created_by`,
 * `rollouts.created_by`). A lease counts while `ends_at` is after `at` (the injected clock's
 * now), whatever its status says: an expired lease never holds a board, even before a sweep
 * has marked it ended.
 */
export function reservedForOthersSql(boardId: SQL, actor: SQL, at: Date): SQL {
  return sql`exists (select 1 from reservations rsv where rsv.board_id = ${boardId} and rsv.status = 'active'
    and rsv.ends_at > ${at.toISOString()}::timestamptz and rsv.username is distinct from ${actor})`;
}

/** `not reservedForOthersSql(...)`: the board is free for this actor's work. */
export function boardNotReservedForOthersSql(boardId: SQL, actor: SQL, at: Date): SQL {
  return sql`not ${reservedForOthersSql(boardId, actor, at)}`;
}
