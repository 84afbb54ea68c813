import { isDeepStrictEqual } from 'node:util';
import { and, asc, desc, eq, inArray, isNotNull, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { lockBoard, tryLockBoard } from '../db/board-lock.ts';
import { queryRows } from '../db/rows.ts';
import { boardMayRunSql, runNeedsColumnsSql, runNeedsFromRow, type RunNeeds } from '../accelerators/board-fit.ts';
import type { BoardAtStart } from '../results/run-record.ts';
import { selectorHeldBySql } from '../boards/board-selector.ts';
import { boards, invocationFiles, invocations, operationEvents, operations, type AgentStart } from '../db/schema.ts';
import { currentActor } from '../auth/request-auth.ts';
import { AGENT_KINDS, isAgentKind } from './kinds.ts';
import { boardNotReservedForOthersSql, reservedForOthersSql } from '../reservations/reservation-sql.ts';
import { FINAL_STATUSES, type OperationError, type OperationProgress, type OperationRow, type OperationStatusName } from './operation-object.ts';

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
  /** Who asked for it, when not the request's user (a rollout's step: the rollout's creator). */
  createdBy?: string | null;
}

function newOperationValues(op: NewOperation, createdBy: string | null) {
  return {
    kind: op.kind,
    boardId: op.boardId,
    invocationId: op.invocationId,
    params: op.params,
    runnerReplica: op.runnerReplica ?? null,
    boardSelector: op.boardSelector ?? null,
    priority: op.priority ?? 0,
    queueDeadline: op.queueDeadline ?? null,
    healthCheckId: op.healthCheckId ?? null,
    status: 'queued' as const,
    createdBy,
  };
}

export async function insertOperation(db: Db, op: NewOperation): Promise<OperationRow> {
  const [row] = await db.insert(operations).values(newOperationValues(op, op.createdBy !== undefined ? op.createdBy : currentActor())).returning();
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
  /** Health-check runs are left out unless this is true (docs/fleet.md). */
  healthChecks?: boolean | undefined;
  /** Only this health check's runs. */
  healthCheckId?: number | undefined;
}

function filterWhere(f: OperationFilters): SQL | undefined {
  const parts: SQL[] = [];
  if (f.boardId !== undefined) parts.push(eq(operations.boardId, f.boardId));
  if (f.invocationId !== undefined) parts.push(eq(operations.invocationId, f.invocationId));
  if (f.kind !== undefined) parts.push(eq(operations.kind, f.kind));
  if (f.status !== undefined) parts.push(eq(operations.status, f.status));
  if (!f.healthChecks) parts.push(isNull(operations.healthCheckId));
  if (f.healthCheckId !== undefined) parts.push(eq(operations.healthCheckId, f.healthCheckId));
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
 * Work of others than the holder of a lease in force at `at` waits (docs/reservations.md).
 */
export async function claimNextQueued(db: Db, boardId: string, runnerReplica: string, at: Date = new Date()): Promise<OperationRow | undefined> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    await lockBoard(t, boardId);
    for (;;) {
      // The board's next queued operation, if it runs none: one statement.
      const next = await oldestQueuedOf(t, boardId, { unlessRunning: true, at });
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

/**
 * The board's next queued operation: its health checks first (docs/fleet.md), then the rest in
 * order. `unlessRunning`: none while the board runs an operation; with `at`, only work the
 * board's lease holder (if any) asked for.
 */
export async function oldestQueuedOf(db: Db, boardId: string, opts: { unlessRunning?: boolean; at?: Date } = {}): Promise<OperationRow | undefined> {
  const idle = opts.unlessRunning ? [sql`not exists (select 1 from operations r where r.board_id = ${boardId} and r.status = 'running')`] : [];
  if (opts.at) idle.push(boardNotReservedForOthersSql(sql`${boardId}::uuid`, sql`${operations.createdBy}`, opts.at));
  const [row] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.boardId, boardId), eq(operations.status, 'queued'), ...idle))
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
/** What an agent operation's op.start is made of, read in one statement (agent-operations.ts `begin`). */
export interface StartSnapshot {
  name: string;
  files: Array<{ kind: string; filename: string; sha256: string; size: number }>;
  needs: RunNeeds;
  /** The board's row as the run's context and labels take it; undefined if the board is gone. */
  board: (BoardAtStart & { labels: Record<string, string> }) | undefined;
}

