import { and, asc, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards, boardTelemetry, type TelemetrySample } from '../db/schema.ts';

/** How long the per-minute samples are kept (the API's "24 h at one sample a minute"). */
export const TELEMETRY_KEEP_MS = 24 * 60 * 60_000;

/** The start of the minute `at` falls in. */
export function minuteOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 60_000) * 60_000);
}

/**
 * Stores a sample: it becomes the board's latest (`boards.telemetry`), and the sample of its
 * minute unless that minute already has one (the first of each minute is kept). False when the
 * board no longer exists.
 */
export async function recordTelemetry(db: Db, boardId: string, sample: TelemetrySample): Promise<boolean> {
  const updated = await db.update(boards).set({ telemetry: sample }).where(eq(boards.id, boardId)).returning({ id: boards.id });
  if (updated.length === 0) return false;
  await db
    .insert(boardTelemetry)
    .values({ boardId, minute: minuteOf(new Date(sample.at)), sample })
    .onConflictDoNothing();
  return true;
}

/**
 * The board's per-minute samples taken at or after `since`, oldest first. The rows are found by
 * their minute (the index), then each sample's own time decides: the sample of `since`'s minute
 * taken before `since` is left out, so a client polling with the time of the last sample it saw
 * (plus a millisecond) never gets it again.
 */
export async function telemetrySince(db: Db, boardId: string, since: Date): Promise<TelemetrySample[]> {
  const rows = await db
    .select({ sample: boardTelemetry.sample })
    .from(boardTelemetry)
    .where(and(eq(boardTelemetry.boardId, boardId), gte(boardTelemetry.minute, minuteOf(since))))
    .orderBy(asc(boardTelemetry.minute));
  const from = since.getTime();
  return rows.map((r) => r.sample).filter((s) => Date.parse(s.at) >= from);
}

/** Deletes at most `limit` samples older than `cutoff`; answers how many went. */
export async function pruneTelemetryBatch(db: Db, cutoff: Date, limit: number): Promise<number> {
  const gone = await db
    .delete(boardTelemetry)
    .where(
      // A string with a cast: postgres-js takes no Date inside a raw fragment.
      sql`(${boardTelemetry.boardId}, ${boardTelemetry.minute}) in (select board_id, minute from board_telemetry where minute < ${cutoff.toISOString()}::timestamptz limit ${limit})`,
    )
    .returning({ boardId: boardTelemetry.boardId });
  return gone.length;
}
