import { and, count, eq, gt, lt, min } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { enrollFailures } from '../db/schema.ts';
import { ApiError } from '../errors.ts';

/**
 * Refused enrolments per address (docs/enrollment.md), limited as failed sign-ins are
 * (auth/login-limiter.ts): rows in the database, so every replica counts the same ones. An
 * address with this many refusals in the window gets 429 for any enrolment until the oldest
 * of them leaves the window; a throttled call is not counted again.
 */
export const ENROLL_LIMITS = {
  windowMs: 15 * 60_000,
  perAddress: 20,
} as const;

export class EnrollThrottledError extends ApiError {
  constructor(retryAfterS: number) {
    super(429, 'too_many_attempts', 'Too Many Requests', `Too many refused enrolments from this address; try again in ${retryAfterS} s.`);
    this.headers['retry-after'] = String(retryAfterS);
  }
}

/** Seconds until this address may enroll again, or 0 when it may now. */
export async function enrollRetryAfterS(db: Db, ip: string): Promise<number> {
  const since = new Date(Date.now() - ENROLL_LIMITS.windowMs);
  const [r] = await db
    .select({ n: count(), oldest: min(enrollFailures.at) })
    .from(enrollFailures)
    .where(and(eq(enrollFailures.ip, ip), gt(enrollFailures.at, since)));
  if (!r || Number(r.n) < ENROLL_LIMITS.perAddress || !r.oldest) return 0;
  return Math.max(1, Math.ceil((new Date(r.oldest).getTime() + ENROLL_LIMITS.windowMs - Date.now()) / 1000));
}

export async function recordEnrollFailure(db: Db, ip: string): Promise<void> {
  await db.insert(enrollFailures).values({ ip });
  // Old rows serve no purpose; drop them as we go (the index on (ip, at) is no help here, but few rows are ever kept).
  await db.delete(enrollFailures).where(lt(enrollFailures.at, new Date(Date.now() - 2 * ENROLL_LIMITS.windowMs)));
}
