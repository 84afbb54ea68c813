import { asc } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards } from '../db/schema.ts';

/** `mm_board_health{board,health}` at scrape time: every board's id and health. */
export async function boardHealthSamples(db: Db): Promise<Array<{ board: string; health: string }>> {
  const rows = await db.select({ id: boards.id, health: boards.health }).from(boards).orderBy(asc(boards.id));
  return rows.map((r) => ({ board: r.id, health: r.health }));
}
