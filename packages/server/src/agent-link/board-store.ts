import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { mergeLabels, selectorMatchesSql } from '../fleet/board-selector.ts';
import { z } from '@hono/zod-openapi';
import type { Db } from '../db/database.ts';
import { boards, type TelemetrySample } from '../db/schema.ts';
import { TelemetrySampleSchema } from '../telemetry/telemetry-schema.ts';
import { RESERVED_LABEL_PREFIX } from '../enrollment/label-schema.ts';
import { agentLabelsFromFacts, factsOfHello, type Facts } from '../fleet/board-facts.ts';
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
  facts: Facts | null;
  /** Fleet (docs/fleet.md): under repair, no selector work. */
  maintenance: boolean;
  health: 'unknown' | 'good' | 'bad';
  health_reason: string | null;
  health_checked_at: string | null;
  /** The operation it runs now, if any. */
  current_operation_id: number | null;
  /** Operations waiting for it (named to it, or given to it by the scheduler). */
  queued: number;
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
    labels: z.record(z.string(), z.string()).openapi({ description: '`{ key: value }` labels; an enrolled board starts with its provisioning key\'s. Keys under `mm/` are the agent\'s, read-only, derived from its facts.' }),
    facts: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({
        description: 'What the agent found on the board (`arch, os, kernel, board_model, cpu_count, memory_bytes, disk_free_bytes, agent_version, node_version, active_pac`, and more where known), refreshed at every hello and when they change; null before its first hello.',
        example: { arch: 'arm64', os: 'Ubuntu 22.04.4 LTS', board_model: 'Kria KV260 Vision AI Starter Kit', cpu_count: 4, memory_bytes: 4118261760, active_pac: 'kv260-bist' },
      }),
    // A union, not `.nullable()`: that would make the shared TelemetrySample component itself nullable.
    telemetry: z.union([TelemetrySampleSchema, z.null()]).openapi({ description: 'The latest telemetry sample the agent sent, or null (none yet, or an agent without telemetry).' }),
    maintenance: z.boolean().openapi({ description: 'Under repair: takes no selector work (work naming it still runs)' }),
    health: z.enum(['unknown', 'good', 'bad']).openapi({ description: 'From its health checks: `unknown` until one ran; a `bad` board takes no selector work' }),
    health_reason: z.string().nullable().openapi({ description: 'Why it is `bad` (`fps 3.1 < min 10`)' }),
    health_checked_at: z.string().nullable(),
    current_operation_id: z.number().int().nullable().openapi({ description: 'The operation it runs now' }),
    queued: z.number().int().openapi({ description: 'Operations waiting for it' }),
  })
  .openapi('Board');

export interface Presence {
  status: BoardStatus;
  /** While connected: when the agent was last heard from (more recent than the stored value). */
  lastHeardAt?: Date;
}

export interface BoardLoad {
  running: number | null;
  queued: number;
}

