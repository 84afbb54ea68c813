import { z } from '@hono/zod-openapi';
import type { operations } from '../db/schema.ts';

export type OperationRow = typeof operations.$inferSelect;

export const OPERATION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationStatusName = (typeof OPERATION_STATUSES)[number];
export const FINAL_STATUSES: readonly OperationStatusName[] = ['succeeded', 'failed', 'cancelled'];
export const isFinal = (status: string) => (FINAL_STATUSES as readonly string[]).includes(status);

export interface OperationProgress {
  phase: string;
  bytes_done: number;
  bytes_total: number;
}

export interface OperationError {
  code: string;
  message: string;
}

export interface WaitingExplanation {
  /** One sentence: "3 boards match: 1 offline, 2 in maintenance". */
  reason: string;
  matching: number;
  online: number;
  idle: number;
  maintenance: number;
  bad: number;
  /** Matching boards a reservation of someone other than the work's asker holds (the scheduler keeps the work off them). */
  reserved: number;
  gives_up_at: string | null;
}

/** Why queued selector work waits (fleet/waiting-explanation.ts works it out). */
export const WaitingSchema = z
  .object({
    reason: z.string().openapi({ example: '3 boards match: 1 offline, 2 in maintenance' }),
    matching: z.number().int().openapi({ description: 'Registered boards whose labels hold the selector' }),
    online: z.number().int(),
    idle: z.number().int().openapi({ description: 'Online, not in maintenance, not `bad`, not reserved by someone else, running and holding nothing: about to take it' }),
    maintenance: z.number().int(),
    bad: z.number().int(),
    reserved: z.number().int().openapi({ description: "Held by a reservation of someone other than the work's `created_by`: the work keeps off them" }),
    gives_up_at: z.string().nullable().openapi({ format: 'date-time', description: 'When it fails `queue_timeout` if no board took it' }),
  })
  .openapi('Waiting');

/** The operation as the API shows it (docs/api.md, "Boards and operations"). */
export interface OperationObject {
  id: number;
  kind: string;
  status: OperationStatusName;
  board_id: string | null;
  invocation_id: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: OperationProgress;
  result: unknown;
  error: OperationError | null;
  /** Who asked for it: a username, `MM_API_TOKEN`, or null (auth off). */
  created_by: string | null;
  /** Fleet scheduling: the labels its board must hold (board_id stays null until one is picked); null when a board was named. */
  board_selector: Record<string, string> | null;
  priority: number;
  /** The health check this run belongs to (docs/fleet.md), or null for the user's own work. */
  health_check_id: number | null;
  /** Running on a board that is offline: since when (operations/board-lost.ts); null otherwise. */
  board_offline_since: string | null;
  /** Queued selector work: why it waits (fleet/waiting-explanation.ts), filled where it is read; null otherwise. */
  waiting: WaitingExplanation | null;
}

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

/** The operation object's zod schema for the OpenAPI document (the invocation details list operations with it too). */
export const OperationSchema = z
  .object({
    id: z.number().int().positive(),
    kind: z.string().openapi({ example: 'execute' }),
    status: z.enum(OPERATION_STATUSES),
    board_id: z.string().nullable(),
    invocation_id: z.number().int().nullable(),
    created_at: isoTime,
    started_at: isoTime.nullable(),
    finished_at: isoTime.nullable(),
    progress: z.object({ phase: z.string(), bytes_done: z.number(), bytes_total: z.number() }),
    result: z.unknown().openapi({
      description:
        'What the operation produced, by kind (null until it ends). `transfer` and `execute` report the input files: ' +
        '`{ invocation_dir, files_pulled, files_cached, bytes_pulled, wire_bytes, files: [{ kind, filename, size, cached, bytes_pulled, wire_bytes, pushed? }] }`, ' +
        'where `bytes_pulled` counts file bytes received over the agent link and `wire_bytes` the bytes that crossed it for them ' +
        '(fewer when the link compressed them, docs/compression.md); the server adds what it sent of them: `bytes_sent`, `wire_bytes_sent`, ' +
        '`pulls: [{ filename, sha256, offset, bytes, wire_bytes, complete, pushed? }]`; `pushed: true` marks a file the server sent right behind ' +
        'the operation\'s start, with no pull (`complete` then means sent whole). `execute` adds `exit_code`, `duration_ms`, `output_video`, ' +
        'and for the output video\'s way back `output_bytes_received` (file bytes the server received, every attempt) and `output_wire_bytes` (the bytes on the wire for them).',
      example: {
        invocation_dir: '/var/lib/mm-agent/invocations/7',
        files_pulled: 1,
        files_cached: 0,
        bytes_pulled: 20971520,
        wire_bytes: 402211,
        files: [{ kind: 'parameter', filename: 'design.bit', size: 20971520, cached: false, bytes_pulled: 20971520, wire_bytes: 402211, pushed: true }],
        bytes_sent: 20971520,
        wire_bytes_sent: 402211,
        pulls: [{ filename: 'design.bit', sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', offset: 0, bytes: 20971520, wire_bytes: 402211, complete: true, pushed: true }],
        exit_code: 0,
        duration_ms: 41250,
        output_bytes_received: 67108864,
        output_wire_bytes: 67108864,
      },
    }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    created_by: z.string().nullable().openapi({ description: 'Who asked for it: a username, `MM_API_TOKEN`, or null when auth was off' }),
    board_selector: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({ description: 'Run on any board whose labels hold these pairs (`board_id` is null until one is picked); null when a board was named' }),
    priority: z.number().int().openapi({ description: 'Waiting selector work is taken by priority (−100…100), then age' }),
    health_check_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The health check this run belongs to; null for other work. Lists leave health-check runs out unless asked (`?health_checks=1`)' }),
    board_offline_since: isoTime.nullable().openapi({
      description:
        'Running on a board that went offline: since when (null otherwise). Offline for `MM_BOARD_LOST_S`, it fails `board_lost`; ' +
        'what the board reports later is kept as `result.late_result` and does not change the status.',
    }),
    waiting: z.union([WaitingSchema, z.null()]).openapi({
      description: 'Queued selector work: why it waits (boards that match, by what keeps them) and when it gives up; null otherwise',
    }),
  })
  .openapi('Operation');

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toOperationObject(row: OperationRow): OperationObject {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status as OperationStatusName,
    board_id: row.boardId,
    invocation_id: row.invocationId,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
    progress: row.progress,
    result: row.result ?? null,
    error: row.error ?? null,
    created_by: row.createdBy ?? null,
    board_selector: row.boardSelector ?? null,
    priority: row.priority,
    health_check_id: row.healthCheckId ?? null,
    board_offline_since: iso(row.boardOfflineSince ?? null),
    waiting: null,
  };
}
