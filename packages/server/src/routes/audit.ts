import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { problem } from '../auth/schemas.ts';
import { PageQuery } from '../http/params.ts';
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
    user_name: z.string().nullable().openapi({ description: "The acting user's name (today's, if renamed); as `user` for MM_API_TOKEN" }),
    target_name: z
      .string()
      .nullable()
      .openapi({ description: "The name of the board, invocation, device script, user or token the target names, where known", example: 'night run' }),
    count: z.number().int().min(1).openapi({ description: 'How many identical consecutive actions this entry stands for (a servo drag, a held motor button)' }),
    last_at: isoTime.openapi({ description: 'When the last of them happened (`at` when count is 1)' }),
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
    'script commands, users, tokens, sign-ins, sign-outs and failed sign-ins. A resumable upload is one entry ' +
    '(`upload.attach`, when its last byte arrives), not one per PATCH; identical consecutive script commands of one ' +
    'user on one target (a servo drag) are one entry with a `count`.',
  request: { query: AuditQuery },
  responses: {
    200: {
      description: 'A page of events; `total` counts every event matching the filters',
      content: { 'application/json': { schema: z.object({ events: z.array(AuditEventSchema), total: z.number().int() }).openapi('AuditEventList') } },
    },
    400: problem('Bad input'),
  },
});

const actionsRoute = createRoute({
  method: 'get',
  path: '/api/audit/actions/',
  tags: ['people and access'],
  summary: 'The actions that occur in the audit log, alphabetically (admin): the choices of the action filter',
  responses: {
    200: { description: 'The actions', content: { 'application/json': { schema: z.object({ actions: z.array(z.string()) }).openapi('AuditActions') } } },
  },
});

export function auditRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(() => new NotFoundError('route_not_found', 'No such route.')) });
  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await auth.audit.list({ ...q, since: q.since ? new Date(q.since) : undefined }), 200);
  });
  app.openapi(actionsRoute, async (c) => c.json({ actions: await auth.audit.actions() }, 200));
  return app;
}
