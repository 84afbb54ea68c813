import { z } from '@hono/zod-openapi';
import type { RolloutLeftOut, rolloutBoards, rollouts } from '../db/schema.ts';
import { BoardSelectorSchema } from '../boards/board-selector.ts';

export type RolloutRow = typeof rollouts.$inferSelect;
/** A step's row, with (when read with its operation) since when its board is offline mid-run. */
export type RolloutBoardRow = typeof rolloutBoards.$inferSelect & { boardOfflineSince?: Date | null; stepError?: { code: string; message: string } | null };

export const ROLLOUT_KINDS = ['execute', 'pac_install', 'pac_activate', 'script_deploy', 'agent_update', 'app_install', 'app_load', 'power_cycle'] as const;
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
  /** Running on a board that is offline: since when (null otherwise). */
  board_offline_since: string | null;
  /** Why a failed or cancelled step ended so: its operation's error (null otherwise). */
  error: { code: string; message: string } | null;
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
  /** Boards the selector matched but the rollout left out (maintenance, `bad`). */
  left_out: RolloutLeftOut[];
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
    board_offline_since: row.boardOfflineSince ? row.boardOfflineSince.toISOString() : null,
    error: row.stepError ?? null,
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
    left_out: row.leftOut ?? [],
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
      description: '`pac_install`: `{ archive_sha256 }`; `pac_activate`: `{ pac }`; `script_deploy`: `{ script_id }`; `agent_update`: `{ version? }`; `app_install`: `{ archive_sha256 }`; `app_load`: `{ app }`',
      example: { pac: 'kv260-cfg1' },
    }),
    batch_size: z.number().int().min(1).max(100_000).optional().openapi({ description: 'Boards per phase; without it every board starts at once' }),
    batch_interval_s: z.number().int().min(0).max(7 * 86_400).optional().openapi({ description: 'Wait between the end of one phase and the start of the next' }),
    abort: AbortSchema.optional(),
    include_maintenance: z.boolean().optional().openapi({ description: 'Also boards in maintenance (left out by default, as selector work leaves them)' }),
    include_bad: z.boolean().optional().openapi({ description: 'Also boards whose health is `bad` (left out by default)' }),
    repeat: z.number().int().min(1).max(100).optional().openapi({ description: '`execute`: counted runs on each board (1–100, default 1; docs/results.md)' }),
    warmup: z.number().int().min(0).max(20).optional().openapi({ description: '`execute`: runs before the counted ones, not counted (0–20, default 0)' }),
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
  board_offline_since: isoTime.nullable().openapi({ description: 'Running on a board that went offline: since when (null otherwise); after `MM_BOARD_LOST_S` the step fails `board_lost`' }),
  error: z
    .object({ code: z.string(), message: z.string() })
    .nullable()
    .openapi({ description: "Why a failed or cancelled step ended so (its operation's `error`); null otherwise", example: { code: 'exit_code', message: 'the runner exited with status 3' } }),
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
    left_out: z
      .array(z.object({ board_id: z.string(), board_name: z.string(), reason: z.enum(['maintenance', 'bad']) }))
      .openapi({ description: 'Boards the selector matched that the rollout left out, and why (`include_maintenance`, `include_bad` take them)' }),
  })
  .openapi('Rollout');

export const RolloutListSchema = z.object({ rollouts: z.array(RolloutSchema), total: z.number().int() }).openapi('RolloutList');
