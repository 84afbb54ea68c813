import { and, count, desc, eq, gt, inArray, isNull, lte, or } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { apiTokens, users } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import type { UserRow } from './users.ts';
import { newSecret, secretHash } from './secrets.ts';

export type TokenRow = typeof apiTokens.$inferSelect;

/** Personal tokens start with this, so they are easy to recognise (and to scan for in leaks). */
export const PERSONAL_TOKEN_PREFIX = 'mmu_';

/** last_used_at is written at most this often per token (a busy client would write on every request). */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface TokenObject {
  id: string;
  name: string;
  user_id: string;
  username: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toTokenObject = (t: TokenRow, username: string): TokenObject => ({
  id: t.id,
  name: t.name,
  user_id: t.userId,
  username,
  created_at: t.createdAt.toISOString(),
  expires_at: iso(t.expiresAt),
  last_used_at: iso(t.lastUsedAt),
});

export const tokenNotFound = (id: string) => new NotFoundError('token_not_found', `You have no token with id ${id}.`);

export async function createToken(db: Db, userId: string, name: string, expiresAt: Date | null): Promise<{ row: TokenRow; token: string }> {
  const token = newSecret(PERSONAL_TOKEN_PREFIX);
  const [row] = await db.insert(apiTokens).values({ userId, name, tokenHash: secretHash(token), expiresAt }).returning();
  return { row: row!, token };
}

/** A page of tokens, newest first, each with its owner's name: one user's, or (`userId` null) everyone's. */
export async function listTokens(db: Db, userId: string | null, page: { limit: number; offset: number }) {
  const where = userId === null ? undefined : eq(apiTokens.userId, userId);
  const rows = await db
    .select({ token: apiTokens, username: users.username })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(where)
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .limit(page.limit)
    .offset(page.offset);
  const [t] = await db.select({ n: count() }).from(apiTokens).where(where);
  return { rows, total: Number(t?.n ?? 0) };
}

/** Deletes a token: one of `userId`'s own, or (`userId` null, an admin) anyone's; undefined when there is no such token. */
export async function revokeToken(db: Db, userId: string | null, id: string): Promise<TokenRow | undefined> {
  const [row] = await db
    .delete(apiTokens)
    .where(and(eq(apiTokens.id, id), userId === null ? undefined : eq(apiTokens.userId, userId)))
    .returning();
  return row;
}

/** Deletes every token of the user (sessions opened with them go too: foreign keys cascade); the ids deleted. */
export async function revokeTokensOf(db: Db, userId: string): Promise<string[]> {
  const rows = await db.delete(apiTokens).where(eq(apiTokens.userId, userId)).returning({ id: apiTokens.id });
  return rows.map((r) => r.id);
}

/** The token's row and user when it is valid now (unexpired, user present); notes its use. */
export async function authenticateToken(db: Db, token: string, now: Date): Promise<{ token: TokenRow; user: UserRow } | undefined> {
  if (!token.startsWith(PERSONAL_TOKEN_PREFIX)) return undefined;
  const [hit] = await db
    .select({ token: apiTokens, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(and(eq(apiTokens.tokenHash, secretHash(token)), or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now))));
  if (!hit) return undefined;
  const last = hit.token.lastUsedAt?.getTime() ?? 0;
  if (now.getTime() - last >= LAST_USED_WRITE_INTERVAL_MS) {
    // Conditional, so concurrent requests on several replicas write it once. (Typed operators,
    // not raw sql: postgres-js cannot bind a Date in a raw template.)
    await db
      .update(apiTokens)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(apiTokens.id, hit.token.id),
          or(isNull(apiTokens.lastUsedAt), lte(apiTokens.lastUsedAt, new Date(now.getTime() - LAST_USED_WRITE_INTERVAL_MS))),
        ),
      );
    hit.token.lastUsedAt = now;
  }
  return hit;
}

/** Which of these token ids still exist (live streams re-check their credential). */
export async function existingTokenIds(db: Db, ids: string[], now: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(inArray(apiTokens.id, ids), or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now))));
  return new Set(rows.map((r) => r.id));
}
