import { and, desc, eq, inArray, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boardIncidents, boards, operations, type BoardPower, type IncidentAction } from '../db/schema.ts';

/** The rows of power/ (docs/power.md): a board's power settings and state, its incidents. */

export type IncidentRow = typeof boardIncidents.$inferSelect;
export type IncidentPhase = IncidentRow['phase'];

export interface BoardPowerRow {
  id: string;
  name: string;
  power: BoardPower | null;
  powerState: 'on' | 'off' | null;
  /** When its current (or last) link was opened. */
  connectedAt: Date | null;
}

export async function boardPowerOf(db: Db, boardId: string): Promise<BoardPowerRow | undefined> {
  const [row] = await db
    .select({ id: boards.id, name: boards.name, power: boards.power, powerState: boards.powerState, connectedAt: boards.connectedAt })
    .from(boards)
    .where(eq(boards.id, boardId));
  return row;
}

export async function boardNameOf(db: Db, boardId: string): Promise<string | undefined> {
  const [row] = await db.select({ name: boards.name }).from(boards).where(eq(boards.id, boardId));
  return row?.name;
}

/** A power operation ended (`state`) or started (no state): the board's boot is not a hang for MM_HANG_DETECT_S from now. */
export async function setPowerState(db: Db, boardId: string, state: 'on' | 'off' | undefined, at: Date): Promise<void> {
  await db
    .update(boards)
    .set({ powerChangedAt: at, ...(state ? { powerState: state } : {}) })
    .where(eq(boards.id, boardId));
}

/**
 * Boards whose link was lost (not closed by their agent) and that were last heard before
 * `before`: not pending, not switched off on purpose, no live session, no open incident.
 */
export async function silentBoards(db: Db, before: Date, sessionFresh: Date, now: Date): Promise<Array<{ id: string; lastSeenAt: Date }>> {
  const rows = await db
    .select({ id: boards.id, lastSeenAt: boards.lastSeenAt })
    .from(boards)
    .where(
      and(
        eq(boards.pending, false),
        eq(boards.linkGoodbye, false),
        isNotNull(boards.lastSeenAt),
        lt(boards.lastSeenAt, before),
        or(isNull(boards.powerState), ne(boards.powerState, 'off')),
        or(isNull(boards.powerChangedAt), lt(boards.powerChangedAt, before)),
        isNull(boards.unresponsiveSince),
        // Not again for the same silence (an incident closed `bad` leaves the board as it was).
        sql`not exists (select 1 from board_incidents i where i.board_id = ${boards.id} and i.started_at >= ${boards.lastSeenAt})`,
        sql`not exists (select 1 from board_sessions s where s.board_id = ${boards.id} and s.heartbeat_at >= ${sessionFresh.toISOString()}::timestamptz)`,
        sql`not exists (select 1 from board_reboots r where r.board_id = ${boards.id} and r.expires_at > ${now.toISOString()}::timestamptz)`,
      ),
    )
    .limit(1000);
  return rows.map((r) => ({ id: r.id, lastSeenAt: r.lastSeenAt! }));
}

/** Agent runs (`execute`) still running that started before `before`: past their bound. */
export async function runsPastBound(db: Db, before: Date): Promise<Array<{ id: number; boardId: string; startedAt: Date }>> {
  const rows = await db
    .select({ id: operations.id, boardId: operations.boardId, startedAt: operations.startedAt })
    .from(operations)
    .where(and(eq(operations.status, 'running'), eq(operations.kind, 'execute'), isNotNull(operations.boardId), lt(operations.startedAt, before)))
    .limit(1000);
  return rows.map((r) => ({ id: r.id, boardId: r.boardId!, startedAt: r.startedAt! }));
}

/** How these operations stand now (status and error message). */
export async function operationStates(db: Db, ids: number[]): Promise<Map<number, { status: string; errorMessage: string | null; boardId: string | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: operations.id, status: operations.status, error: operations.error, boardId: operations.boardId }).from(operations).where(inArray(operations.id, ids));
  return new Map(rows.map((r) => [r.id, { status: r.status, errorMessage: r.error?.message ?? null, boardId: r.boardId }]));
}

/**
 * Opens an incident (and marks the board `unresponsive`) unless one is open: in one
 * transaction, the partial unique index keeping one open incident per board across replicas.
 */
