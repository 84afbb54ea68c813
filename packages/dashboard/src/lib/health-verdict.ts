// From the shared package (not ../api/client.ts): pure, so Node-side unit tests can import this file.
import type { Operation, Schemas } from '@mm/api-client';

export type HealthCheck = Schemas['HealthCheck'];
export type Bounds = { min?: number; max?: number };

/**
 * What one run of a health check says about its board, as the server judges it (docs/fleet.md):
 * it succeeded and every expected metric of `result.metrics` is within its bounds → pass;
 * otherwise fail with a reason people can read (`fps 3.1 < min 10`). Still queued or running → null.
 * The bounds are the check's as they are now: for a run from before the check last changed, the
 * caller says so (the bounds it was judged by are not kept).
 */
export function runVerdict(op: Operation, expect: HealthCheck['expect']): { pass: boolean; reason: string } | null {
  if (op.status === 'queued' || op.status === 'running') return null;
  if (op.status !== 'succeeded') return { pass: false, reason: op.error ? `${op.error.code}: ${op.error.message}` : `run ${op.status}` };
  const metrics = runMetrics(op);
  const problems: string[] = [];
  for (const [name, b] of Object.entries(expect.metrics ?? {})) {
    const v = metrics[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) problems.push(`${name} missing`);
    else {
      if (b.min !== undefined && v < b.min) problems.push(`${name} ${v} < min ${b.min}`);
      if (b.max !== undefined && v > b.max) problems.push(`${name} ${v} > max ${b.max}`);
    }
  }
  return problems.length ? { pass: false, reason: problems.join(', ') } : { pass: true, reason: '' };
}

/** `fps ≥ 10, latency_ms ≤ 150`, or what a check with no bounds asks: that the run succeeds. */
export function expectText(expect: HealthCheck['expect']): string {
  const parts = Object.entries(expect.metrics ?? {}).flatMap(([name, b]) => [
    ...(b.min !== undefined ? [`${name} ≥ ${b.min}`] : []),
    ...(b.max !== undefined ? [`${name} ≤ ${b.max}`] : []),
  ]);
  return parts.join(', ') || 'the run succeeds';
}

/** 3600 → `1 h`, 5400 → `1 h 30 min`, 90 → `90 s`. */
export function intervalText(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

/**
 * The health-checks page with a new check's form opened for these labels (`?new=1&label=k=v…`):
 * a board page's "create a check that matches this board" (`mm/` labels left out: the board's
 * own people's labels say which boards are alike better than its model or agent version).
 */
export function newCheckHref(labels: Record<string, string>): string {
  const sp = new URLSearchParams({ new: '1' });
  for (const [k, v] of Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))) sp.append('label', `${k}=${v}`);
  return `/health-checks?${sp}`;
}

/** The numbers a run reported (`result.metrics`). */
export function runMetrics(op: Operation): Record<string, unknown> {
  const raw = (op.result as { metrics?: unknown } | null)?.metrics;
  return raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
}

/** Whether a run was asked for before the check last changed (its bounds may have been others). */
export function beforeChange(op: Operation, check: HealthCheck): boolean {
  return new Date(op.created_at).getTime() < new Date(check.updated_at).getTime();
}
