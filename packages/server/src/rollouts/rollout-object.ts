import { z } from '@hono/zod-openapi';
import type { rolloutBoards, rollouts } from '../db/schema.ts';
import { BoardSelectorSchema } from '../fleet/board-selector.ts';

export type RolloutRow = typeof rollouts.$inferSelect;
export type RolloutBoardRow = typeof rolloutBoards.$inferSelect;

export const ROLLOUT_KINDS = ['execute', 'pac_install', 'pac_activate', 'script_deploy', 'agent_update'] as const;
export type RolloutKind = (typeof ROLLOUT_KINDS)[number];

export const ROLLOUT_STATUSES = ['running', 'paused', 'succeeded', 'failed', 'aborted', 'cancelled'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];
/** Statuses after which no new step starts. */
export const isRolloutClosed = (status: string) => !['running', 'paused'].includes(status);

/**
 * A board's step: `pending` (its phase has not started), `starting` (internal: a replica is
 * creating its operation; shown as `queued`), the operation's own statuses, or `skipped`
 * (the rollout was aborted or cancelled before its phase).
 */
export const STEP_STATUSES = ['pending', 'queued', 'running', 'succeeded', 'failed', 'cancelled', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const isStepEnded = (status: string) => ['succeeded', 'failed', 'cancelled', 'skipped'].includes(status);
/** A step that has been given an operation that has not ended yet. */
export const isStepActive = (status: string) => ['starting', 'queued', 'running'].includes(status);

export interface RolloutBoard {
  board_id: string | null;
  board_name: string;
  operation_id: number | null;
  status: StepStatus;
  phase: number;
  run_ms: number | null;
  metrics: Record<string, number> | null;
}

export type RolloutCounts = Record<StepStatus, number>;

export interface RolloutObject {
  id: number;
  kind: RolloutKind;
  status: RolloutStatus;
  board_selector: Record<string, string>;
  invocation_id: number | null;
  params: Record<string, unknown>;
  batch_size: number | null;
  batch_interval_s: number;
  abort: { failure_percent: number; min_finished: number } | null;
  created_by: string | null;
  created_at: string;
  finished_at: string | null;
  counts: RolloutCounts;
  boards: RolloutBoard[];
}

const publicStep = (status: string): StepStatus => (status === 'starting' ? 'queued' : (status as StepStatus));

export function countSteps(boards: Array<{ status: StepStatus }>): RolloutCounts {
  const counts = Object.fromEntries(STEP_STATUSES.map((s) => [s, 0])) as RolloutCounts;
  for (const b of boards) counts[b.status]++;
  return counts;
}

export function toRolloutBoard(row: RolloutBoardRow): RolloutBoard {
  return {
    board_id: row.boardId,
    board_name: row.boardName,
    operation_id: row.operationId,
    status: publicStep(row.status),
    phase: row.phase,
    run_ms: row.runMs,
    metrics: row.metrics ?? null,
  };
}

export function toRolloutObject(row: RolloutRow, boardRows: RolloutBoardRow[]): RolloutObject {
  const boards = boardRows.map(toRolloutBoard);
  return {
    id: row.id,
    kind: row.kind as RolloutKind,
    status: row.status as RolloutStatus,
    board_selector: row.boardSelector,
    invocation_id: row.invocationId,
    params: row.params,
    batch_size: row.batchSize,
    batch_interval_s: row.batchIntervalS,
    abort: row.abort ?? null,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    counts: countSteps(boards),
    boards,
  };
}

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

export const AbortSchema = z
  .object({
    failure_percent: z.number().min(0).max(100).openapi({ description: 'Abort once the failed share of finished boards reaches this (percent)', example: 50 }),
    min_finished: z.number().int().min(1).max(100_000).openapi({ description: '…but only once this many boards have finished', example: 2 }),
  })
  .strict();

export const RolloutCreateSchema = z
  .object({
    kind: z.enum(ROLLOUT_KINDS),
    board_selector: BoardSelectorSchema,
    invocation_id: z.number().int().positive().max(2_147_483_647).optional().openapi({ description: '`execute`: the invocation to run on every board' }),
    params: z.record(z.string(), z.unknown()).optional().openapi({
      description: '`pac_install`: `{ archive_sha256 }`; `pac_activate`: `{ pac }`; `script_deploy`: `{ script_id }`; `agent_update`: `{ version? }`',
      example: { pac: 'kv260-cfg1' },
    }),
    batch_size: z.number().int().min(1).max(100_000).optional().openapi({ description: 'Boards per phase; without it every board starts at once' }),
    batch_interval_s: z.number().int().min(0).max(7 * 86_400).optional().openapi({ description: 'Wait between the end of one phase and the start of the next' }),
    abort: AbortSchema.optional(),
  })
  .strict()
  .openapi('RolloutCreate', { example: { kind: 'pac_activate', board_selector: { 'mm/board-model': 'kv260' }, params: { pac: 'kv260-cfg1' }, batch_size: 1, abort: { failure_percent: 50, min_finished: 2 } } });
export type RolloutCreate = z.infer<typeof RolloutCreateSchema>;

const RolloutBoardSchema = z.object({
  board_id: z.string().nullable(),
  board_name: z.string(),
  operation_id: z.number().int().nullable(),
  status: z.enum(STEP_STATUSES),
  phase: z.number().int().openapi({ description: 'Its phase (0 first)' }),
  run_ms: z.number().nullable().openapi({ description: "The step's run time: `result.metrics.run_ms`, else the run's `duration_ms`" }),
  metrics: z.record(z.string(), z.number()).nullable().openapi({ description: "The step operation's `result.metrics`" }),
});

export const RolloutSchema = z
  .object({
    id: z.number().int().positive(),
    kind: z.enum(ROLLOUT_KINDS),
    status: z.enum(ROLLOUT_STATUSES),
    board_selector: z.record(z.string(), z.string()),
    invocation_id: z.number().int().nullable(),
    params: z.record(z.string(), z.unknown()),
    batch_size: z.number().int().nullable(),
    batch_interval_s: z.number().int(),
    abort: AbortSchema.nullable(),
    created_by: z.string().nullable(),
    created_at: isoTime,
    finished_at: isoTime.nullable(),
    counts: z.object(Object.fromEntries(STEP_STATUSES.map((s) => [s, z.number().int()])) as Record<StepStatus, z.ZodNumber>),
    boards: z.array(RolloutBoardSchema),
  })
  .openapi('Rollout');

export const RolloutListSchema = z.object({ rollouts: z.array(RolloutSchema), total: z.number().int() }).openapi('RolloutList');