/**
 * The invocation's name, its input files of `kinds`, its run needs (app, DPU fingerprints) and
 * the board's labels, facts, versions and last telemetry: one statement. Undefined without the invocation.
 */
export async function startSnapshot(db: Db, invocationId: number, boardId: string, kinds: readonly string[]): Promise<StartSnapshot | undefined> {
  // Not `i`: requiredAppSql's own subquery calls its invocation `i`.
  const inv = sql`si.id`;
  const [row] = await queryRows(
    db,
    sql`select si.name, ${runNeedsColumnsSql(inv)},
        coalesce((select jsonb_agg(jsonb_build_object('kind', f.kind, 'filename', f.filename, 'sha256', f.sha256, 'size', f.size))
          from invocation_files f where f.invocation_id = si.id and f.kind in (${sql.join(
            kinds.map((k) => sql`${k}`),
            sql`, `,
          )})), '[]'::jsonb) as files,
        (select jsonb_build_object('labels', b.labels, 'facts', b.facts, 'agent_version', b.agent_version, 'active_pac', b.active_pac, 'telemetry', b.telemetry)
          from boards b where b.id = ${boardId}::uuid) as board
      from invocations si where si.id = ${invocationId}::int`,
  );
  if (!row) return undefined;
  const files = (typeof row['files'] === 'string' ? JSON.parse(row['files']) : row['files']) as StartSnapshot['files'];
  const b = (typeof row['board'] === 'string' ? JSON.parse(row['board']) : row['board']) as {
    labels: Record<string, string> | null;
    facts: Record<string, unknown> | null;
    agent_version: string | null;
    active_pac: string | null;
    telemetry: unknown;
  } | null;
  return {
    name: String(row['name']),
    files: files.map((f) => ({ ...f, size: Number(f.size) })),
    needs: runNeedsFromRow(row),
    board: b ? { labels: b.labels ?? {}, facts: b.facts, agentVersion: b.agent_version, activePac: b.active_pac, telemetry: b.telemetry } : undefined,
  };
}

export interface MetricPoint {
  operation_id: number;
  board_id: string | null;
  finished_at: string;
  value: number;
  /** The run's summary of this metric (`result.summary[name]`), for a run of several repeats only. */
  summary?: { n: number; median: number; q1: number; q3: number; ci95: [number, number] };
}

/** A `result.summary[name]` as stored, kept only when whole and over more than one run. */
function repeatSummary(v: unknown): MetricPoint['summary'] | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const s = v as Record<string, unknown>;
  const nums = [s.n, s.median, s.q1, s.q3].every((x) => typeof x === 'number' && Number.isFinite(x));
  const ci = Array.isArray(s.ci95) && s.ci95.length === 2 && s.ci95.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!nums || !ci || (s.n as number) < 2) return undefined;
  return { n: s.n as number, median: s.median as number, q1: s.q1 as number, q3: s.q3 as number, ci95: [(s.ci95 as number[])[0]!, (s.ci95 as number[])[1]!] };
}

/**
 * One metric of an invocation's succeeded execute runs (`result.metrics[name]`), oldest
 * first: the last `limit` runs that have it.
 */
