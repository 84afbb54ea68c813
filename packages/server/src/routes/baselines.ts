import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { NotFoundError } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { PageQuery } from '../http/params.ts';
import { INT4_MAX, safeString } from '../http/safe-string.ts';
import { validationHook } from '../http/validation.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { SummarySchema, RunContextSchema } from './result-schemas.ts';

const notFoundBaseline = (ref: unknown) => new NotFoundError('baseline_not_found', `No baseline ${JSON.stringify(String(ref))}.`);

const BaselineName = safeString()
  .min(1)
  .max(100)
  .regex(/^(?![0-9]+$)[^\s/][^/]*$/, 'a name of 1–100 characters without "/", not only digits, not starting with a space')
  .openapi({ example: 'resnet50-kv260-2026-11' });

const BaselineSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    invocation_id: z.number().int().nullable(),
    operation_ids: z.array(z.number().int()),
    runs: z.array(z.object({ operation_id: z.number().int(), board_id: z.string().nullable(), metrics: z.record(z.string(), z.number()) })).openapi({
      description: 'Every counted run of its operations, copied in when it was saved',
    }),
    summary_by_board: z.record(z.string(), z.record(z.string(), SummarySchema)).openapi({ description: 'board id → metric → summary of its runs' }),
    contexts: z.record(z.string(), RunContextSchema).openapi({ description: "operation id → that run's `result.context`" }),
    created_by: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Baseline');

const CreateBaseline = z
  .object({
    name: BaselineName,
    operation_ids: z.array(z.number().int().positive().max(INT4_MAX)).min(1).max(1000).openapi({ description: 'Succeeded execute operations of one invocation (with repeats, each adds its counted runs)' }),
  })
  .strict()
  .openapi('CreateBaseline', { example: { name: 'resnet50-kv260', operation_ids: [12, 13, 14] } });

const BaselineParams = z.object({
  id: safeString().min(1).max(100).openapi({ param: { name: 'id', in: 'path' }, description: 'The baseline id, or its name', example: '1' }),
});

const tags = ['results'];

const listRoute = createRoute({
  method: 'get',
  path: '/api/baselines/',
  tags,
  summary: 'List baselines',
  request: { query: PageQuery.extend({ invocation_id: z.coerce.number().int().positive().max(INT4_MAX).optional().openapi({ description: 'Only the baselines of this invocation' }) }) },
  responses: {
    200: { description: 'A page of baselines', content: { 'application/json': { schema: z.object({ baselines: z.array(BaselineSchema), total: z.number().int() }).openapi('BaselineList') } } },
    400: { description: 'Bad query' },
  },
});

const createBaselineRoute = createRoute({
  method: 'post',
  path: '/api/baselines/',
  tags,
  summary: 'Save the runs of some operations as a named baseline',
  description: 'The counted runs (`result.runs`) of each operation, their summary per board and their contexts are copied into the baseline (docs/results.md).',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateBaseline } } } },
  responses: {
    201: { description: 'The baseline', content: { 'application/json': { schema: BaselineSchema } } },
    400: { description: '`validation_failed`, or `operation_not_comparable` (not a succeeded execute with metrics, or runs of several invocations)' },
    404: { description: '`operation_not_found`' },
    409: { description: '`baseline_exists`: the name is taken' },
    415: { description: 'The body is not application/json' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/baselines/{id}/',
  tags,
  summary: 'A baseline (by id or name)',
  request: { params: BaselineParams },
  responses: { 200: { description: 'The baseline', content: { 'application/json': { schema: BaselineSchema } } }, 404: { description: '`baseline_not_found`' } },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/baselines/{id}/',
  tags,
  summary: 'Delete a baseline (by id or name); its operations stay',
  request: { params: BaselineParams },
  responses: { 204: { description: 'Deleted' }, 404: { description: '`baseline_not_found`' } },
});

/** Baselines (docs/results.md). */
export function baselineRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFoundBaseline) });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await ctx.results.listBaselines({ limit: q.limit, offset: q.offset, ...(q.invocation_id !== undefined ? { invocationId: q.invocation_id } : {}) }), 200);
  });

  app.openapi(createBaselineRoute, async (c) => {
    const baseline = await ctx.results.createBaseline(c.req.valid('json'));
    setAuditTarget(`baseline ${baseline.id}`, { name: baseline.name });
    return c.json(baseline, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.results.requireBaseline(c.req.valid('param').id), 200));

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.results.deleteBaseline(id);
    setAuditTarget(`baseline ${id}`);
    return c.body(null, 204);
  });

  return app;
}
