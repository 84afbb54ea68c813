import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { MessageOf, PacRecord } from '@mm/protocol';
import { mergeLabels, selectorMatchesSql } from './board-selector.ts';
import { z } from '@hono/zod-openapi';
import type { Db } from '../db/database.ts';
import { boards, boardScripts, type BoardPower, type TelemetrySample } from '../db/schema.ts';
import { isUniqueViolationOf } from '../db/pg-error.ts';
import { TelemetrySampleSchema } from './telemetry-schema.ts';
import { RESERVED_LABEL_PREFIX } from './label-schema.ts';
import { agentLabelsFromFacts, factsOfHello, type Facts } from './board-facts.ts';

export type BoardRow = typeof boards.$inferSelect;
export type BoardStatus = 'online' | 'offline' | 'rebooting';
/** What the API shows: a board enrolled with a manual key is `pending` until approved; one that hung is `unresponsive` (docs/power.md). */
export type ShownBoardStatus = BoardStatus | 'pending' | 'unresponsive';

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
  created_at: string;
  /** Enrolled boards (a provisioning key): the agent's machine id, where and when it enrolled; null for a registered board. */
  machine_id: string | null;
  enrolled_from: string | null;
  enrolled_at: string | null;
  /** A re-enrolment held for an admin (enrollment/enroll.ts), or null. */
  reenroll_request: { hostname: string; address: string | null; requested_at: string; approved: boolean } | null;
  /** The lease in force on it (docs/reservations.md): who holds it and until when. */
  reservation: BoardReservation;
  /** Its power controller (docs/power.md), or null. */
  power: BoardPower | null;
  /** The device scripts it reports (docs/device-scripts.md), by name: a `failed` one shows on the boards list. */
  scripts: BoardScriptSummary[];
}

export interface BoardScriptSummary {
  script_id: string;
  name: string;
  state: 'running' | 'stopped' | 'failed';
  restarts: number;
  since: string;
}

/** The device scripts each of these boards reports (the agents' last `scripts.state`), by name. */
export async function scriptsOfBoards(db: Db, boardIds: string[]): Promise<Map<string, BoardScriptSummary[]>> {
  const out = new Map<string, BoardScriptSummary[]>();
  if (boardIds.length === 0) return out;
  const rows = await db.select().from(boardScripts).where(inArray(boardScripts.boardId, boardIds)).orderBy(asc(boardScripts.name));
  for (const r of rows) {
    const list = out.get(r.boardId) ?? [];
    list.push({ script_id: r.scriptId, name: r.name, state: r.state as BoardScriptSummary['state'], restarts: r.restarts, since: r.since.toISOString() });
    out.set(r.boardId, list);
  }
  return out;
}

export type BoardReservation = { id: number; user: string | null; ends_at: string } | null;