export async function invocationMetricPoints(db: Db, invocationId: number, name: string, limit: number, healthChecks = false): Promise<MetricPoint[]> {
  const value = sql`(${operations.result} -> 'metrics' -> ${name})`;
  const rows = await db
    .select({
      id: operations.id,
      boardId: operations.boardId,
      finishedAt: operations.finishedAt,
      value: sql<number>`${value}::float8`.mapWith(Number),
      summary: sql<unknown>`(${operations.result} -> 'summary' -> ${name})`,
    })
    .from(operations)
    .where(
      and(
        eq(operations.invocationId, invocationId),
        eq(operations.kind, 'execute'),
        eq(operations.status, 'succeeded'),
        ...(healthChecks ? [] : [isNull(operations.healthCheckId)]),
        sql`jsonb_typeof(${value}) = 'number'`,
      ),
    )
    .orderBy(desc(operations.finishedAt), desc(operations.id))
    .limit(limit);
  return rows
    .filter((r) => r.finishedAt !== null)
    .reverse()
    .map((r) => {
      const summary = repeatSummary(r.summary);
      return { operation_id: r.id, board_id: r.boardId, finished_at: r.finishedAt!.toISOString(), value: r.value, ...(summary ? { summary } : {}) };
    });
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

// ── fleet scheduling (fleet/scheduler.ts, docs/fleet.md) ─────────────────────────────
//
// Safe with several replicas on one database:
//
// - a waiting operation is taken with `FOR UPDATE SKIP LOCKED` and given its board by a
//   conditional UPDATE (`board_id is null`): one assignment per operation;
// - a board is taken with `pg_try_advisory_xact_lock` on the same key the board queue's claim
//   uses (`claimNextQueued`), and its idleness is looked at again under that lock by a new
//   statement (READ COMMITTED: it sees every commit made before the lock was granted): one
//   operation per board at a time. A row lock on the board would not do: the assignment writes
//   the operation, not the board, so a second replica that waited for the board row would
//   re-check a snapshot from before the first one's commit.
//
// Assignment sets `board_id`; the replica holding the board's link claims it as any queued
// work of that board, or, when the assigning replica holds the link itself, the assignment
// claims it in the same transaction (`claimAs`). A replica killed mid-assignment rolls its
// transaction back.

/** A board the scheduler may give selector work: its id and labels. */
export interface AssignableBoard {
  id: string;
  labels: Record<string, string>;
}

/**
 * Gives the board the first waiting operation (priority, then age) whose selector its labels
 * hold, if the board is still free for it; the operation's row, or undefined (board taken by
 * another replica, busy meanwhile, or nothing matches). A board whose lock another replica
 * holds is skipped, unless `waitForLock` (a pass for that one board: it waits its turn).
 * The board leaves the idle-board index (`scheduler_busy`) in the same statement.
 */
export async function assignToBoard(
  db: Db,
  board: AssignableBoard,
  opts: { waitForLock?: boolean; at?: Date; claimAs?: string } = {},
): Promise<OperationRow | undefined> {
  const at = opts.at ?? new Date();
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    if (opts.waitForLock) {
      // A board that just became idle: its own queue's claim may hold the lock for a moment.
      await lockBoard(t, board.id);
    } else if (!(await tryLockBoard(t, board.id))) {
      return undefined;
    }
    // One statement, after the lock: its snapshot holds every commit made before the lock was granted.
    const picked = sql`select o.id from operations o
          where o.status = 'queued' and o.board_id is null and o.board_selector is not null
            and ${selectorHeldBySql(sql`o.board_selector`, board.labels)}
            and exists (select 1 from boards b where b.id = ${board.id} and not b.pending and not b.maintenance and b.health <> 'bad'
              -- the model fits the board's DPU, or its fingerprint is unknown (accelerators/board-fit.ts)
              and ${boardMayRunSql(sql`b`, sql`o.invocation_id`)}
              -- nobody else holds it (docs/reservations.md): its holder's work still goes to it
              and ${boardNotReservedForOthersSql(sql`b.id`, sql`o.created_by`, at)})
            and not exists (select 1 from operations x where x.board_id = ${board.id} and x.status in ('queued', 'running'))
          order by o.priority desc, o.id
          limit 1
          for update skip locked`;
    // `claimAs`: the assigning replica holds the board's link, so the board queue's claim
    // (claimNextQueued) is made here, under the same lock: the board ran and held nothing (the
    // pick checks it), so this operation is the one its queue would take. Server-side kinds
    // note the replica that runs them, as claimQueued does.
    const claim =
      opts.claimAs === undefined
        ? {}
        : {
            status: 'running' as const,
            startedAt: sql`now()`,
            progress: { phase: 'starting', bytes_done: 0, bytes_total: 0 },
            runnerReplica: sql`case when ${operations.kind} in (${sql.join(
              AGENT_KINDS.map((k) => sql`${k}`),
              sql`, `,
            )}) then null else ${opts.claimAs} end`,
          };
    const [row] = await t
      .update(operations)
      .set({ boardId: board.id, assignedAt: sql`now()`, ...claim })
      .where(sql`${operations.status} = 'queued' and ${operations.boardId} is null and ${operations.id} = (${picked})`)
      .returning();
    // Out of the idle-board index until its work ends (markIdleSince) or goes back (releaseStranded).
    if (row) await t.update(boards).set({ schedulerBusy: true }).where(eq(boards.id, board.id));
    return row;
  });
}

