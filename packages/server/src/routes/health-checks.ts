import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { NotFoundError } from '../errors.ts';
import { requireJson, InvocationId } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { requireInvocation } from '../services/invocations.ts';
import {
  deleteHealthCheck,
  findHealthCheck,
  HealthCheckInputSchema,
  HealthCheckSchema,
  insertHealthCheck,
  listHealthChecks,
  toHealthCheckObject,
  updateHealthCheck,
} from '../fleet/health-checks.ts';

const notFoundCheck = (id: unknown) => new NotFoundError('health_check_not_found', `No health check with id ${String(id)}.`);

const IdParams = z.object({
  // A serial key like an invocation's: a larger number is a 400, never a database error.
  id: InvocationId.openapi({ param: { name: 'id', in: 'path' }, type: 'integer', example: 1 }),
});

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

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
  request: { query: ListQuery },
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
  request: { params: IdParams },
  responses: { 200: { description: 'The health check', content: { 'application/json': { schema: HealthCheckSchema } } }, 404: problems[404] },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/health-checks/{id}/',
  tags,
  summary: 'Change a health check',
  middleware: [requireJson] as const,
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: PatchBody } } } },
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
  request: { params: IdParams },
  responses: { 204: { description: 'Deleted' }, 404: problems[404] },
});

/** Health checks (admin; docs/fleet.md). */
export function healthCheckRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFoundCheck) });
  const { db } = ctx.database;

  app.openapi(listRoute, async (c) => {
    const { rows, total } = await listHealthChecks(db, c.req.valid('query'));
    return c.json({ health_checks: rows.map(toHealthCheckObject), total }, 200);
  });

  app.openapi(createCheckRoute, async (c) => {
    const input = c.req.valid('json');
    await requireInvocation(ctx, input.invocation_id);
    const row = await insertHealthCheck(db, input);
    setAuditTarget(`health_check ${row.id}`, { name: row.name });
    ctx.scheduler.kick();
    return c.json(toHealthCheckObject(row), 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await findHealthCheck(db, id);
    if (!row) throw notFoundCheck(id);
    return c.json(toHealthCheckObject(row), 200);
  });

  app.openapi(patchRoute, async (c) => {
    const { id } = c.req.valid('param');
    const input = c.req.valid('json');
    if (!(await findHealthCheck(db, id))) throw notFoundCheck(id);
    if (input.invocation_id !== undefined) await requireInvocation(ctx, input.invocation_id);
    const row = await updateHealthCheck(db, id, input);
    if (!row) throw notFoundCheck(id);
    setAuditTarget(`health_check ${row.id}`, { name: row.name });
    return c.json(toHealthCheckObject(row), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await deleteHealthCheck(db, id))) throw notFoundCheck(id);
    setAuditTarget(`health_check ${id}`);
    return c.body(null, 204);
  });

  return app;
}