export const BoardPowerSchema = z
  .object({
    controller_board_id: z.string().uuid().openapi({ description: 'The lab host: a board whose agent has MM_PDUDAEMON_URL and relays the command to that pdudaemon' }),
    pdu_hostname: z.string().trim().min(1).max(255).regex(/^[^\s&?#/]+$/, 'a pdudaemon PDU name (no spaces, &, ?, # or /)').openapi({ description: "The PDU's name in pdudaemon's configuration (its `pdus` key)" }),
    pdu_port: z.number().int().min(0).max(65535).openapi({ description: 'The outlet (port) on that PDU' }),
  })
  .strict()
  .openapi('BoardPower', { example: { controller_board_id: '0b7c1d7e-5f7a-4d7e-9a53-0d1f2e3a4b5c', pdu_hostname: 'lab-pdu-1', pdu_port: 3 } });

export const BoardSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    status: z
      .enum(['online', 'offline', 'rebooting', 'pending', 'unresponsive'])
      .openapi({ description: '`pending`: enrolled with a manual-approval key, waiting for `POST /api/boards/<id>/approve/`. `unresponsive`: it stopped answering (no heartbeat past MM_HANG_DETECT_S, or a run past its bound that did not answer cancel) and is not back in service yet (docs/power.md).' }),
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
    created_at: z.string().openapi({ description: 'When it was registered or enrolled' }),
    machine_id: z.string().nullable().openapi({ description: 'Enrolled boards: the machine id its agent enrolled with (one board per key and machine id); null for a registered board' }),
    enrolled_from: z.string().nullable().openapi({ description: 'Enrolled boards: the address its enrolment came from' }),
    enrolled_at: z.string().nullable().openapi({ description: 'Enrolled boards: when it enrolled' }),
    reenroll_request: z
      .object({ hostname: z.string(), address: z.string().nullable(), requested_at: z.string(), approved: z.boolean() })
      .nullable()
      .openapi({ description: 'Someone enrolled again with its key and machine id without proving it is this board: held until an admin approves it (`POST /api/boards/<id>/approve/`; `approved` then, until the next enroll call takes the new token). The board keeps its token meanwhile.' }),
    reservation: z
      .object({ id: z.number().int(), user: z.string().nullable(), ends_at: z.string() })
      .nullable()
      .openapi({ description: 'The lease in force on it (docs/reservations.md): who holds it and until when; null when nobody does. Others\' selector and rollout work keeps off it meanwhile, and their work naming it waits.' }),
    power: z
      .union([BoardPowerSchema, z.null()])
      .openapi({ description: 'Its power controller (docs/power.md): the lab host relaying to pdudaemon, and the PDU name and port there; null when its power cannot be switched.' }),
    scripts: z
      .array(
        z.object({
          script_id: z.string(),
          name: z.string(),
          state: z.enum(['running', 'stopped', 'failed']),
          restarts: z.number().int(),
          since: z.string(),
        }),
      )
      .openapi({ description: "The device scripts it reports (docs/device-scripts.md), by name: `failed` (exited, waiting for its supervisor's next restart) with how many restarts so far" }),
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

export function toBoardObject(row: BoardRow, presence: Presence, busy: boolean, load?: BoardLoad, reservation: BoardReservation = null, scripts: BoardScriptSummary[] = []): BoardObject {
  const lastSeen = presence.lastHeardAt ?? row.lastSeenAt;
  return {
    id: row.id,
    name: row.name,
    status: row.pending ? 'pending' : row.unresponsiveSince ? 'unresponsive' : presence.status,
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
    created_at: row.createdAt.toISOString(),
    machine_id: row.machineId,
    enrolled_from: row.enrolledFrom,
    enrolled_at: row.machineId !== null ? row.createdAt.toISOString() : null,
    reenroll_request: row.reenroll ?? null,
    reservation,
    power: row.power ?? null,
    scripts,
  };
}

/** The unique index on board names (migration 0024). */
export const BOARD_NAME_INDEX = 'boards_name_idx';

/** The error is a second board with a name already taken. */
export const isBoardNameTaken = (err: unknown) => isUniqueViolationOf(err, BOARD_NAME_INDEX);

/** A new board; `'name_taken'` when another board has that name. */
export async function insertBoard(db: Db, name: string, tokenHash: string): Promise<BoardRow | 'name_taken'> {
  try {
    const [row] = await db.insert(boards).values({ name, tokenHash }).returning();
    return row!;
  } catch (err) {
    if (isBoardNameTaken(err)) return 'name_taken';
    throw err;
  }
}

/**
 * The name an enrolled board gets: its serial where the agent read one (FRU/EEPROM: a
 * `serial` fact), else `<hostname>-<first 6 of its machine id>` (cloned images share a host
 * name; their machine ids differ). Renamed freely afterwards.
 */
export function enrolledBoardName(hostname: string, machineId: string, facts: Record<string, unknown> | undefined): string {
  const serial = facts?.serial;
  if (typeof serial === 'string' && serial.trim() !== '') return serial.trim().slice(0, 200);
  const host = hostname.trim() || 'board';
  const id = machineId.replace(/[^0-9a-zA-Z]/g, '').slice(0, 6).toLowerCase();
  return (id ? `${host.slice(0, 190)}-${id}` : host.slice(0, 200));
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
    else if (f.status === 'unresponsive') parts.push(sql`not ${boards.pending} and ${boards.unresponsiveSince} is not null`);
    else {
      parts.push(eq(boards.pending, false), sql`${boards.unresponsiveSince} is null`);
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
export async function recordHello(db: Db, id: string, hello: MessageOf<'hello'>, at: Date): Promise<BoardRow | undefined> {
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

/** Its link ended: when it was last heard, and whether the agent said goodbye (closed it on purpose: no hang). */
export async function recordLastSeen(db: Db, id: string, at: Date, goodbye = false): Promise<void> {
  await db.update(boards).set({ lastSeenAt: at, linkGoodbye: goodbye }).where(eq(boards.id, id));
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

/** The board's last known PACs as its row keeps them (pacs/pac-lists.ts); undefined: no such board. */
export async function readStoredPacs(
  db: Db,
  id: string,
): Promise<{ pacs: PacRecord[] | null; listedAt: Date | null; active: string | null; connectedAt: Date | null } | undefined> {
  const [row] = await db
    .select({ pacs: boards.pacs, listedAt: boards.pacsListedAt, active: boards.activePac, connectedAt: boards.connectedAt })
    .from(boards)
    .where(eq(boards.id, id));
  return row;
}

export async function recordActivePac(db: Db, id: string, activePac: string | null, listed?: { pacs: PacRecord[]; at: Date }): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ facts: boards.facts }).from(boards).where(eq(boards.id, id)).for('update');
    if (!row) return;
    const facts = { ...(row.facts ?? {}), active_pac: activePac };
    // With the whole list (a query answered it): kept as the board's last known PACs (pacs/pac-lists.ts).
    const list = listed ? { pacs: listed.pacs, pacsListedAt: listed.at } : {};
    await tx.update(boards).set({ activePac, facts, labels: withAgentLabels(agentLabelsFromFacts(facts)), ...list }).where(eq(boards.id, id));
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
  change: { name?: string | undefined; labels?: Record<string, string> | undefined; maintenance?: boolean | undefined; power?: BoardPower | null | undefined },
): Promise<BoardRow | undefined | 'name_taken'> {
  if (change.name !== undefined) {
    const [other] = await db.select({ id: boards.id }).from(boards).where(and(eq(boards.name, change.name), sql`${boards.id} <> ${id}`));
    if (other) return 'name_taken';
  }
  try {
    return await updateBoardRow(db, id, change);
  } catch (err) {
    if (isBoardNameTaken(err)) return 'name_taken';
    throw err;
  }
}

async function updateBoardRow(
  db: Db,
  id: string,
  change: { name?: string | undefined; labels?: Record<string, string> | undefined; maintenance?: boolean | undefined; power?: BoardPower | null | undefined },
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
        ...(change.power !== undefined ? { power: change.power } : {}),
      })
      .where(eq(boards.id, id))
      .returning();
    return row;
  });
}