/**
 * Selector operations given a board that has not started them, whose board can no longer take
 * selector work (gone offline, in maintenance, `bad`, reserved by someone else at `at`): back
 * to the pool, and their boards back into the idle-board index. The board queue's claim checks
 * the board again, so one taken meanwhile is left where it is.
 */
export async function releaseStrandedAssignments(db: Db, staleMs: number, at: Date = new Date()): Promise<number[]> {
  const rows = await queryRows(
    db,
    sql`with released as (
        update operations o set board_id = null, assigned_at = null
        where o.status = 'queued' and o.board_selector is not null and o.board_id is not null
          and (exists (select 1 from boards b where b.id = o.board_id and (b.maintenance or b.health = 'bad'))
            or ${reservedForOthersSql(sql`o.board_id`, sql`o.created_by`, at)}
            or not exists (select 1 from board_sessions s where s.board_id = o.board_id
              and s.heartbeat_at >= now() - ${Math.round(staleMs)}::int * interval '1 millisecond'))
        returning o.id, o.board_id),
      freed as (update boards set scheduler_busy = false where id in (select board_id from released))
      select id from released`,
  );
  return rows.map((r) => Number(r['id']));
}

/** Queued operations whose queue deadline is at or before `now` (the injected clock's), oldest deadline first. */
export async function expiredQueued(db: Db, now: Date): Promise<number[]> {
  const rows = await db
    .select({ id: operations.id })
    .from(operations)
    .where(and(eq(operations.status, 'queued'), lte(operations.queueDeadline, now)))
    .orderBy(asc(operations.queueDeadline))
    .limit(1000);
  return rows.map((r) => r.id);
}

/**
 * Inserts many queued operations in one statement, inside `pick`'s transaction: `pick` runs
 * under a transaction-scoped advisory lock (`lockName`; a replica that does not get it answers
 * nothing this round) and says what to create.
 */
export async function insertOperationsUnderLock(db: Db, lockName: string, pick: (tx: Db) => Promise<NewOperation[]>): Promise<OperationRow[]> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    const [lock] = await queryRows(t, sql`select pg_try_advisory_xact_lock(hashtext(${lockName})) as got`);
    if (lock?.['got'] !== true) return [];
    const picked = await pick(t);
    if (picked.length === 0) return [];
    return t.insert(operations).values(picked.map((op) => newOperationValues(op, null))).returning();
  });
}

/**
 * Inserts `op` unless the same request already waits last in its board's queue — a queued
 * operation of its kind, board and parameters, with nothing queued for the board after it —
 * and answers that one instead (`joined`). Asking again while the first ask waits adds
 * nothing the first will not answer. One transaction under a lock per board, so requests at
 * the same moment (two replicas, a double click) join too.
 */
export async function insertOrJoinQueued(db: Db, op: NewOperation & { boardId: string }): Promise<{ row: OperationRow; joined: boolean }> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Db;
    await queryRows(t, sql`select pg_advisory_xact_lock(hashtext(${`operations.join:${op.boardId}`}))`);
    const [last] = await t
      .select()
      .from(operations)
      .where(and(eq(operations.boardId, op.boardId), eq(operations.status, 'queued')))
      .orderBy(desc(operations.id))
      .limit(1);
    if (last && last.kind === op.kind && last.invocationId === op.invocationId && isDeepStrictEqual(last.params, op.params)) return { row: last, joined: true };
    const [row] = await t.insert(operations).values(newOperationValues(op, op.createdBy !== undefined ? op.createdBy : currentActor())).returning();
    return { row: row!, joined: false };
  });
}

