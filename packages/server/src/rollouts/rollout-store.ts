import { and, asc, desc, eq, getTableColumns, inArray, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import type { RolloutEngineStore } from './rollout-engine.ts';
import { queryRows } from '../db/rows.ts';
import { boards, operations, rolloutBoards, rollouts, type RolloutLeftOut } from '../db/schema.ts';
import { selectorMatchesSql, type BoardSelector } from '../boards/board-selector.ts';
import type { RolloutBoardRow, RolloutRow } from './rollout-object.ts';
import { reservedForOthersSql } from '../reservations/reservation-sql.ts';

/**
 * Every query of the rollout tables. Each change that more than one replica could make at
 * the same time is one conditional UPDATE (a phase is claimed by moving `phases_started`
 * from n to n+1, a step by moving it from `pending` to `starting`), so two replicas never
 * start the same phase or the same step twice.
 */

/** Which held boards a rollout takes anyway (the request's `include_maintenance`, `include_bad`). */
export interface HeldBoardsIncluded {
  maintenance: boolean;
  bad: boolean;
}

/**
 * Registered (not pending approval) boards whose labels hold every pair of the selector, by
 * name: the rollout's `members`, and the ones it leaves out (issue 46): a board in maintenance
 * or `bad` is kept out of the way, as selector work does (docs/fleet.md), unless the request
 * includes it. One in maintenance and `bad` is left out for maintenance.
 */
export async function matchingBoards(
  db: Db,
  selector: BoardSelector,
  include: HeldBoardsIncluded = { maintenance: true, bad: true },
): Promise<{ members: Array<{ id: string; name: string }>; leftOut: RolloutLeftOut[] }> {
  const rows = await db
    .select({ id: boards.id, name: boards.name, maintenance: boards.maintenance, health: boards.health })
    .from(boards)
    .where(and(selectorMatchesSql(boards.labels, selector), eq(boards.pending, false)))
    .orderBy(asc(boards.name), asc(boards.id));
  const members: Array<{ id: string; name: string }> = [];
  const leftOut: RolloutLeftOut[] = [];
  for (const b of rows) {
    const reason = b.maintenance && !include.maintenance ? 'maintenance' : b.health === 'bad' && !include.bad ? 'bad' : undefined;
    if (reason) leftOut.push({ board_id: b.id, board_name: b.name, reason });
    else members.push({ id: b.id, name: b.name });
  }
  return { members, leftOut };
}

export interface NewRollout {
  kind: string;
  boardSelector: BoardSelector;
  invocationId: number | null;
  params: Record<string, unknown>;
  batchSize: number | null;
  batchIntervalS: number;
  abort: { failure_percent: number; min_finished: number } | null;
  createdBy: string | null;
  leftOut?: RolloutLeftOut[];
}

export async function insertRollout(db: Db, input: NewRollout, members: Array<{ id: string; name: string }>): Promise<RolloutRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(rollouts).values(input).returning();
    await tx.insert(rolloutBoards).values(
      members.map((b, position) => ({
        rolloutId: row!.id,
        position,
        boardId: b.id,
        boardName: b.name,
        phase: input.batchSize ? Math.floor(position / input.batchSize) : 0,
      })),
    );
    return row!;
  });
}

export async function findRolloutRow(db: Db, id: number): Promise<RolloutRow | undefined> {
  const [row] = await db.select().from(rollouts).where(eq(rollouts.id, id));
  return row;
}

export async function boardRowsOf(db: Db, ids: number[]): Promise<Map<number, RolloutBoardRow[]>> {
  const out = new Map<number, RolloutBoardRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  // With the step's board offline mid-run (operations/board-lost.ts): since when; and a failed step's reason.
  const rows = await db
    .select({
      ...getTableColumns(rolloutBoards),
      boardOfflineSince: sql<Date | null>`case when ${operations.status} = 'running' then ${operations.boardOfflineSince} end`.mapWith(operations.boardOfflineSince),
      // Why a failed (or cancelled) step ended: its operation's error, shown beside the step.
      stepError: sql<{ code: string; message: string } | null>`case when ${rolloutBoards.status} in ('failed', 'cancelled') then ${operations.error} end`.mapWith(operations.error),
    })
    .from(rolloutBoards)
    .leftJoin(operations, eq(operations.id, rolloutBoards.operationId))
    .where(inArray(rolloutBoards.rolloutId, ids))
    .orderBy(asc(rolloutBoards.rolloutId), asc(rolloutBoards.position));
  for (const r of rows) out.get(r.rolloutId)?.push(r);
  return out;
}

