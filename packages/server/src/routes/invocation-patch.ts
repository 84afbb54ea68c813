import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { notFound } from '../errors.ts';
import { problemResponses, requireJson } from '../http/openapi.ts';
import { SerialIdParams } from '../http/params.ts';
import { validationHook } from '../http/validation.ts';
import { InvocationSchema } from '../invocations/invocation-records.ts';
import { updateInvocation } from '../invocations/invocation-updates.ts';
import { AppName } from '../accelerators/accelerator-schemas.ts';
import { setAuditTarget } from '../auth/request-auth.ts';

const PatchInvocationBody = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
    description: safeString().max(10_000, 'must be at most 10000 characters').optional(),
    requires_app: AppName.nullable().optional().openapi({
      description:
        'The accelerated application its runs need (docs/accelerators.md): a run on a board where it is not active loads it first ' +
        '(`result.app_loaded: true`); the scheduler prefers idle boards that have it active. `null` clears it (the invocation then shows no `requires_app`).',
    }),
  })
  .openapi('PatchInvocation', { example: { requires_app: 'kv260-benchmark-b4096' } });

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/invocations/{id}/',
  tags: ['invocations'],
  summary: "Change an invocation's name, description or required app",
  middleware: [requireJson] as const,
  request: { params: SerialIdParams, body: { required: true, content: { 'application/json': { schema: PatchInvocationBody } } } },
  responses: {
    200: { description: 'The invocation as it is now', content: { 'application/json': { schema: InvocationSchema } } },
    ...problemResponses,
    415: { description: 'The body is not application/json' },
  },
});

/**
 * `PATCH /api/invocations/<id>/` (its own module: the accelerator work added it; the rest of
 * the invocation's routes are in invocations.ts).
 */
export function invocationPatchRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.invocation) });
  app.openapi(patchRoute, async (c) => {
    const { id } = c.req.valid('param');
    setAuditTarget(`invocation ${id}`);
    return c.json(await updateInvocation(ctx, id, c.req.valid('json')), 200);
  });
  return app;
}
