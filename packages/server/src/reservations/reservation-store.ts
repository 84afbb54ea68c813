import { and, asc, desc, eq, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards, reservations } from '../db/schema.ts';
import type { BoardSelector } from '../boards/board-selector.ts';
import type { CandidateBoard } from './reservation-queue.ts';

/**
 * Every query of the reservations table (docs/reservations.md). Grants run in one
 * transaction under one advisory lock shared by every replica (`mm-reservations`), and each
 * board given is locked with the board queue's and the scheduler's key (`mm-board:<id>`), so
 * no replica starts other people's work on a board in the instant it is granted.
 */

export type ReservationRow = typeof reservations.$inferSelect;

type Row = Record<string, unknown>;
const rowsOf = (result: unknown): Row[] => (Array.isArray(result) ? (result as Row[]) : (((result as { rows?: Row[] }).rows ?? []) as Row[]));
const iso = (d: Date) => sql`${d.toISOString()}::timestamptz`;

export const RESERVATIONS_LOCK = 'mm-reservations';

export interface NewReservation {
  boardId: string | null;
  boardSelector: BoardSelector | null;
  userId: string | null;
  username: string | null;
  note: string;
  durationS: number;
  requestedAt: Date;
  waitUntil: Date;
}

export async function insertReservation(db: Db, r: NewReservation): Promise<ReservationRow> {
  const [row] = await db.insert(reservations).values({ ...r, status: 'waiting' }).returning();
  return row!;
}

export async function findReservation(db: Db, id: number): Promise<ReservationRow | undefined> {
  const [row] = await db.select().from(reservations).where(eq(reservations.id, id));
  return row;
}

export interface ReservationFilters {
  boardId?: string | undefined;
  status?: 'waiting' | 'active' | 'ended' | undefined;
  /** Only this holder's (`?mine=1`): a username, or null for the anonymous user with auth off. */
  username?: string | null | undefined;
}

/**
 * A page, newest first. The status filter reads `ends_at` and `wait_until` with the clock's
 * now, so a lease past its end is `ended` here even before the sweep marked it so.
 */
