import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { notFound } from '../errors.ts';
import { problemResponses, requireJson } from '../http/openapi.ts';
import { PageQuery, SerialIdParams } from '../http/params.ts';
import { validationHook } from '../http/validation.ts';
import { InvocationDetailsSchema, InvocationListItemSchema, latestOperationsOf, latestRunsOf } from '../services/invocation-operations.ts';
import { InvocationSchema, toInvocationRecord } from '../invocations/invocation-records.ts';
import { createInvocation, deleteInvocation, findInvocation, listInvocations } from '../invocations/invocations.ts';
import { setAuditTarget } from '../auth/request-auth.ts';

const ListQuery = PageQuery.extend({
  q: safeString().max(200).optional().openapi({ description: 'Only invocations whose name contains this (case-insensitive).' }),
});

const CreateInvocationBody = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    description: safeString().max(10_000, 'must be at most 10000 characters'),
  })
  .openapi('CreateInvocation', { example: { name: 'yolo-test', description: '' } });

const InvocationList = z.object({ invocations: z.array(InvocationListItemSchema), total: z.number().int() }).openapi('InvocationList');

const listRoute = createRoute({
  method: 'get',
  path: '/api/invocations/',
  tags: ['invocations'],
  summary: 'List invocations, newest first, each with its latest run',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of invocations and the number of all matches', content: { 'application/json': { schema: InvocationList } } },
    400: problemResponses[400],
  },
});

const createInvocationRoute = createRoute({
  method: 'post',
  path: '/api/invocations/create/',
  tags: ['invocations'],
  summary: 'Create an invocation',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateInvocationBody } } } },
  responses: {
    201: { description: 'The new invocation', content: { 'application/json': { schema: InvocationSchema } } },
    400: problemResponses[400],
    415: { description: 'The body is not application/json' },
  },
});

const detailsRoute = createRoute({
  method: 'get',
  path: '/api/invocations/{id}/',
  tags: ['invocations'],
  summary: 'An invocation with its latest operations',
  request: { params: SerialIdParams },
  responses: {
    200: { description: 'The invocation', content: { 'application/json': { schema: InvocationDetailsSchema } } },
    404: problemResponses[404],
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/invocations/{id}/',
  tags: ['invocations'],
  summary: 'Delete an invocation (cancels its operations; removes its files)',
  request: { params: SerialIdParams },
  responses: {
    204: { description: 'Deleted' },
    404: problemResponses[404],
  },
});

export function invocationRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });

  app.openapi(listRoute, async (c) => {
    const page = await listInvocations(ctx, c.req.valid('query'));
    const runs = await latestRunsOf(ctx, page.invocations.map((i) => i.id));
    return c.json({ ...page, invocations: page.invocations.map((i) => ({ ...i, latest_run: runs.get(i.id) ?? null })) }, 200);
  });

  app.openapi(createInvocationRoute, async (c) => {
    const created = await createInvocation(ctx, c.req.valid('json'));
    setAuditTarget(`invocation ${created.id}`);
    return c.json(created, 201);
  });

  app.openapi(detailsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await findInvocation(ctx, id);
    if (!found) throw notFound.invocation(id);
    const operations = await latestOperationsOf(ctx, id);
    return c.json({ ...toInvocationRecord(found.row, found.files), operations }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    await deleteInvocation(ctx, c.req.valid('param').id);
    return c.body(null, 204);
  });

  return app;
}
