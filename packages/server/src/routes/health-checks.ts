import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { requireJson } from '../http/openapi.ts';
import { PageQuery, SerialIdParams } from '../http/params.ts';
import { validationHook } from '../http/validation.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { HealthCheckInputSchema, HealthCheckSchema } from '../fleet/health-checks.ts';
import { notFoundCheck } from '../fleet/health-check-service.ts';
import { OperationSchema } from '../operations/operation-object.ts';

const HealthCheckList = z.object({ health_checks: z.array(HealthCheckSchema), total: z.number().int() }).openapi('HealthCheckList');

const PatchBody = HealthCheckInputSchema.partial().openapi('HealthCheckPatch');

const problems = {
  400: { description: 'Bad input (problem+json, `validation_failed`, `malformed_json`)' },
  404: { description: '`health_check_not_found`, or `invocation_not_found` for the invocation named' },
} as const;

const tags = ['fleet'];

const listRoute = createRoute({
  method: 'get',
  path: '/api/health-checks/',
  tags,
  summary: 'List health checks',
  request: { query: PageQuery },
  responses: { 200: { description: 'A page of health checks', content: { 'application/json': { schema: HealthCheckList } } }, 400: problems[400] },
});

const createCheckRoute = createRoute({
  method: 'post',
  path: '/api/health-checks/',
  tags,
  summary: 'Define a health check: an invocation run on every matching board every interval_s',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: HealthCheckInputSchema } } } },
  responses: {
    201: { description: 'The health check', content: { 'application/json': { schema: HealthCheckSchema } } },
    400: problems[400],
    404: problems[404],
    415: { description: 'The body is not application/json' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/health-checks/{id}/',
  tags,
  summary: 'A health check',
  request: { params: SerialIdParams },
  responses: { 200: { description: 'The health check', content: { 'application/json': { schema: HealthCheckSchema } } }, 404: problems[404] },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/health-checks/{id}/',
  tags,
  summary: 'Change a health check',
  middleware: [requireJson] as const,
  request: { params: SerialIdParams, body: { required: true, content: { 'application/json': { schema: PatchBody } } } },
  responses: {
    200: { description: 'The health check', content: { 'application/json': { schema: HealthCheckSchema } } },
    400: problems[400],
    404: problems[404],
    415: { description: 'The body is not application/json' },
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/health-checks/{id}/',
  tags,
  summary: 'Delete a health check (its past runs stay, as ordinary operations)',
  request: { params: SerialIdParams },
  responses: { 204: { description: 'Deleted' }, 404: problems[404] },
});

const runRoute = createRoute({
  method: 'post',
  path: '/api/health-checks/{id}/run/',
  tags,
  summary: 'Run a health check now',
  description: 'Queues a run of the check on every online board its selector matches, ahead of their other waiting work.',
  request: { params: SerialIdParams },
  responses: {
    202: { description: 'The runs queued', content: { 'application/json': { schema: z.object({ runs: z.array(OperationSchema) }).openapi('HealthCheckRunNow') } } },
    404: problems[404],
    409: { description: '`no_matching_board`: no online board matches its selector' },
  },
});

/** Health checks (admin; docs/fleet.md). */
export function healthCheckRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFoundCheck) });

  app.openapi(listRoute, async (c) => c.json(await ctx.healthChecks.list(c.req.valid('query')), 200));

  app.openapi(createCheckRoute, async (c) => {
    const check = await ctx.healthChecks.create(c.req.valid('json'));
    setAuditTarget(`health_check ${check.id}`, { name: check.name });
    return c.json(check, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.healthChecks.require(c.req.valid('param').id), 200));

  app.openapi(patchRoute, async (c) => {
    const check = await ctx.healthChecks.update(c.req.valid('param').id, c.req.valid('json'));
    setAuditTarget(`health_check ${check.id}`, { name: check.name });
    return c.json(check, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.healthChecks.delete(id);
    setAuditTarget(`health_check ${id}`);
    return c.body(null, 204);
  });

  app.openapi(runRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { check, runs } = await ctx.healthChecks.runCheckNow(id);
    setAuditTarget(`health_check ${id}`, { name: check.name });
    return c.json({ runs }, 202);
  });

  return app;
}
