/**
 * What one health-check run says about its board (docs/fleet.md): it succeeded and every
 * expected metric of `result.metrics` is within its bounds → `good`; otherwise `bad` with a
 * reason people can read (`fps 3.1 < min 10`).
 */

export interface MetricBounds {
  min?: number | undefined;
  max?: number | undefined;
}

export interface HealthExpect {
  metrics?: Record<string, MetricBounds> | undefined;
}

export interface CheckRun {
  status: string;
  result: unknown;
  error: { code: string; message: string } | null;
}

export type Verdict = { health: 'good' } | { health: 'bad'; reason: string };

function metricsOf(result: unknown): Record<string, unknown> {
  if (!result || typeof result !== 'object') return {};
  const metrics = (result as { metrics?: unknown }).metrics;
  return metrics && typeof metrics === 'object' ? (metrics as Record<string, unknown>) : {};
}

export function evaluateCheckRun(run: CheckRun, expect: HealthExpect): Verdict {
  if (run.status !== 'succeeded') {
    const why = run.error ? `${run.error.code}: ${run.error.message}` : run.status;
    return { health: 'bad', reason: `run ${run.status} (${why})` };
  }
  const metrics = metricsOf(run.result);
  const problems: string[] = [];
  for (const [name, bounds] of Object.entries(expect.metrics ?? {})) {
    const value = metrics[name];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      problems.push(`${name} missing`);
      continue;
    }
    if (bounds.min !== undefined && value < bounds.min) problems.push(`${name} ${value} < min ${bounds.min}`);
    if (bounds.max !== undefined && value > bounds.max) problems.push(`${name} ${value} > max ${bounds.max}`);
  }
  return problems.length ? { health: 'bad', reason: problems.join(', ') } : { health: 'good' };
}

/** The board's health from the latest run of each of its checks: bad if any is (reasons named by check), good if all are. */
export function combineVerdicts(verdicts: Array<{ check: string; verdict: Verdict }>): Verdict | undefined {
  if (verdicts.length === 0) return undefined;
  const bad = verdicts.flatMap(({ check, verdict }) => (verdict.health === 'bad' ? [`${check}: ${verdict.reason}`] : []));
  return bad.length ? { health: 'bad', reason: bad.join('; ') } : { health: 'good' };
}