/** Which boards a bulk label change touches: these ids, or every board its selector matches. */
export type BoardTarget = { ids: string[] } | { selector: Record<string, string> };

/**
 * `POST /api/boards/labels/`: on every targeted board, the `remove` keys go and the `set` pairs
 * are set (the agent's `mm/` labels are never touched: neither list may name one), in one
 * statement per call, in one transaction. `'too_many'` (nothing changed) when a board would
 * end with more than `maxLabels` labels of people's.
 */
export async function relabelBoards(
  db: Db,
  target: BoardTarget,
  change: { set: Record<string, string>; remove: string[] },
  maxLabels: number,
): Promise<BoardRow[] | { tooMany: string }> {
  const where = 'ids' in target ? sql`${boards.id} = any(array(select jsonb_array_elements_text(${JSON.stringify(target.ids)}::jsonb))::uuid[])` : selectorMatchesSql(boards.labels, target.selector);
  try {
    return await db.transaction(async (tx) => {
      const rows = await tx
        .update(boards)
        .set({
          labels: sql`(${boards.labels} - array(select jsonb_array_elements_text(${JSON.stringify(change.remove)}::jsonb))) || ${JSON.stringify(change.set)}::jsonb`,
        })
        .where(where)
        .returning();
      const over = rows.find((r) => Object.keys(r.labels).filter((k) => !k.startsWith(RESERVED_LABEL_PREFIX)).length > maxLabels);
      if (over) throw new TooManyLabels(over.name);
      return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    });
  } catch (err) {
    if (err instanceof TooManyLabels) return { tooMany: err.board };
    throw err;
  }
}

class TooManyLabels extends Error {
  constructor(readonly board: string) {
    super(`board ${board} would hold too many labels`);
  }
}
