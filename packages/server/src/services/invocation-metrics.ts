import type { StoreContext } from '../store-context.ts';
import { invocationMetricPoints, type MetricPoint } from '../operations/store.ts';
import { requireInvocation } from '../invocations/invocations.ts';

export type { MetricPoint };

/** The most runs one metrics answer holds (the latest ones). */
export const METRIC_POINTS_MAX = 1000;

/** One metric across an invocation's succeeded runs (health-check runs only when asked), oldest first (404 for an unknown invocation). */
export async function invocationMetricSeries(ctx: StoreContext, invocationId: number, name: string, limit = METRIC_POINTS_MAX, healthChecks = false): Promise<MetricPoint[]> {
  await requireInvocation(ctx, invocationId);
  return invocationMetricPoints(ctx.database.db, invocationId, name, Math.min(limit, METRIC_POINTS_MAX), healthChecks);
}
