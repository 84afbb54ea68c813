import { sql } from 'drizzle-orm';
import type { Db } from './database.ts';
import { queryRows } from './rows.ts';

/**
 * The board's advisory lock, held until the transaction ends: the board queue's claim, the
 * scheduler's assignment and a reservation's grant of one board never overlap, on any replica.
 */
export const boardLockKey = (boardId: string) => `mm-board:${boardId}`;

/** Waits for the board's lock (inside a transaction). */
export async function lockBoard(db: Db, boardId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${boardLockKey(boardId)}))`);
}

/** Takes the board's lock if nobody holds it (inside a transaction); whether it did. */
export async function tryLockBoard(db: Db, boardId: string): Promise<boolean> {
  const [row] = await queryRows(db, sql`select pg_try_advisory_xact_lock(hashtext(${boardLockKey(boardId)})) as got`);
  return row?.['got'] === true;
}
