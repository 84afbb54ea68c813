import { and, asc, desc, eq, inArray, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards, invocationFiles, invocations, operations, type AgentStart } from '../db/schema.ts';
import { currentActor } from '../auth/request-auth.ts';
import { isAgentKind } from './kinds.ts';
import type { OperationError, OperationProgress, OperationRow, OperationStatusName } from './operation-object.ts';

/**
 * Every query of the operations table (and the reads operations make of invocations); the
 * state machine around them is in operations.ts. Each status change is one conditional
 * UPDATE, so two replicas never both move an operation.
 */

export interface NewOperation {
  kind: string;
  /** Null: queued without a board, until a scheduler assigns one (assignBoard). */
  boardId: string | null;
  invocationId: number | null;
  params: Record<string, unknown>;
  /** Tests: a server-side run already claimed by this replica. */
  runnerReplica?: string | null;
  /** Fleet scheduling (fleet/scheduler.ts): with `boardId` null, the labels a board must hold. */
  boardSelector?: Record<string, string> | null;
  priority?: number;
  queueDeadline?: Date | null;
  healthCheckId?: number | null;
}

export async function insertOperation(db: Db, op: NewOperation): Promise<OperationRow> {
  const [row] = await db
    .insert(operations)
    .values({
      kind: op.kind,
      boardId: op.boardId,
      invocationId: op.invocationId,
      params: op.params,
      runnerReplica: op.runnerReplica ?? null,
      boardSelector: op.boardSelector ?? null,
      priority: op.priority ?? 0,
      queueDeadline: op.queueDeadline ?? null,
      healthCheckId: op.healthCheckId ?? null,
      status: 'queued',
      createdBy: currentActor(),
    })
    .returning();
  return row!;
}

/** Gives a queued operation without a board its board; undefined if it has one or is no longer queued. */
export async function assignBoard(db: Db, id: number, boardId: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .update(operations)
    .set({ boardId })
    .where(and(eq(operations.id, id), eq(operations.status, 'queued'), isNull(operations.boardId)))
    .returning();
  return row;
}

export async function findOperation(db: Db, id: number): Promise<OperationRow | undefined> {
  const [row] = await db.select().from(operations).where(eq(operations.id, id));
  return row;
}

export interface OperationFilters {
  boardId?: string | undefined;
  invocationId?: number | undefined;
  kind?: string | undefined;
  status?: OperationStatusName | undefined;
}

function filterWhere(f: OperationFilters): SQL | undefined {
  const parts: SQL[] = [];
  if (f.boardId !== undefined) parts.push(eq(operations.boardId, f.boardId));
  if (f.invocationId !== undefined) parts.push(eq(operations.invocationId, f.invocationId));
  if (f.kind !== undefined) parts.push(eq(operations.kind, f.kind));
  if (f.status !== undefined) parts.push(eq(operations.status, f.status));
  return parts.length ? and(...parts) : undefined;
}