export async function openIncident(db: Db, boardId: string, startedAt: Date, now: Date, reason: string): Promise<IncidentRow | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(boardIncidents)
      .values({ boardId, startedAt, detectedAt: now, reason, phase: 'detected', phaseAt: now })
      .onConflictDoNothing()
      .returning();
    if (!row) return undefined;
    await tx.update(boards).set({ unresponsiveSince: startedAt }).where(eq(boards.id, boardId));
    return row;
  });
}

export async function openIncidents(db: Db): Promise<IncidentRow[]> {
  return db.select().from(boardIncidents).where(isNull(boardIncidents.outcome)).orderBy(boardIncidents.id);
}

export async function incidentsOf(db: Db, boardId: string, limit: number): Promise<IncidentRow[]> {
  return db.select().from(boardIncidents).where(eq(boardIncidents.boardId, boardId)).orderBy(desc(boardIncidents.id)).limit(limit);
}

/** Power cycles the recovery made of this board since `since` (across its incidents). */
export async function cyclesSince(db: Db, boardId: string, since: Date): Promise<number> {
  const rows = await db.select({ actions: boardIncidents.actions }).from(boardIncidents).where(eq(boardIncidents.boardId, boardId));
  let n = 0;
  for (const r of rows) for (const a of r.actions) if (a.action === 'power_cycle' && new Date(a.at) >= since) n++;
  return n;
}

/**
 * Moves an open incident from `from` to `to` (a conditional UPDATE: of two replicas looking,
 * one wins), appending `action` when given. The updated row, or undefined if another moved it.
 */
export async function advanceIncident(
  db: Db,
  id: number,
  from: IncidentPhase,
  to: IncidentPhase,
  now: Date,
  action?: IncidentAction,
): Promise<IncidentRow | undefined> {
  const [row] = await db
    .update(boardIncidents)
    .set({
      phase: to,
      phaseAt: now,
      ...(action ? { actions: sql`${boardIncidents.actions} || ${JSON.stringify([action])}::jsonb` } : {}),
    })
    .where(and(eq(boardIncidents.id, id), eq(boardIncidents.phase, from), isNull(boardIncidents.outcome)))
    .returning();
  return row;
}

/** The operations of the incident's last action (started after the phase was claimed). */
export async function setLastActionOperations(db: Db, incident: IncidentRow, ids: number[]): Promise<IncidentRow> {
  const actions = incident.actions.map((a, i) => (i === incident.actions.length - 1 ? { ...a, operation_ids: ids } : a));
  await db.update(boardIncidents).set({ actions }).where(eq(boardIncidents.id, incident.id));
  return { ...incident, actions };
}

/** Notes the outcome of the incident's last action. */
export async function noteLastActionOutcome(db: Db, incident: IncidentRow, outcome: string): Promise<void> {
  const actions = incident.actions.map((a, i) => (i === incident.actions.length - 1 ? { ...a, outcome } : a));
  await db.update(boardIncidents).set({ actions }).where(eq(boardIncidents.id, incident.id));
}

/**
 * Closes an open incident: `recovered` (back in service: unresponsive no more), `bad` (the
 * board's health goes `bad` with `reason`, which board.health_changed carries), or
 * `resolved`. Undefined if it was closed already.
 */
export async function closeIncident(
  db: Db,
  incident: IncidentRow,
  outcome: 'recovered' | 'bad' | 'resolved',
  now: Date,
  badReason?: string,
): Promise<IncidentRow | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(boardIncidents)
      .set({ outcome, phase: 'closed', phaseAt: now, ...(outcome === 'recovered' ? { recoveredAt: now } : {}) })
      .where(and(eq(boardIncidents.id, incident.id), isNull(boardIncidents.outcome)))
      .returning();
    if (!row) return undefined;
    await tx
      .update(boards)
      .set({
        unresponsiveSince: null,
        ...(outcome === 'bad' ? { health: 'bad' as const, healthReason: (badReason ?? incident.reason).slice(0, 1000), healthCheckedAt: now } : {}),
      })
      .where(eq(boards.id, incident.boardId));
    return row;
  });
}

/** The board's health as its checks left it. */
export async function boardHealthOf(db: Db, boardId: string): Promise<{ health: string; reason: string | null } | undefined> {
  const [row] = await db.select({ health: boards.health, reason: boards.healthReason }).from(boards).where(eq(boards.id, boardId));
  return row && { health: row.health, reason: row.reason };
}
