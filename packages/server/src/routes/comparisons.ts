import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { INT4_MAX, safeString } from '../http/safe-string.ts';
import { validationHook } from '../http/validation.ts';

const MetricName = safeString().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a metric name');
const Interval = z.tuple([z.number(), z.number()]);
const VerdictSchema = z.enum(['regressed', 'improved', 'unchanged', 'inconclusive']).openapi('Verdict');

const CompareBody = z
  .object({
    baseline: z.union([safeString().min(1).max(100), z.number().int().positive().max(INT4_MAX)]).openapi({ description: 'The baseline, by name or id' }),
    operation_ids: z.array(z.number().int().positive().max(INT4_MAX)).min(1).max(1000).optional().openapi({ description: 'The new runs: succeeded execute operations' }),
    rollout_id: z.number().int().positive().max(INT4_MAX).optional().openapi({ description: "Or an execute rollout: its boards' operations (those that did not succeed are left out)" }),
    thresholds: z.record(MetricName, z.number()).optional().openapi({ description: 'metric → percent; default 3 %' }),
    directions: z.record(MetricName, z.enum(['higher', 'lower'])).optional().openapi({ description: 'Which way is better for metrics whose name does not say (`*_fps` higher; `latency*`, `*_ms`, `energy*`, `*power*`, `*temperature*` lower)' }),
  })
  .strict()
  .openapi('ComparisonRequest', { example: { baseline: 'resnet50-kv260', rollout_id: 7, thresholds: { e2e_fps: 2 } } });

const BoardRow = z.object({
  board_id: z.string(),
  baseline: z.object({ median: z.number(), ci95: Interval }),
  current: z.object({ median: z.number(), ci95: Interval }),
  change_pct: z.number().nullable().openapi({ description: 'The shift (Hodges–Lehmann) in percent of the baseline median' }),
  ci95_pct: Interval.nullable().openapi({ description: 'Its exact 95 % interval (Mann–Whitney); null when the runs are too few for one' }),
  verdict: VerdictSchema,
  n: z.object({ baseline: z.number().int(), current: z.number().int() }),
  baseline_from: z.enum(['board', 'board_model', 'all']).openapi({ description: "Whose baseline runs: this board's, its board model's, or all of the baseline's" }),
});

const ComparisonSchema = z
  .object({
    verdict: VerdictSchema,
    baseline: z.object({ id: z.number().int(), name: z.string() }),
    operation_ids: z.array(z.number().int()),
    rollout_id: z.number().int().nullable(),
    metrics: z.array(
      z.object({ metric: z.string(), better: z.enum(['higher', 'lower']), threshold_pct: z.number(), boards: z.array(BoardRow), verdict: VerdictSchema }),
    ),
    skipped_metrics: z.array(z.string()).openapi({ description: 'Metrics of unknown direction (give `directions`)' }),
    differs: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])).openapi({ description: 'field → [baseline, current] of what the results depend on' }),
  })
  .openapi('Comparison');

const compareRoute = createRoute({
  method: 'post',
  path: '/api/comparisons/',
  tags: ['results'],
  summary: 'Put new runs beside a baseline: per metric and board, the change with its interval and a verdict',
  description:
    'Verdicts per metric and board: `regressed`, `improved`, `unchanged` or `inconclusive` against the threshold (docs/results.md). ' +
    'The overall verdict is `regressed` when a metric regressed on at least two boards (or on the only board). A regression also ' +
    'tells `regression.detected` to the webhooks.',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CompareBody } } } },
  responses: {
    200: { description: 'The comparison', content: { 'application/json': { schema: ComparisonSchema } } },
    400: { description: '`validation_failed` (`operation_ids` or `rollout_id`, one of them), `operation_not_comparable`' },
    404: { description: '`baseline_not_found`, `operation_not_found`, `rollout_not_found`' },
    415: { description: 'The body is not application/json' },
  },
});

/** Comparisons (docs/results.md). */
export function comparisonRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook((id) => new NotFoundError('not_found', `No ${String(id)}.`)) });
  app.openapi(compareRoute, async (c) => {
    const body = c.req.valid('json');
    if ((body.operation_ids === undefined) === (body.rollout_id === undefined)) {
      throw new BadRequestError('validation_failed', 'Give operation_ids or rollout_id (one of them).', [
        { field: body.operation_ids ? 'rollout_id' : 'operation_ids', message: 'operation_ids or rollout_id, one of them' },
      ]);
    }
    let operationIds = body.operation_ids ?? [];
    let rolloutId: number | null = null;
    if (body.rollout_id !== undefined) {
      const rollout = await ctx.rollouts.require(body.rollout_id);
      if (rollout.kind !== 'execute') throw new BadRequestError('operation_not_comparable', `Rollout ${rollout.id} is a ${rollout.kind} rollout: only execute rollouts make results.`);
      operationIds = rollout.boards.map((b) => b.operation_id).filter((id): id is number => typeof id === 'number');
      rolloutId = rollout.id;
    }
    return c.json(await ctx.results.compare({ ...body, operation_ids: operationIds }, rolloutId), 200);
  });
  return app;
}
