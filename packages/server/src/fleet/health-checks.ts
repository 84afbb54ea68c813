import { z } from '@hono/zod-openapi';
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/rows.ts';
import type { NewOperationInput } from '../operations/operations.ts';
import { boards, healthChecks, operations } from '../db/schema.ts';
import type { OperationRow } from '../operations/operation-object.ts';
import { safeString } from '../http/safe-string.ts';
import { BoardSelectorSchema, selectorMatchesSql, type BoardSelector } from '../boards/board-selector.ts';
import { combineVerdicts, evaluateCheckRun, type HealthExpect, type Verdict } from './health-evaluation.ts';
import { reservedForOthersSql } from '../reservations/reservation-sql.ts';

/** Health checks (docs/fleet.md): rows of `health_checks`, their runs (execute operations with `health_check_id`), board health. */

export type HealthCheckRow = typeof healthChecks.$inferSelect;

const METRIC_NAME = /^[a-z][a-z0-9_]*$/;

const BoundsSchema = z
  .object({ min: z.number().finite().optional(), max: z.number().finite().optional() })
  .strict()
  .refine((b) => b.min === undefined || b.max === undefined || b.min <= b.max, 'min must not be above max');

export const HealthExpectSchema = z
  .object({
    metrics: z
      .record(z.string().regex(METRIC_NAME, 'metric names are [a-z][a-z0-9_]*'), BoundsSchema)
      .optional()
      .openapi({ example: { fps: { min: 10 }, latency_ms: { max: 150 } } }),
  })
  .strict();

export const HealthCheckSchema = z
  .object({
    id: z.number().int().positive(),
    name: z.string(),
    invocation_id: z.number().int().positive(),
    board_selector: z.record(z.string(), z.string()),
    interval_s: z.number().int(),
    expect: HealthExpectSchema,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('HealthCheck');

export type HealthCheckObject = z.infer<typeof HealthCheckSchema>;

export const HealthCheckInputSchema = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    invocation_id: z.number().int().positive(),
    board_selector: BoardSelectorSchema,
    interval_s: z.number().int().min(60, 'must be at least 60').max(30 * 86_400, 'must be at most 30 days'),
    expect: HealthExpectSchema.optional(),
  })
  .strict()
  .openapi('HealthCheckInput');

export type HealthCheckInput = z.infer<typeof HealthCheckInputSchema>;

export function toHealthCheckObject(row: HealthCheckRow): HealthCheckObject {
  return {
    id: row.id,
    name: row.name,
    invocation_id: row.invocationId,
    board_selector: row.boardSelector,
    interval_s: row.intervalS,
    expect: row.expect,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function listHealthChecks(db: Db, page: { limit: number; offset: number }): Promise<{ rows: HealthCheckRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    db.select().from(healthChecks).orderBy(asc(healthChecks.id)).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(healthChecks),
  ]);
  return { rows, total: count?.n ?? 0 };
}

export async function findHealthCheck(db: Db, id: number): Promise<HealthCheckRow | undefined> {
  const [row] = await db.select().from(healthChecks).where(eq(healthChecks.id, id));
  return row;
}

export async function insertHealthCheck(db: Db, input: HealthCheckInput): Promise<HealthCheckRow> {
  const [row] = await db
    .insert(healthChecks)
    .values({ name: input.name, invocationId: input.invocation_id, boardSelector: input.board_selector, intervalS: input.interval_s, expect: input.expect ?? {} })
    .returning();
  return row!;
}

export async function updateHealthCheck(db: Db, id: number, input: Partial<HealthCheckInput>): Promise<HealthCheckRow | undefined> {
  const [row] = await db
    .update(healthChecks)
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.invocation_id !== undefined ? { invocationId: input.invocation_id } : {}),
      ...(input.board_selector !== undefined ? { boardSelector: input.board_selector } : {}),
      ...(input.interval_s !== undefined ? { intervalS: input.interval_s } : {}),
      ...(input.expect !== undefined ? { expect: input.expect } : {}),
      updatedAt: new Date(),
    })
    .where(eq(healthChecks.id, id))
    .returning();
  return row;
}

export async function deleteHealthCheck(db: Db, id: number): Promise<boolean> {
  const rows = await db.delete(healthChecks).where(eq(healthChecks.id, id)).returning({ id: healthChecks.id });
  return rows.length > 0;
}

/** The checks whose selector the board's labels hold. */
export async function checksOfBoard(db: Db, boardId: string): Promise<HealthCheckRow[]> {
  return db
    .select()
    .from(healthChecks)
    .where(sql`exists (select 1 from ${boards} b where b.id = ${boardId} and ${selectorMatchesSql(sql`b.labels`, sql`${healthChecks.boardSelector}`)})`)
    .orderBy(asc(healthChecks.id));
}