export async function listRolloutRows(
  db: Db,
  filters: { status?: string | undefined; kind?: string | undefined },
  page: { limit: number; offset: number },
): Promise<{ rows: RolloutRow[]; total: number }> {
  const conds: SQL[] = [];
  if (filters.status) conds.push(eq(rollouts.status, filters.status));
  if (filters.kind) conds.push(eq(rollouts.kind, filters.kind));
  const where = conds.length > 0 ? and(...conds) : undefined;
  const [rows, [count]] = await Promise.all([
    db.select().from(rollouts).where(where).orderBy(desc(rollouts.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)::int` }).from(rollouts).where(where),
  ]);
  return { rows, total: Number(count?.n ?? 0) };
}

/** Moves the status from one of `from` to `to`; undefined if it was not in `from` any more. */
export async function changeStatus(db: Db, id: number, from: string[], to: string): Promise<RolloutRow | undefined> {
  const [row] = await db
    .update(rollouts)
    .set({ status: to })
    .where(and(eq(rollouts.id, id), inArray(rollouts.status, from)))
    .returning();
  return row;
}

/** Claims phase `phasesStarted` (0 first) of a running rollout; undefined if another replica did, or it is not running. */
export async function claimPhase(db: Db, id: number, phasesStarted: number): Promise<RolloutRow | undefined> {
  const [row] = await db
    .update(rollouts)
    .set({ phasesStarted: phasesStarted + 1, phaseEndedAt: null })
    .where(and(eq(rollouts.id, id), eq(rollouts.phasesStarted, phasesStarted), eq(rollouts.status, 'running')))
    .returning();
  return row;
}

/** Notes when every started phase had ended (once). */
export async function markPhaseEnded(db: Db, id: number, phasesStarted: number, at: Date): Promise<void> {
  await db
    .update(rollouts)
    .set({ phaseEndedAt: at })
    .where(and(eq(rollouts.id, id), eq(rollouts.phasesStarted, phasesStarted), isNull(rollouts.phaseEndedAt)));
}

export async function markFinished(db: Db, id: number, at: Date): Promise<RolloutRow | undefined> {
  const [row] = await db
    .update(rollouts)
    .set({ finishedAt: at })
    .where(and(eq(rollouts.id, id), isNull(rollouts.finishedAt), inArray(rollouts.status, ['succeeded', 'failed', 'aborted', 'cancelled'])))
    .returning();
  return row;
}

/** A pending step of a running rollout becomes `starting` for this replica; false if it was not pending or the rollout stopped. */
export async function claimStep(db: Db, rolloutId: number, position: number, replicaId: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(rolloutBoards)
    .set({ status: 'starting', claimedBy: replicaId, claimedAt: at })
    .where(
      and(
        eq(rolloutBoards.rolloutId, rolloutId),
        eq(rolloutBoards.position, position),
        eq(rolloutBoards.status, 'pending'),
        sql`exists (select 1 from ${rollouts} where ${rollouts.id} = ${rolloutId} and ${rollouts.status} = 'running')`,
      ),
    )
    .returning({ position: rolloutBoards.position });
  return rows.length > 0;
}

export async function recordStepOperation(db: Db, rolloutId: number, position: number, operationId: number): Promise<void> {
  await db
    .update(rolloutBoards)
    .set({ operationId, status: 'queued' })
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.position, position), eq(rolloutBoards.status, 'starting')));
}

/** A step that could not be started (its board was deleted, the request was refused): failed at once. */
export async function failStep(db: Db, rolloutId: number, position: number, at: Date): Promise<void> {
  await db
    .update(rolloutBoards)
    .set({ status: 'failed', finishedAt: at })
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.position, position), inArray(rolloutBoards.status, ['starting', 'pending'])));
}

/** Stores what the step's operation says now; false if nothing changed. */
export async function updateStep(
  db: Db,
  rolloutId: number,
  position: number,
  from: string,
  to: { status: string; runMs?: number | null; metrics?: Record<string, number> | null; finishedAt?: Date | null },
): Promise<boolean> {
  const rows = await db
    .update(rolloutBoards)
    .set(to)
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.position, position), eq(rolloutBoards.status, from)))
    .returning({ position: rolloutBoards.position });
  return rows.length > 0;
}

/** Every step not started yet becomes `skipped`. */
export async function skipPending(db: Db, rolloutId: number, at: Date): Promise<number> {
  const rows = await db
    .update(rolloutBoards)
    .set({ status: 'skipped', finishedAt: at })
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.status, 'pending')))
    .returning({ position: rolloutBoards.position });
  return rows.length;
}

/** The operation of each step that has one and has not ended, with what it says now. */
export async function activeSteps(db: Db, rolloutId: number) {
  return db
    .select({
      position: rolloutBoards.position,
      stepStatus: rolloutBoards.status,
      operationId: rolloutBoards.operationId,
      opStatus: operations.status,
      result: operations.result,
      startedAt: operations.startedAt,
      finishedAt: operations.finishedAt,
    })
    .from(rolloutBoards)
    .leftJoin(operations, eq(operations.id, rolloutBoards.operationId))
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), inArray(rolloutBoards.status, ['queued', 'running']), isNotNull(rolloutBoards.operationId)));
}

/** Rollouts whose step ran this operation. */
export async function rolloutsOfOperation(db: Db, operationId: number): Promise<number[]> {
  const rows = await db.selectDistinct({ id: rolloutBoards.rolloutId }).from(rolloutBoards).where(eq(rolloutBoards.operationId, operationId));
  return rows.map((r) => r.id);
}

/** Rollouts that may still move: running, paused, or closed with steps still going. */
export async function openRolloutIds(db: Db): Promise<number[]> {
  const rows = await db
    .select({ id: rollouts.id })
    .from(rollouts)
    .where(or(inArray(rollouts.status, ['running', 'paused']), isNull(rollouts.finishedAt)));
  return rows.map((r) => r.id);
}

/** Steps left `starting` by a replica since `before` (it may have died between claim and create). */
export async function staleClaims(db: Db, rolloutId: number, before: Date) {
  return db
    .select({ position: rolloutBoards.position, claimedBy: rolloutBoards.claimedBy })
    .from(rolloutBoards)
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.status, 'starting'), lt(rolloutBoards.claimedAt, before)));
}

export async function unclaimStep(db: Db, rolloutId: number, position: number, claimedBy: string): Promise<void> {
  await db
    .update(rolloutBoards)
    .set({ status: 'pending', claimedBy: null, claimedAt: null })
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.position, position), eq(rolloutBoards.status, 'starting'), eq(rolloutBoards.claimedBy, claimedBy)));
}

/** Queued step operations of a rollout (cancel). */
export async function queuedStepOperations(db: Db, rolloutId: number): Promise<number[]> {
  const rows = await db
    .select({ id: operations.id })
    .from(rolloutBoards)
    .innerJoin(operations, eq(operations.id, rolloutBoards.operationId))
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(operations.status, 'queued')));
  return rows.map((r) => r.id);
}

/** The kind of the rollout whose step `operationId` is, or undefined when it is no rollout's step. */
export async function rolloutKindOfStep(db: Db, operationId: number): Promise<string | undefined> {
  const [row] = await db
    .select({ kind: rollouts.kind })
    .from(rolloutBoards)
    .innerJoin(rollouts, eq(rollouts.id, rolloutBoards.rolloutId))
    .where(eq(rolloutBoards.operationId, operationId))
    .limit(1);
  return row?.kind;
}

/** The rollout engine's store on PostgreSQL: the functions above, bound to `db`. */
export function pgRolloutEngineStore(db: Db): RolloutEngineStore {
  return {
    findRollout: (id) => findRolloutRow(db, id),
    stepsOf: async (id) => (await boardRowsOf(db, [id])).get(id) ?? [],
    activeSteps: (id) => activeSteps(db, id),
    updateStep: (id, position, from, to) => updateStep(db, id, position, from, to),
    staleClaims: (id, before) => staleClaims(db, id, before),
    unclaimStep: (id, position, claimedBy) => unclaimStep(db, id, position, claimedBy),
    changeStatus: (id, from, to) => changeStatus(db, id, from, to),
    skipPending: (id, at) => skipPending(db, id, at),
    markPhaseEnded: (id, phasesStarted, at) => markPhaseEnded(db, id, phasesStarted, at),
    claimPhase: (id, phasesStarted) => claimPhase(db, id, phasesStarted),
    claimStep: (id, position, replicaId, at) => claimStep(db, id, position, replicaId, at),
    recordStepOperation: (id, position, operationId) => recordStepOperation(db, id, position, operationId),
    failStep: (id, position, at) => failStep(db, id, position, at),
    markFinished: (id, at) => markFinished(db, id, at),
    rolloutsOfOperation: (operationId) => rolloutsOfOperation(db, operationId),
    openRolloutIds: () => openRolloutIds(db),
    skipStep: (id, position, at) => skipStep(db, id, position, at),
  };
}

/** Whether someone other than `user` holds a lease in force on the board at `at` (docs/reservations.md). */
export async function reservedForOthers(db: Db, boardId: string, user: string | null, at: Date): Promise<boolean> {
  const rows = await queryRows(db, sql`select ${reservedForOthersSql(sql`${boardId}::uuid`, sql`${user}::text`, at)} as held`);
  return rows[0]?.['held'] === true;
}

/** A pending step of a running phase whose board someone else holds: `skipped`, never started. */
export async function skipStep(db: Db, rolloutId: number, position: number, at: Date): Promise<void> {
  await db
    .update(rolloutBoards)
    .set({ status: 'skipped', finishedAt: at, claimedBy: null, claimedAt: null })
    .where(and(eq(rolloutBoards.rolloutId, rolloutId), eq(rolloutBoards.position, position), inArray(rolloutBoards.status, ['starting', 'pending'])));
}
