import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { PageQuery, problem } from '../auth/schemas.ts';
import { NotFoundError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { safeString } from '../http/safe-string.ts';

const isoTime = z.string().openapi({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' });

const AuditEventSchema = z
  .object({
    id: z.number().int(),
    at: isoTime,
    user: z.string().nullable().openapi({ description: 'Username (`MM_API_TOKEN` for the shared token); null for a failed sign-in or auth off' }),
    user_id: z.string().nullable(),
    action: z.string().openapi({ example: 'invocation.execute' }),
    target: z.string().nullable().openapi({ example: '/api/invocations/12/execute/' }),
    ip: z.string().nullable(),
    request_id: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi('AuditEvent');

const AuditQuery = PageQuery.extend({
  // safeString: a NUL reached PostgreSQL and came back as a 500 (found by the API fuzz).
  user: safeString().max(200).optional().openapi({ description: 'Only this username' }),
  action: safeString().max(200).optional().openapi({ description: 'Only this action (e.g. `auth.login_failed`)' }),
  since: z.iso.datetime({ offset: true }).optional().openapi({ description: 'Only events at or after this time (ISO 8601)' }),
});

const listRoute = createRoute({
  method: 'get',
  path: '/api/audit/',
  tags: ['people and access'],
  summary: 'The audit log, newest first (admin)',
  description:
    'Every change: invocations, files, transfers and runs, cancels, boards, PACs, the device-script catalogue and relayed ' +
    'script commands, users, tokens, sign-ins, sign-outs and failed sign-ins.',
  request: { query: AuditQuery },
  responses: {
    200: { description: 'A page of events', content: { 'application/json': { schema: z.object({ events: z.array(AuditEventSchema), total: z.number().int() }) } } },
    400: problem('Bad input'),
  },
});

export function auditRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(() => new NotFoundError('route_not_found', 'No such route.')) });
  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await auth.audit.list({ ...q, since: q.since ? new Date(q.since) : undefined }), 200);
  });
  return app;
}
