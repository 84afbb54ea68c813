import { and, eq, gt, inArray, lt, or } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { sessions, users } from '../db/schema.ts';
import { newSecret, secretHash } from './secrets.ts';
import type { UserRow } from './users.ts';

export type SessionRow = typeof sessions.$inferSelect;

export const SESSION_COOKIE = 'mm_session';

/** last_seen_at (the idle clock) is written at most this often per session. */
const TOUCH_INTERVAL_MS = 60_000;

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
}

export async function createSession(db: Db, userId: string, ip: string | null, limits: SessionLimits): Promise<{ row: SessionRow; cookie: string }> {
  const cookie = newSecret('');
  const now = new Date();
  const [row] = await db
    .insert(sessions)
    .values({ userId, tokenHash: secretHash(cookie), createdAt: now, lastSeenAt: now, expiresAt: new Date(now.getTime() + limits.maxMs), ip })
    .returning();
  return { row: row!, cookie };
}

/** The session and its user when the cookie names a live session; refreshes its idle clock. */
export async function authenticateSession(db: Db, cookie: string, limits: SessionLimits): Promise<{ session: SessionRow; user: UserRow } | undefined> {
  const now = new Date();
  const [hit] = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.tokenHash, secretHash(cookie)),
        gt(sessions.expiresAt, now),
        gt(sessions.lastSeenAt, new Date(now.getTime() - limits.idleMs)),
      ),
    );
  if (!hit) return undefined;
  if (now.getTime() - hit.session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
    await db.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, hit.session.id));
    hit.session.lastSeenAt = now;
  }
  return hit;
}

export async function endSession(db: Db, id: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, id));
}

export async function endSessionsOf(db: Db, userId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}

/** Drops sessions past either expiry (they no longer authenticate anyway). */
export async function pruneSessions(db: Db, limits: SessionLimits): Promise<void> {
  const now = Date.now();
  await db.delete(sessions).where(or(lt(sessions.expiresAt, new Date(now)), lt(sessions.lastSeenAt, new Date(now - limits.idleMs))));
}

/** Which of these session ids are still live (open streams re-check their credential). */
export async function liveSessionIds(db: Db, ids: string[], limits: SessionLimits): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const now = Date.now();
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(inArray(sessions.id, ids), gt(sessions.expiresAt, new Date(now)), gt(sessions.lastSeenAt, new Date(now - limits.idleMs))));
  return new Set(rows.map((r) => r.id));
}