/** A check's run on a board: an execute operation of its invocation, named to the board, that its board queue takes first. */
export function newCheckRun(check: Pick<HealthCheckRow, 'id' | 'invocationId'>, boardId: string, queueTimeoutMs: number): NewOperationInput {
  return {
    kind: 'execute',
    boardId,
    invocationId: check.invocationId,
    params: {},
    healthCheckId: check.id,
    queueTimeoutMs,
  };
}

/** The advisory lock under which one replica at a time creates the due runs. */
export const DUE_CHECK_RUNS_LOCK = 'mm-health-checks-due';

/**
 * The runs of checks that are due (for Operations.createUnderLock, which inserts them): for
 * each check, each linked board it matches (not pending, not in maintenance) whose last run of
 * it was created more than `interval_s` ago and that has none waiting or running, and that no
 * one else holds at `at` (the injected clock's now, as every reservation condition). Run inside
 * the transaction holding DUE_CHECK_RUNS_LOCK, so no pair gets two runs.
 */
export async function dueCheckRuns(tx: Db, staleMs: number, queueTimeoutMs: number, at: Date): Promise<NewOperationInput[]> {
  const due = await queryRows(
    tx,
    sql`select hc.id as check_id, hc.invocation_id, b.id as board_id from health_checks hc
      join boards b on ${selectorMatchesSql(sql`b.labels`, sql`hc.board_selector`)} and not b.pending and not b.maintenance
      join board_sessions s on s.board_id = b.id and s.heartbeat_at >= now() - ${Math.round(staleMs)}::int * interval '1 millisecond'
      -- a board someone holds is not checked meanwhile (docs/reservations.md): its run would only wait
      where not ${reservedForOthersSql(sql`b.id`, sql`null::text`, at)}
      and not exists (
        select 1 from operations o where o.health_check_id = hc.id and o.board_id = b.id
          and (o.status in ('queued', 'running') or o.created_at > now() - hc.interval_s * interval '1 second'))
      limit 1000`,
  );
  return due.map((d) => newCheckRun({ id: Number(d['check_id']), invocationId: Number(d['invocation_id']) }, String(d['board_id']), queueTimeoutMs));
}

/** The latest finished run of a check on a board. */
async function latestRun(db: Db, checkId: number, boardId: string): Promise<OperationRow | undefined> {
  const [row] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.healthCheckId, checkId), eq(operations.boardId, boardId), inArray(operations.status, ['succeeded', 'failed'])))
    .orderBy(desc(operations.id))
    .limit(1);
  return row;
}

/**
 * The board's health from the latest run of each check it matches (checks it has never run
 * are not counted); stored with its reason. The verdict, or undefined when no check has run.
 */
export async function refreshBoardHealth(db: Db, boardId: string): Promise<{ verdict: Verdict; changed: boolean } | undefined> {
  const checks = await checksOfBoard(db, boardId);
  const verdicts: Array<{ check: string; verdict: Verdict }> = [];
  for (const check of checks) {
    const run = await latestRun(db, check.id, boardId);
    if (!run) continue;
    verdicts.push({ check: check.name, verdict: evaluateCheckRun({ status: run.status, result: run.result, error: run.error ?? null }, check.expect as HealthExpect) });
  }
  const verdict = combineVerdicts(verdicts);
  if (!verdict) return undefined;
  const reason = verdict.health === 'bad' ? verdict.reason.slice(0, 1000) : null;
  const [before] = await db.select({ health: boards.health }).from(boards).where(eq(boards.id, boardId));
  await db.update(boards).set({ health: verdict.health, healthReason: reason, healthCheckedAt: new Date() }).where(eq(boards.id, boardId));
  return { verdict, changed: before?.health !== verdict.health };
}


export type { BoardSelector };

/** `POST /api/health-checks/<id>/run/`: the boards to run the check on now (linked, approved, matching; maintenance too). */
export async function boardsForCheckNow(db: Db, staleMs: number, check: HealthCheckRow): Promise<string[]> {
  const rows = await queryRows(
    db,
    sql`select b.id from boards b
      join board_sessions s on s.board_id = b.id and s.heartbeat_at >= now() - ${Math.round(staleMs)}::int * interval '1 millisecond'
      where not b.pending and ${selectorMatchesSql(sql`b.labels`, check.boardSelector)}
      order by b.name`,
  );
  return rows.map((r) => String(r['id']));
}
