/**
 * Fleet fields the contract names that the generated client types do not hold yet (they are
 * being added to the server at the same time: health, maintenance, queue, facts, telemetry,
 * per-run metrics, selector work). Every one is optional here, so each page works against a
 * server without them; once the OpenAPI schema has them this file can go.
 */
// From the shared package (not ./client.ts): pure types, so Node-side unit tests can import this file.
import type { Board, Operation } from '@mm/api-client';

export type Health = 'unknown' | 'good' | 'bad';

/** The latest telemetry sample (contract: "Per-run metrics and board telemetry"). */
export interface TelemetrySample {
  at: string;
  temperatures_c?: Record<string, number>;
  power_w?: number | null;
  memory_used_bytes?: number | null;
  load_1m?: number | null;
  disk_free_bytes?: number | null;
}

export type FleetBoard = Board & {
  labels?: Record<string, string>;
  facts?: Record<string, unknown> | null;
  health?: Health | null;
  health_reason?: string | null;
  health_checked_at?: string | null;
  maintenance?: boolean | null;
  current_operation_id?: number | null;
  queued?: number | null;
  telemetry?: TelemetrySample | null;
};

export type FleetOperation = Operation & {
  board_selector?: Record<string, string> | null;
  priority?: number | null;
};

/** `PATCH /api/boards/<id>/`'s body (admin). */
export interface BoardPatch {
  name?: string;
  labels?: Record<string, string>;
  maintenance?: boolean;
}

/** One point of `GET /api/invocations/<id>/metrics/?name=`. */
export interface MetricPoint {
  operation_id: number;
  board_id: string | null;
  finished_at: string;
  value: number;
}

/** The hottest sensor of a sample (what a sparkline shows), or null without one. */
export function hottest(t: TelemetrySample | null | undefined): number | null {
  const values = Object.values(t?.temperatures_c ?? {}).filter((v) => Number.isFinite(v));
  return values.length ? Math.max(...values) : null;
}

/** Labels people set (not the agent's read-only `mm/` ones). */
export function userLabels(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !k.startsWith('mm/')));
}