/** Newest first. */
export async function listOperationRows(
  db: Db,
  filters: OperationFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: OperationRow[]; total: number }> {
  const where = filterWhere(filters);
  const [rows, [count]] = await Promise.all([
    db.select().from(operations).where(where).orderBy(desc(operations.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(operations).where(where),
  ]);
  return { rows, total: count?.n ?? 0 };
}

/** Queued → running (noting the replica that runs it, for server-side runs); undefined if someone else moved it first. */
export async function claimQueued(db: Db, id: number, runnerReplica?: string, boardId?: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .update(operations)
    .set({
      status: 'running',
      startedAt: new Date(),
      progress: { phase: 'starting', bytes_done: 0, bytes_total: 0 },
      ...(runnerReplica !== undefined ? { runnerReplica } : {}),
    })
    // With the board: a selector operation handed back to the pool meanwhile is not claimed here.
    .where(and(eq(operations.id, id), eq(operations.status, 'queued'), ...(boardId !== undefined ? [eq(operations.boardId, boardId)] : [])))
    .returning();
  return row;
}

/**
 * Claims the board's oldest queued operation if the board runs nothing, in one transaction
 * under a per-board advisory lock: two replicas that both believe they hold the board's link
 * (a link moving between them) never start two operations of one board. Server-side kinds
 * get `runner_replica` (agent kinds run on whichever replica the board is linked to).
 */
export async function claimNextQueued(db: Db, boardId: string, runnerReplica: string): Promise<OperationRow | undefined> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`mm-board:${boardId}`}))`);
    const t = tx as unknown as Db;
    if (await runningOperationOf(t, boardId)) return undefined;
    for (;;) {
      const next = await oldestQueuedOf(t, boardId);
      if (!next) return undefined;
      const row = await claimQueued(t, next.id, isAgentKind(next.kind) ? undefined : runnerReplica, boardId);
      if (row) return row;
      // cancelled in between: look again
    }
  });
}

/** Running or queued → final; undefined if it had already ended (outcomes are idempotent). */
export async function finishOperation(
  db: Db,
  id: number,
  end: { status: 'succeeded' | 'failed' | 'cancelled'; result: unknown; error: OperationError | null; progress?: OperationProgress },
): Promise<OperationRow | undefined> {
  const [row] = await db
    .update(operations)
    .set({
      status: end.status,
      finishedAt: new Date(),
      result: end.result ?? null,
      error: end.error,
      ...(end.progress ? { progress: end.progress } : {}),
    })
    .where(and(eq(operations.id, id), inArray(operations.status, ['queued', 'running'])))
    .returning();
  return row;
}

export async function saveProgress(db: Db, id: number, progress: OperationProgress): Promise<void> {
  await db
    .update(operations)
    .set({ progress })
    .where(and(eq(operations.id, id), eq(operations.status, 'running')));
}

/** Stores an agent operation's op.start snapshot with its first progress, in one write. */
export async function saveAgentStart(db: Db, id: number, start: AgentStart, progress: OperationProgress): Promise<void> {
  await db.update(operations).set({ agentStart: start, progress }).where(eq(operations.id, id));
}

/** Notes that a cancel of a running operation was asked for (it outlives a restart). */
export async function markCancelRequested(db: Db, id: number): Promise<void> {
  await db.update(operations).set({ cancelRequestedAt: new Date() }).where(eq(operations.id, id));
}

/** Queued → cancelled; undefined if it was claimed (or ended) meanwhile. */
export async function cancelQueued(db: Db, id: number, error: OperationError): Promise<OperationRow | undefined> {
  const [row] = await db
    .update(operations)
    .set({ status: 'cancelled', finishedAt: new Date(), error })
    .where(and(eq(operations.id, id), eq(operations.status, 'queued')))
    .returning();
  return row;
}

/** Running → queued again (a server-side run lost to a restart, of a kind that asks for it); undefined if it is not running. */
export async function requeueRunning(db: Db, id: number): Promise<OperationRow | undefined> {
  const [row] = await db
    .update(operations)
    .set({ status: 'queued', startedAt: null, runnerReplica: null })
    .where(and(eq(operations.id, id), eq(operations.status, 'running')))
    .returning();
  return row;
}

/** The invocation's name and its input files (of `kinds`), for an agent operation's op.start; undefined without the invocation. */
export async function invocationForStart(
  db: Db,
  invocationId: number,
  kinds: readonly string[],
): Promise<{ name: string; files: Array<typeof invocationFiles.$inferSelect> } | undefined> {
  const [[inv], files] = await Promise.all([
    db.select({ name: invocations.name }).from(invocations).where(eq(invocations.id, invocationId)),
    db
      .select()
      .from(invocationFiles)
      .where(and(eq(invocationFiles.invocationId, invocationId), inArray(invocationFiles.kind, [...kinds]))),
  ]);
  return inv && { name: inv.name, files };
}

/** The operation a board is running, if any (at most one by construction). */
export async function runningOperationOf(db: Db, boardId: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.boardId, boardId), eq(operations.status, 'running')))
    .orderBy(asc(operations.id))
    .limit(1);
  return row;
}

/** The board's next queued operation: its health checks first (docs/fleet.md), then the rest in order. */
export async function oldestQueuedOf(db: Db, boardId: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.boardId, boardId), eq(operations.status, 'queued')))
    .orderBy(sql`${operations.healthCheckId} is null`, asc(operations.id))
    .limit(1);
  return row;
}

export async function unfinishedOperations(db: Db, where: { boardId?: string; invocationId?: number }): Promise<OperationRow[]> {
  const parts: SQL[] = [inArray(operations.status, ['queued', 'running'])];
  if (where.boardId !== undefined) parts.push(eq(operations.boardId, where.boardId));
  if (where.invocationId !== undefined) parts.push(eq(operations.invocationId, where.invocationId));
  return db.select().from(operations).where(and(...parts)).orderBy(asc(operations.id));
}

/** Boards (ids) that have a running operation right now: the `busy` flag. */
export async function busyBoardIds(db: Db, boardIds?: string[]): Promise<Set<string>> {
  const parts: SQL[] = [eq(operations.status, 'running')];
  if (boardIds) {
    if (boardIds.length === 0) return new Set();
    parts.push(inArray(operations.boardId, boardIds));
  }
  const rows = await db
    .selectDistinct({ boardId: operations.boardId })
    .from(operations)
    .where(and(...parts));
  return new Set(rows.flatMap((r) => (r.boardId ? [r.boardId] : [])));
}

/** Boards with any queued operation (the dispatcher's work list at startup). */
export async function boardsWithQueuedWork(db: Db): Promise<string[]> {
  const rows = await db
    .selectDistinct({ boardId: operations.boardId })
    .from(operations)
    .where(and(eq(operations.status, 'queued'), isNotNull(operations.boardId)));
  return rows.flatMap((r) => (r.boardId ? [r.boardId] : []));
}

export async function runningOperations(db: Db): Promise<OperationRow[]> {
  return db.select().from(operations).where(eq(operations.status, 'running')).orderBy(asc(operations.id));
}

/** The board's labels, for an execute's op.start (`{}` if the board is gone). */
export async function boardLabelsForStart(db: Db, boardId: string): Promise<Record<string, string>> {
  const [row] = await db.select({ labels: boards.labels }).from(boards).where(eq(boards.id, boardId));
  return row?.labels ?? {};
}

export interface MetricPoint {
  operation_id: number;
  board_id: string | null;
  finished_at: string;
  value: number;
}

/**
 * One metric of an invocation's succeeded execute runs (`result.metrics[name]`), oldest
 * first: the last `limit` runs that have it.
 */
export async function invocationMetricPoints(db: Db, invocationId: number, name: string, limit: number): Promise<MetricPoint[]> {
  const value = sql`(${operations.result} -> 'metrics' -> ${name})`;
  const rows = await db
    .select({ id: operations.id, boardId: operations.boardId, finishedAt: operations.finishedAt, value: sql<number>`${value}::float8`.mapWith(Number) })
    .from(operations)
    .where(
      and(
        eq(operations.invocationId, invocationId),
        eq(operations.kind, 'execute'),
        eq(operations.status, 'succeeded'),
        sql`jsonb_typeof(${value}) = 'number'`,
      ),
    )
    .orderBy(desc(operations.finishedAt), desc(operations.id))
    .limit(limit);
  return rows
    .filter((r) => r.finishedAt !== null)
    .reverse()
    .map((r) => ({ operation_id: r.id, board_id: r.boardId, finished_at: r.finishedAt!.toISOString(), value: r.value }));
}

/** Per board: the operation it runs (if any) and how many wait for it (named to it or assigned to it). */
export async function boardLoads(db: Db, boardIds: string[]): Promise<Map<string, { running: number | null; queued: number }>> {
  const out = new Map<string, { running: number | null; queued: number }>();
  if (boardIds.length === 0) return out;
  const rows = await db
    .select({
      boardId: operations.boardId,
      running: sql<number | null>`max(${operations.id}) filter (where ${operations.status} = 'running')`,
      queued: sql<number>`count(*) filter (where ${operations.status} = 'queued')`.mapWith(Number),
    })
    .from(operations)
    .where(and(inArray(operations.boardId, boardIds), inArray(operations.status, ['queued', 'running'])))
    .groupBy(operations.boardId);
  for (const r of rows) if (r.boardId) out.set(r.boardId, { running: r.running === null ? null : Number(r.running), queued: r.queued });
  return out;
}