// ── retention (retention/retention-pruner.ts) ──────────────────────────────────────

/** Ended (final) before `cutoff`: finished then, or created then if it never finished. */
function endedBefore(cutoff: Date): SQL {
  return and(
    inArray(operations.status, [...FINAL_STATUSES]),
    // A string with a cast: postgres-js takes no Date inside a raw fragment.
    sql`coalesce(${operations.finishedAt}, ${operations.createdAt}) < ${cutoff.toISOString()}::timestamptz`,
  )!;
}

/** Deletes up to `limit` events of operations that ended before `cutoff`; the deleted ids. */
export async function pruneEventsOfEndedBefore(db: Db, cutoff: Date, limit: number): Promise<Array<{ id: number }>> {
  return db
    .delete(operationEvents)
    .where(
      inArray(
        operationEvents.id,
        db
          .select({ id: operationEvents.id })
          .from(operationEvents)
          .where(inArray(operationEvents.operationId, db.select({ id: operations.id }).from(operations).where(endedBefore(cutoff))))
          .limit(limit),
      ),
    )
    .returning({ id: operationEvents.id });
}

/** Deletes up to `limit` operations that ended before `cutoff` (their events should be gone first); the deleted ids. */
export async function pruneOperationsEndedBefore(db: Db, cutoff: Date, limit: number): Promise<Array<{ id: number }>> {
  return db
    .delete(operations)
    .where(inArray(operations.id, db.select({ id: operations.id }).from(operations).where(endedBefore(cutoff)).limit(limit)))
    .returning({ id: operations.id });
}

// ── a board lost mid-run (board-lost.ts) ───────────────────────────────────────────

/** Running operations that have a board, with when the board was last heard of. */
export async function runningWithBoards(db: Db): Promise<Array<{ id: number; boardId: string | null; startedAt: Date | null; since: Date | null; lastSeenAt: Date | null }>> {
  return db
    .select({ id: operations.id, boardId: operations.boardId, startedAt: operations.startedAt, since: operations.boardOfflineSince, lastSeenAt: boards.lastSeenAt })
    .from(operations)
    .innerJoin(boards, eq(boards.id, operations.boardId))
    .where(and(eq(operations.status, 'running'), isNotNull(operations.boardId)));
}

/** Notes since when a running operation's board is offline; false if it was noted already or it ended. */
export async function noteBoardOffline(db: Db, id: number, since: Date): Promise<boolean> {
  const rows = await db
    .update(operations)
    .set({ boardOfflineSince: since })
    .where(and(eq(operations.id, id), eq(operations.status, 'running'), isNull(operations.boardOfflineSince)))
    .returning({ id: operations.id });
  return rows.length > 0;
}

/** The board is back: `board_offline_since` cleared; false if there was none. */
export async function clearBoardOffline(db: Db, id: number): Promise<boolean> {
  const rows = await db
    .update(operations)
    .set({ boardOfflineSince: null })
    .where(and(eq(operations.id, id), eq(operations.status, 'running'), isNotNull(operations.boardOfflineSince)))
    .returning({ id: operations.id });
  return rows.length > 0;
}

/** `result.late_result` of an ended operation, once (the first report wins). */
export async function storeLateResult(db: Db, id: number, note: Record<string, unknown>): Promise<boolean> {
  const rows = await db
    .update(operations)
    .set({ result: sql`jsonb_set(case when jsonb_typeof(${operations.result}) = 'object' then ${operations.result} else '{}'::jsonb end, '{late_result}', ${JSON.stringify(note)}::jsonb)` })
    .where(and(eq(operations.id, id), sql`coalesce(${operations.result} ->> 'late_result', '') = ''`))
    .returning({ id: operations.id });
  return rows.length > 0;
}
