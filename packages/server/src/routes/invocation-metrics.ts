import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { notFound } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { SerialIdParams } from '../http/params.ts';
import { SummarySchema } from './result-schemas.ts';
import { invocationMetricSeries, METRIC_POINTS_MAX } from '../services/invocation-metrics.ts';

const MetricQuery = z.object({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a metric name is [a-z][a-z0-9_]* (at most 64 characters)')
    .openapi({ description: 'The metric (`fps`, `run_ms`, ...)', example: 'fps' }),
  health_checks: z
    .enum(['0', '1'])
    .optional()
    .openapi({ description: '`1`: include the runs of health checks (left out by default)' }),
  limit: z.coerce.number().int().min(1).max(METRIC_POINTS_MAX).optional().openapi({ description: `The latest this many runs (default and most ${METRIC_POINTS_MAX})` }),
});

const MetricPointSchema = z
  .object({
    operation_id: z.number().int(),
    board_id: z.string().nullable(),
    finished_at: z.string(),
    value: z.number(),
    // The run's `result.summary[name]`, for a run of several repeats (the route's description says so).
    summary: SummarySchema.optional(),
  })
  .openapi('MetricPoint');

const metricsRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/metrics/',
  tags: ['invocations', 'operations'],
  summary: "One metric across the invocation's runs",
  description:
    "`result.metrics[name]` of each succeeded execute of the invocation that has it, oldest first (by `finished_at`): " +
    `the latest ${METRIC_POINTS_MAX} runs at most. A run that counted several repeats also gives \`summary\`, its \`result.summary[name]\`. Runs without that metric are left out, and so are health-check runs unless \`?health_checks=1\`.`,
  request: { params: SerialIdParams, query: MetricQuery },
  responses: {
    200: { description: 'The points', content: { 'application/json': { schema: z.object({ points: z.array(MetricPointSchema) }).openapi('MetricSeries') } } },
    400: { description: 'Bad input (`validation_failed`: no or a bad `name`)' },
    404: { description: '`invocation_not_found`' },
  },
});

/** Per-run metrics of an invocation (docs/api.md, "Per-run metrics"). */
export function invocationMetricRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });
  app.openapi(metricsRoute, async (c) => {
    const { name, limit, health_checks } = c.req.valid('query');
    return c.json({ points: await invocationMetricSeries(ctx, c.req.valid('param').id, name, limit, health_checks === '1') }, 200);
  });
  return app;
}