export function toBoardObject(row: BoardRow, presence: Presence, busy: boolean, load?: BoardLoad): BoardObject {
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
    facts: row.facts ?? null,
    maintenance: row.maintenance,
    health: row.health,
    health_reason: row.healthReason,
    health_checked_at: row.healthCheckedAt ? row.healthCheckedAt.toISOString() : null,
    current_operation_id: load?.running ?? null,
    queued: load?.queued ?? 0,
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

/** `GET /api/boards/` filters (docs/fleet.md): every label pair, presence (as the session tables say), health. */
export interface BoardFilters {
  labels?: Record<string, string> | undefined;
  status?: ShownBoardStatus | undefined;
  health?: 'unknown' | 'good' | 'bad' | undefined;
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
}

function boardFilterWhere(f: BoardFilters): SQL | undefined {
  const parts: SQL[] = [];
  if (f.labels && Object.keys(f.labels).length) parts.push(selectorMatchesSql(boards.labels, f.labels));
  if (f.health !== undefined) parts.push(eq(boards.health, f.health));
  if (f.status !== undefined) {
    const fresh = sql`now() - ${Math.round(f.sessionStaleMs)}::int * interval '1 millisecond'`;
    const linked = sql`exists (select 1 from board_sessions s where s.board_id = ${boards.id} and s.heartbeat_at >= ${fresh})`;
    const rebooting = sql`exists (select 1 from board_reboots r where r.board_id = ${boards.id} and r.expires_at > now())`;
    if (f.status === 'pending') parts.push(eq(boards.pending, true));
    else {
      parts.push(eq(boards.pending, false));
      if (f.status === 'rebooting') parts.push(rebooting);
      else if (f.status === 'online') parts.push(sql`${linked} and not ${rebooting}`);
      else parts.push(sql`not ${linked} and not ${rebooting}`);
    }
  }
  return parts.length ? and(...parts) : undefined;
}

/** Oldest first: a stable order as boards are added. */
export async function listBoardRows(
  db: Db,
  page: { limit: number; offset: number },
  filters?: BoardFilters,
): Promise<{ rows: BoardRow[]; total: number }> {
  const where = filters && boardFilterWhere(filters);
  const [rows, [count]] = await Promise.all([
    db.select().from(boards).where(where).orderBy(asc(boards.createdAt), asc(boards.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(boards).where(where),
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

/**
 * SQL for the labels column with its `mm/` part replaced by `agentLabels`: the people's
 * labels are kept as they are in the row being updated (one statement, so a concurrent
 * change of them is not lost). The SQL form of board-selector.ts `mergeLabels`.
 */
function withAgentLabels(agentLabels: Record<string, string>) {
  return sql`coalesce((select jsonb_object_agg(l.key, l.value) from jsonb_each(${boards.labels}) l where l.key not like ${`${RESERVED_LABEL_PREFIX}%`}), '{}'::jsonb) || ${JSON.stringify(agentLabels)}::jsonb`;
}

/** Stores what the agent said in hello, its facts and their `mm/` labels; undefined if the board no longer exists. */
export async function recordHello(db: Db, id: string, hello: HelloMessage, at: Date): Promise<BoardRow | undefined> {
  const facts = factsOfHello(hello);
  const [row] = await db
    .update(boards)
    .set({
      facts,
      labels: withAgentLabels(agentLabelsFromFacts(facts)),
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

/**
 * New facts from the agent (`board.facts`): stored with their `mm/` labels; the agent version
 * follows them. The active PAC does not: it changes only at a boot, which the hello reports and
 * a PAC activation's verified reboot records (recordActivePac). Between an activation and its
 * reboot the board's `xlnx-config -q` already names the next PAC, which is not running yet.
 */
export async function recordFacts(db: Db, id: string, facts: Facts): Promise<BoardRow | undefined> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select({ activePac: boards.activePac }).from(boards).where(eq(boards.id, id)).for('update');
    if (!current) return undefined;
    const kept = { ...facts, active_pac: current.activePac };
    const [row] = await tx
      .update(boards)
      .set({
        facts: kept,
        labels: withAgentLabels(agentLabelsFromFacts(kept)),
        ...(typeof facts.agent_version === 'string' ? { agentVersion: facts.agent_version } : {}),
      })
      .where(eq(boards.id, id))
      .returning();
    return row;
  });
}

export async function recordActivePac(db: Db, id: string, activePac: string | null): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ facts: boards.facts }).from(boards).where(eq(boards.id, id)).for('update');
    if (!row) return;
    const facts = { ...(row.facts ?? {}), active_pac: activePac };
    await tx.update(boards).set({ activePac, facts, labels: withAgentLabels(agentLabelsFromFacts(facts)) }).where(eq(boards.id, id));
  });
}

/**
 * `PATCH /api/boards/<id>/`: a new name, the people's labels (the agent's `mm/` ones are kept:
 * mergeLabels, under a row lock so a hello storing them meanwhile is not lost), maintenance.
 * The updated row, or undefined if there is no such board.
 */
export async function updateBoard(
  db: Db,
  id: string,
  change: { name?: string | undefined; labels?: Record<string, string> | undefined; maintenance?: boolean | undefined },
): Promise<BoardRow | undefined> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(boards).where(eq(boards.id, id)).for('update');
    if (!current) return undefined;
    const [row] = await tx
      .update(boards)
      .set({
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.labels !== undefined ? { labels: mergeLabels(change.labels, current.labels) } : {}),
        ...(change.maintenance !== undefined ? { maintenance: change.maintenance } : {}),
      })
      .where(eq(boards.id, id))
      .returning();
    return row;
  });
}
