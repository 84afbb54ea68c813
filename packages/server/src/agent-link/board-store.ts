import { and, asc, eq, sql } from 'drizzle-orm';
import { z } from '@hono/zod-openapi';
import type { Db } from '../db/database.ts';
import { boards, type TelemetrySample } from '../db/schema.ts';
import { TelemetrySampleSchema } from '../telemetry/telemetry-schema.ts';
import type { HelloMessage } from './board-link.ts';

export type BoardRow = typeof boards.$inferSelect;
export type BoardStatus = 'online' | 'offline' | 'rebooting';
/** What the API shows: a board enrolled with a manual key is `pending` until approved. */
export type ShownBoardStatus = BoardStatus | 'pending';

/** The board as the API shows it (docs/api.md, "Boards and operations"). */
export interface BoardObject {
  id: string;
  name: string;
  status: ShownBoardStatus;
  busy: boolean;
  last_seen_at: string | null;
  connected_at: string | null;
  agent_version: string | null;
  hostname: string | null;
  platform: string | null;
  boot_id: string | null;
  active_pac: string | null;
  labels: Record<string, string>;
  telemetry: TelemetrySample | null;
}

export const BoardSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    status: z.enum(['online', 'offline', 'rebooting', 'pending']).openapi({ description: '`pending`: enrolled with a manual-approval key, waiting for `POST /api/boards/<id>/approve/`.' }),
    busy: z.boolean().openapi({ description: 'The board is running an operation.' }),
    last_seen_at: z.string().nullable().openapi({ description: 'When the agent was last heard from (now-ish while online).' }),
    connected_at: z.string().nullable().openapi({ description: 'When the current (or last) connection was opened.' }),
    agent_version: z.string().nullable(),
    hostname: z.string().nullable(),
    platform: z.string().nullable(),
    boot_id: z.string().nullable(),
    active_pac: z.string().nullable(),
    labels: z.record(z.string(), z.string()).openapi({ description: '`{ key: value }` labels; an enrolled board starts with its provisioning key\'s.' }),
    // A union, not `.nullable()`: that would make the shared TelemetrySample component itself nullable.
    telemetry: z.union([TelemetrySampleSchema, z.null()]).openapi({ description: 'The latest telemetry sample the agent sent, or null (none yet, or an agent without telemetry).' }),
  })
  .openapi('Board');

export interface Presence {
  status: BoardStatus;
  /** While connected: when the agent was last heard from (more recent than the stored value). */
  lastHeardAt?: Date;
}

export function toBoardObject(row: BoardRow, presence: Presence, busy: boolean): BoardObject {
  const lastSeen = presence.lastHeardAt ?? row.lastSeenAt;
  return {
    id: row.id,
    name: row.name,
    status: row.pending ? 'pending' : presence.status,
    busy,
    last_seen_at: lastSeen ? lastSeen.toISOString() : null,
    connected_at: row.connectedAt ? row.connectedAt.toISOString() : null,
    agent_version: row.agentVersion,
    hostname: row.hostname,
    platform: row.platform,
    boot_id: row.bootId,
    active_pac: row.activePac,
    labels: row.labels,
    telemetry: row.telemetry ?? null,
  };
}

export async function insertBoard(db: Db, name: string, tokenHash: string): Promise<BoardRow> {
  const [row] = await db.insert(boards).values({ name, tokenHash }).returning();
  return row!;
}

export async function findBoard(db: Db, id: string): Promise<BoardRow | undefined> {
  const [row] = await db.select().from(boards).where(eq(boards.id, id));
  return row;
}

export async function findBoardByTokenHash(db: Db, tokenHash: string): Promise<BoardRow | undefined> {
  // A pending board has no working token (its hash is of a secret nobody was given); the guard says so twice.
  const [row] = await db.select().from(boards).where(and(eq(boards.tokenHash, tokenHash), eq(boards.pending, false)));
  return row;
}

/** Oldest first: a stable order as boards are added. */
export async function listBoardRows(db: Db, page: { limit: number; offset: number }): Promise<{ rows: BoardRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    db.select().from(boards).orderBy(asc(boards.createdAt), asc(boards.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(boards),
  ]);
  return { rows, total: count?.n ?? 0 };
}

/** The ids of at most `limit` registered boards (to tell "exactly one board" from "none" or "several"); pending ones do not count. */
export async function someBoardIds(db: Db, limit: number): Promise<string[]> {
  const rows = await db.select({ id: boards.id }).from(boards).where(eq(boards.pending, false)).orderBy(asc(boards.createdAt)).limit(limit);
  return rows.map((r) => r.id);
}

export async function deleteBoardRow(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(boards).where(eq(boards.id, id)).returning({ id: boards.id });
  return rows.length > 0;
}

/** Stores what the agent said in hello; undefined if the board no longer exists. */
export async function recordHello(db: Db, id: string, hello: HelloMessage, at: Date): Promise<BoardRow | undefined> {
  const [row] = await db
    .update(boards)
    .set({
      agentVersion: hello.agent_version,
      hostname: hello.hostname,
      platform: hello.platform,
      bootId: hello.boot_id,
      activePac: hello.active_pac,
      cachedContent: hello.cached,
      connectedAt: at,
      lastSeenAt: at,
    })
    .where(eq(boards.id, id))
    .returning();
  return row;
}

export async function recordLastSeen(db: Db, id: string, at: Date): Promise<void> {
  await db.update(boards).set({ lastSeenAt: at }).where(eq(boards.id, id));
}

/** The active PAC as the board last reported it (a PAC query or install; hello sets it too). */
export async function recordActivePac(db: Db, id: string, activePac: string | null): Promise<void> {
  await db.update(boards).set({ activePac }).where(eq(boards.id, id));
}
