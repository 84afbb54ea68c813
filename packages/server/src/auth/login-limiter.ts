import { and, count, eq, gt, lt, min } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { loginFailures } from '../db/schema.ts';
import { usernameKey } from './usernames.ts';

/**
 * Failed sign-ins are rows in the database, so every replica counts the same ones.
 * Per user (see loginLimitKey): 5 failures in 15 minutes lock that user for the rest of the window;
 * per address: 20 (an office behind one NAT address has several people).
 */
export const LOGIN_LIMITS = {
  windowMs: 15 * 60_000,
  perUsername: 5,
  perAddress: 20,
} as const;

/**
 * What failures are counted against: the user a sign-in named when it names one (however
 * it was spelt), else the typed name's key (auth/usernames.ts). Other callers (token
 * sign-in) pass their own key.
 */
export const loginLimitKey = (user: { id: string } | undefined, typed: string): string =>
  user ? `user ${user.id}` : `name ${usernameKey(typed.trim())}`;

/** Seconds until another attempt is allowed, or 0 when it is allowed now. */
export async function loginRetryAfterS(db: Db, key: string, ip: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - LOGIN_LIMITS.windowMs);
  const check = async (where: ReturnType<typeof and>, limit: number) => {
    const [r] = await db.select({ n: count(), oldest: min(loginFailures.at) }).from(loginFailures).where(where);
    if (!r || Number(r.n) < limit || !r.oldest) return 0;
    return Math.max(1, Math.ceil((new Date(r.oldest).getTime() + LOGIN_LIMITS.windowMs - now.getTime()) / 1000));
  };
  const byName = await check(and(eq(loginFailures.username, key), gt(loginFailures.at, since)), LOGIN_LIMITS.perUsername);
  const byAddress = await check(and(eq(loginFailures.ip, ip), gt(loginFailures.at, since)), LOGIN_LIMITS.perAddress);
  return Math.max(byName, byAddress);
}

export async function recordLoginFailure(db: Db, key: string, ip: string, now: Date): Promise<void> {
  await db.insert(loginFailures).values({ username: key, ip, at: now });
  // Old rows serve no purpose; drop them as we go (cheap with the index on `at` per key).
  await db.delete(loginFailures).where(lt(loginFailures.at, new Date(now.getTime() - 2 * LOGIN_LIMITS.windowMs)));
}

/** A successful sign-in clears that key's failures (not the address's). */
export async function clearLoginFailures(db: Db, key: string): Promise<void> {
  await db.delete(loginFailures).where(eq(loginFailures.username, key));
}
