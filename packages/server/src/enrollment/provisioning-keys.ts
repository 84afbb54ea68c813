import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import { z } from '@hono/zod-openapi';
import type { Db } from '../db/database.ts';
import { provisioningKeys } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import { newSecret, secretHash } from '../auth/secrets.ts';

export type ProvisioningKeyRow = typeof provisioningKeys.$inferSelect;
export type Approval = 'auto' | 'manual';

/**
 * Provisioning keys start with this. The auth middleware only takes personal tokens
 * (`mmu_`) and the agent link only board tokens, so a key can do nothing but enroll.
 */
export const PROVISIONING_KEY_PREFIX = 'mmk_';

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

/** A provisioning key as the API shows it (never the key itself). */
export const ProvisioningKeySchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    labels: z.record(z.string(), z.string()).openapi({ description: 'Every board enrolled with the key starts with these labels.' }),
    expires_at: isoTime.nullable(),
    max_boards: z.number().int().nullable().openapi({ description: 'How many boards may enroll with it; null: no limit.' }),
    boards_enrolled: z.number().int().openapi({ description: 'How many boards have enrolled with it so far.' }),
    approval: z.enum(['auto', 'manual']).openapi({ description: '`manual`: enrolled boards stay `pending` until an admin approves them.' }),
    created_by: z.string().nullable(),
    created_at: isoTime,
  })
  .openapi('ProvisioningKey');
export type ProvisioningKeyObject = z.infer<typeof ProvisioningKeySchema>;

export const toProvisioningKeyObject = (k: ProvisioningKeyRow): ProvisioningKeyObject => ({
  id: k.id,
  name: k.name,
  labels: k.labels,
  expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
  max_boards: k.maxBoards,
  boards_enrolled: k.enrolledCount,
  approval: k.approval,
  created_by: k.createdBy,
  created_at: k.createdAt.toISOString(),
});

export const provisioningKeyNotFound = (id: string) => new NotFoundError('provisioning_key_not_found', `No provisioning key with id ${id}.`);

export interface NewProvisioningKey {
  name: string;
  labels: Record<string, string>;
  expiresAt: Date | null;
  maxBoards: number | null;
  approval: Approval;
  createdBy: string | null;
}

export async function createProvisioningKey(db: Db, k: NewProvisioningKey): Promise<{ row: ProvisioningKeyRow; key: string }> {
  const key = newSecret(PROVISIONING_KEY_PREFIX);
  const [row] = await db.insert(provisioningKeys).values({ ...k, keyHash: secretHash(key) }).returning();
  return { row: row!, key };
}

export async function listProvisioningKeys(db: Db, page: { limit: number; offset: number }) {
  const [rows, [count]] = await Promise.all([
    db.select().from(provisioningKeys).orderBy(desc(provisioningKeys.createdAt), desc(provisioningKeys.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(provisioningKeys),
  ]);
  return { rows, total: count?.n ?? 0 };
}

export async function deleteProvisioningKey(db: Db, id: string): Promise<ProvisioningKeyRow | undefined> {
  const [row] = await db.delete(provisioningKeys).where(eq(provisioningKeys.id, id)).returning();
  return row;
}

/** The key's row when it exists and has not expired; undefined for anything else (all answer 401 alike). */
export async function findUsableKey(db: Db, key: string, now: Date): Promise<ProvisioningKeyRow | undefined> {
  if (!key.startsWith(PROVISIONING_KEY_PREFIX)) return undefined;
  const [row] = await db
    .select()
    .from(provisioningKeys)
    .where(and(eq(provisioningKeys.keyHash, secretHash(key)), or(isNull(provisioningKeys.expiresAt), gt(provisioningKeys.expiresAt, now))));
  return row;
}

/**
 * Counts one more board against the key's `max_boards`, atomically (two machines enrolling
 * at once cannot both take the last place). False when the key is used up.
 */
export async function takeEnrollmentPlace(db: Db, keyId: string): Promise<boolean> {
  const rows = await db
    .update(provisioningKeys)
    .set({ enrolledCount: sql`${provisioningKeys.enrolledCount} + 1` })
    .where(and(eq(provisioningKeys.id, keyId), or(isNull(provisioningKeys.maxBoards), lt(provisioningKeys.enrolledCount, provisioningKeys.maxBoards))))
    .returning({ id: provisioningKeys.id });
  return rows.length > 0;
}