export async function listReservationRows(db: Db, f: ReservationFilters, page: { limit: number; offset: number }, at: Date) {
  const parts: SQL[] = [];
  if (f.boardId !== undefined) parts.push(eq(reservations.boardId, f.boardId));
  if (f.username !== undefined) parts.push(sql`${reservations.username} is not distinct from ${f.username}`);
  if (f.status === 'active') parts.push(sql`${reservations.status} = 'active' and ${reservations.endsAt} > ${iso(at)}`);
  else if (f.status === 'waiting') parts.push(sql`${reservations.status} = 'waiting' and ${reservations.waitUntil} > ${iso(at)}`);
  else if (f.status === 'ended')
    parts.push(
      sql`(${reservations.status} = 'ended' or (${reservations.status} = 'active' and ${reservations.endsAt} <= ${iso(at)}) or (${reservations.status} = 'waiting' and ${reservations.waitUntil} <= ${iso(at)}))`,
    );
  const where = parts.length ? and(...parts) : undefined;
  const [rows, [count]] = await Promise.all([
    db.select().from(reservations).where(where).orderBy(desc(reservations.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(reservations).where(where),
  ]);
  return { rows, total: count?.n ?? 0 };
}

/** Waiting requests not timed out, oldest first. */
export async function waitingRows(db: Db, at: Date): Promise<ReservationRow[]> {
  return db
    .select()
    .from(reservations)
    .where(sql`${reservations.status} = 'waiting' and ${reservations.waitUntil} > ${iso(at)}`)
    .orderBy(asc(reservations.id));
}

/** Leases in force at `at` on these boards (all boards without `boardIds`), with each board's labels. */
export async function activeLeases(db: Db, at: Date, boardIds?: string[]): Promise<Array<ReservationRow & { labels: Record<string, string>; boardName: string }>> {
  if (boardIds && boardIds.length === 0) return [];
  const rows = await db
    .select({ r: reservations, labels: boards.labels, boardName: boards.name })
    .from(reservations)
    .innerJoin(boards, eq(boards.id, reservations.boardId))
    .where(and(sql`${reservations.status} = 'active' and ${reservations.endsAt} > ${iso(at)}`, ...(boardIds ? [inArray(reservations.boardId, boardIds)] : [])));
  return rows.map((x) => ({ ...x.r, labels: x.labels, boardName: x.boardName }));
}

/** Board names by id (for the objects shown). */
export async function boardNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: boards.id, name: boards.name }).from(boards).where(inArray(boards.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Leases past their end, and waiting requests past their wait, become `ended`; the boards freed. */
export async function endOverdue(db: Db, at: Date): Promise<Array<{ id: number; boardId: string | null; reason: string }>> {
  const expired = await db
    .update(reservations)
    .set({ status: 'ended', endedAt: sql`${reservations.endsAt}`, endReason: 'expired' })
    .where(and(eq(reservations.status, 'active'), lte(reservations.endsAt, at)))
    .returning({ id: reservations.id, boardId: reservations.boardId });
  const timedOut = await db
    .update(reservations)
    .set({ status: 'ended', endedAt: at, endReason: 'wait_timeout' })
    .where(and(eq(reservations.status, 'waiting'), lte(reservations.waitUntil, at)))
    .returning({ id: reservations.id, boardId: reservations.boardId });
  return [...expired.map((r) => ({ ...r, reason: 'expired' })), ...timedOut.map((r) => ({ ...r, reason: 'wait_timeout' }))];
}

/**
 * The boards the waiting requests may want: the named ones (whatever their state: a named
 * request needs only that nobody holds it), and the unreserved idle boards some waiting
 * selector matches, longest idle first (as the scheduler takes them).
 */
export async function candidateBoards(db: Db, named: string[], selectors: BoardSelector[], staleMs: number, at: Date): Promise<CandidateBoard[]> {
  const reserved = sql`exists (select 1 from reservations r where r.board_id = b.id and r.status = 'active' and r.ends_at > ${iso(at)})`;
  const idle = sql`(not b.pending and not b.maintenance and b.health <> 'bad'
    and exists (select 1 from board_sessions s where s.board_id = b.id and s.heartbeat_at >= now() - ${Math.round(staleMs)}::int * interval '1 millisecond')
    and not exists (select 1 from board_reboots x where x.board_id = b.id and x.expires_at > now())
    and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running')))`;
  const wanted: SQL[] = [];
  if (named.length) wanted.push(sql`b.id in (${sql.join(named.map((id) => sql`${id}::uuid`), sql`, `)})`);
  if (selectors.length) wanted.push(sql`((${sql.join(selectors.map((s) => sql`b.labels @> ${JSON.stringify(s)}::jsonb`), sql` or `)}) and ${idle} and not ${reserved})`);
  if (wanted.length === 0) return [];
  const rows = rowsOf(
    await db.execute(sql`select b.id, b.labels, ${idle} as idle, ${reserved} as reserved from boards b
      where ${sql.join(wanted, sql` or `)}
      order by coalesce(b.idle_since, b.created_at), b.id`),
  );
  return rows.map((r) => ({ id: String(r['id']), labels: (r['labels'] ?? {}) as Record<string, string>, idle: r['idle'] === true, reserved: r['reserved'] === true }));
}

/** Under the board's lock: whether it still runs and waits for nothing (a selector grant looks again). */
export async function stillIdle(db: Db, boardId: string): Promise<boolean> {
  const rows = rowsOf(await db.execute(sql`select 1 as busy from operations where board_id = ${boardId} and status in ('queued', 'running') limit 1`));
  return rows.length === 0;
}

export async function lockReservations(db: Db): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${RESERVATIONS_LOCK}))`);
}

/** A waiting request becomes the board's lease, from `at` for its duration; undefined if it no longer waits. */
export async function activate(db: Db, id: number, boardId: string, at: Date): Promise<ReservationRow | undefined> {
  const [row] = await db
    .update(reservations)
    .set({ status: 'active', boardId, startsAt: at, endsAt: sql`${iso(at)} + ${reservations.durationS} * interval '1 second'` })
    .where(and(eq(reservations.id, id), eq(reservations.status, 'waiting')))
    .returning();
  return row;
}

/** The lease now ends at `endsAt` (a renewal); undefined if it is not in force any more. */
export async function extend(db: Db, id: number, endsAt: Date, at: Date): Promise<ReservationRow | undefined> {
  const [row] = await db
    .update(reservations)
    .set({ endsAt })
    .where(sql`${reservations.id} = ${id} and ${reservations.status} = 'active' and ${reservations.endsAt} > ${iso(at)}`)
    .returning();
  return row;
}

/** Ends a waiting request or a lease in force (`released`, `broken`, `cancelled`); undefined if it had ended. */
export async function endReservation(db: Db, id: number, reason: string, by: string | null, at: Date): Promise<ReservationRow | undefined> {
  const [row] = await db
    .update(reservations)
    .set({ status: 'ended', endedAt: at, endReason: reason, endedBy: by })
    .where(
      sql`${reservations.id} = ${id} and ((${reservations.status} = 'active' and ${reservations.endsAt} > ${iso(at)}) or (${reservations.status} = 'waiting' and ${reservations.waitUntil} > ${iso(at)}))`,
    )
    .returning();
  return row;
}

/** Whether this user (by id) holds a lease in force on the board. */
export async function holdsLease(db: Db, userId: string, boardId: string, at: Date): Promise<boolean> {
  const [row] = await db
    .select({ id: reservations.id })
    .from(reservations)
    .where(sql`${reservations.boardId} = ${boardId} and ${reservations.userId} = ${userId} and ${reservations.status} = 'active' and ${reservations.endsAt} > ${iso(at)}`)
    .limit(1);
  return row !== undefined;
}

/** The soonest end of a lease in force, or of a waiting request's wait (ms), or undefined. */
export async function nextDeadline(db: Db, at: Date): Promise<number | undefined> {
  const [row] = rowsOf(
    await db.execute(sql`select least(
      (select min(ends_at) from reservations where status = 'active' and ends_at > ${iso(at)}),
      (select min(wait_until) from reservations where status = 'waiting' and wait_until > ${iso(at)})) as t`),
  );
  const t = row?.['t'];
  if (t === null || t === undefined) return undefined;
  return new Date(t as string | Date).getTime();
}

/** Whether any registered (not pending) board's labels hold the selector. */
export async function anyRegisteredBoardMatches(db: Db, selector: BoardSelector): Promise<boolean> {
  const rows = rowsOf(await db.execute(sql`select 1 as ok from boards where not pending and labels @> ${JSON.stringify(selector)}::jsonb limit 1`));
  return rows.length > 0;
}
