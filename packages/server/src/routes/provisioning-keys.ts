import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { IdParams, PageQuery } from '../http/params.ts';
import { currentActor, setAuditTarget } from '../auth/request-auth.ts';
import { ValidationError } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { safeString } from '../http/safe-string.ts';
import { validationHook } from '../http/validation.ts';
import { LabelsSchema } from '../boards/label-schema.ts';
import { installCommand, installWarning, publicOrigin } from '../downloads/install-command.ts';
import { provisioningKeyNotFound, ProvisioningKeySchema } from '../enrollment/provisioning-keys.ts';

const TAG = 'enrollment';
const CreateKeyBody = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    labels: LabelsSchema.optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional().openapi({ description: 'When it stops working (ISO 8601); left out or null: never' }),
    max_boards: z.number().int().min(1).max(1_000_000).nullable().optional(),
    approval: z.enum(['auto', 'manual']).default('auto'),
  })
  .strict()
  .openapi('CreateProvisioningKey', { example: { name: 'lab-2 boards', labels: { site: 'lab-2' }, max_boards: 20, approval: 'auto' } });

const NewKey = ProvisioningKeySchema.extend({
  key: z.string().openapi({ description: 'The key (`MM_PROVISIONING_KEY` of the agent). Shown this once; only its hash is stored.' }),
  install_command: z.string().openapi({ description: 'The one line that installs the agent on a board and enrolls it with this key (docs/packages.md); it names MM_PUBLIC_URL, else the address the request came to' }),
  install_warning: z.string().nullable().openapi({ description: 'Set when MM_PUBLIC_URL is not: the command names the address the request came to, which a board may not reach' }),
}).openapi('NewProvisioningKey');

const KeyList = z.object({ provisioning_keys: z.array(ProvisioningKeySchema), total: z.number().int() }).openapi('ProvisioningKeyList');

const listRoute = createRoute({
  method: 'get',
  path: '/api/provisioning-keys/',
  tags: [TAG],
  summary: 'Provisioning keys (never the keys themselves)',
  request: { query: PageQuery },
  responses: { 200: { description: 'A page of keys, newest first', content: { 'application/json': { schema: KeyList } } }, 400: problem('Bad input') },
});

const createKeyRoute = createRoute({
  method: 'post',
  path: '/api/provisioning-keys/',
  tags: [TAG],
  summary: 'Make a provisioning key boards enroll with; answers it once',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateKeyBody } } } },
  responses: {
    201: { description: 'The key', content: { 'application/json': { schema: NewKey } } },
    400: problem('Bad input (`validation_failed`; an `expires_at` in the past)'),
    415: problem('Not application/json'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/provisioning-keys/{id}/',
  tags: [TAG],
  summary: 'Delete a provisioning key: no board can enroll with it any more (enrolled boards stay)',
  request: { params: IdParams },
  responses: { 204: { description: 'Deleted' }, 404: problem('`provisioning_key_not_found`') },
});

/** `GET`/`POST /api/provisioning-keys/`, `DELETE /api/provisioning-keys/<id>/` (admin; docs/enrollment.md). */
export function provisioningKeyRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(provisioningKeyNotFound) });

  app.openapi(listRoute, async (c) => {
    const { keys, total } = await ctx.provisioningKeys.list(c.req.valid('query'));
    return c.json({ provisioning_keys: keys, total }, 200);
  });

  app.openapi(createKeyRoute, async (c) => {
    const body = c.req.valid('json');
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= ctx.clock.now()) throw new ValidationError([{ field: 'expires_at', message: 'must be in the future' }]);
    const { key, secret } = await ctx.provisioningKeys.create({
      name: body.name,
      labels: body.labels ?? {},
      expiresAt,
      maxBoards: body.max_boards ?? null,
      approval: body.approval,
      createdBy: currentActor(),
    });
    setAuditTarget(`provisioning_key ${key.id}`, { name: key.name, approval: key.approval });
    const origin = publicOrigin(c, ctx.config);
    return c.json({ ...key, key: secret, install_command: installCommand(origin, { provisioningKey: secret }), install_warning: installWarning(origin, ctx.config) }, 201);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    const key = await ctx.provisioningKeys.delete(id);
    setAuditTarget(`provisioning_key ${id}`, { name: key.name });
    return c.body(null, 204);
  });

  return app;
}
