import { and, eq, gt, inArray, isNull, lt, ne, or } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { apiTokens, sessions, users } from '../db/schema.ts';
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

/**
 * A session that authenticates now: within both expiries and, when it was opened with a
 * personal token, while that token is unexpired (a revoked token deleted it already).
 * Needs `api_tokens` left-joined on the session's token.
 */
function isLive(now: Date, limits: SessionLimits) {
  return and(
    gt(sessions.expiresAt, now),
    gt(sessions.lastSeenAt, new Date(now.getTime() - limits.idleMs)),
    or(isNull(sessions.apiTokenId), isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)),
  );
}

/**
 * Whose session it is: a person signed in with a password, a person signed in with one of
 * their tokens (the session ends with the token), or MM_API_TOKEN (no user; the session
 * ends when the setting changes).
 */
export type SessionOwner =
  | { userId: string; apiTokenId?: string; tokenExpiresAt?: Date | null }
  | { envTokenHash: string };

export async function createSession(db: Db, owner: SessionOwner, ip: string | null, limits: SessionLimits, now: Date): Promise<{ row: SessionRow; cookie: string }> {
  const cookie = newSecret('');
  let expiresAt = new Date(now.getTime() + limits.maxMs);
  const values =
    'envTokenHash' in owner
      ? { envTokenHash: owner.envTokenHash }
      : { userId: owner.userId, apiTokenId: owner.apiTokenId ?? null };
  if ('tokenExpiresAt' in owner && owner.tokenExpiresAt && owner.tokenExpiresAt < expiresAt) expiresAt = owner.tokenExpiresAt;
  const [row] = await db
    .insert(sessions)
    .values({ ...values, tokenHash: secretHash(cookie), createdAt: now, lastSeenAt: now, expiresAt, ip })
    .returning();
  return { row: row!, cookie };
}

/**
 * The session and its user (null for an MM_API_TOKEN session) when the cookie names a live
 * session; refreshes its idle clock.
 */
export async function authenticateSession(db: Db, cookie: string, limits: SessionLimits, now: Date): Promise<{ session: SessionRow; user: UserRow | null } | undefined> {
  const [hit] = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .leftJoin(users, eq(users.id, sessions.userId))
    .leftJoin(apiTokens, eq(apiTokens.id, sessions.apiTokenId))
    .where(and(eq(sessions.tokenHash, secretHash(cookie)), isLive(now, limits)));
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

/** Ends the user's sessions, but `exceptId` (the session asking, which stays signed in). */
export async function endSessionsOf(db: Db, userId: string, exceptId?: string): Promise<void> {
  await db.delete(sessions).where(and(eq(sessions.userId, userId), exceptId ? ne(sessions.id, exceptId) : undefined));
}

/** Drops sessions past either expiry (they no longer authenticate anyway). */
export async function pruneSessions(db: Db, limits: SessionLimits, now: Date): Promise<void> {
  await db.delete(sessions).where(or(lt(sessions.expiresAt, now), lt(sessions.lastSeenAt, new Date(now.getTime() - limits.idleMs))));
}

/** Which of these session ids are still live (open streams re-check their credential). */
export async function liveSessionIds(db: Db, ids: string[], limits: SessionLimits, now: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: sessions.id })
    .from(sessions)
    .leftJoin(apiTokens, eq(apiTokens.id, sessions.apiTokenId))
    .where(and(inArray(sessions.id, ids), isLive(now, limits)));
  return new Set(rows.map((r) => r.id));
}
