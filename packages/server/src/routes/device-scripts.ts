import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams, PageQuery } from '../http/params.ts';
import { deviceScriptNotFound } from '../device-scripts/script-catalogue.ts';
import {
  DeviceScript,
  DeviceScriptCreate,
  DeviceScriptPatch,
  DeviceScriptReplace,
  deviceTypeField,
} from '../device-scripts/device-scripts-schema.ts';
import { setAuditTarget } from '../auth/request-auth.ts';

const TAG = 'device scripts';

const ListQuery = z.object({
  device_type: deviceTypeField.optional().openapi({ description: 'Only scripts of this device type.' }),
  ...PageQuery.shape,
});

const ScriptList = z.object({ scripts: z.array(DeviceScript), total: z.number().int() }).openapi('DeviceScriptList');

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: z.looseObject({ status: z.number().int(), code: z.string() }) } },
});
const jsonBody = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } }, required: true });
const scriptAnswer = (description: string) => ({ description, content: { 'application/json': { schema: DeviceScript } } });

const listRoute = createRoute({
  method: 'get',
  path: '/api/device-scripts/',
  tags: [TAG],
  summary: 'List the device-script catalogue',
  description: 'Ordered by name. `total` counts every match of the filter.',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of the catalogue', content: { 'application/json': { schema: ScriptList } } },
    400: problem('A bad filter or page'),
  },
});

const createScriptRoute = createRoute({
  method: 'post',
  path: '/api/device-scripts/',
  tags: [TAG],
  summary: 'Add a device script to the catalogue',
  description: 'The server sets `id` and `updated_at`; `description` may be left out (""). Unknown fields are refused.',
  request: { body: jsonBody(DeviceScriptCreate) },
  responses: {
    201: scriptAnswer('The new entry'),
    400: problem('Malformed JSON or a field that breaks its rule'),
    415: problem('The body is not JSON'),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/device-scripts/{id}/',
  tags: [TAG],
  summary: 'One device script',
  request: { params: IdParams },
  responses: { 200: scriptAnswer('The entry'), 404: problem('No such entry (or a malformed id)') },
});

const replaceRoute = createRoute({
  method: 'put',
  path: '/api/device-scripts/{id}/',
  tags: [TAG],
  summary: 'Replace a device script',
  description: 'Every field is required; `updated_at` moves forward.',
  request: { params: IdParams, body: jsonBody(DeviceScriptReplace) },
  responses: {
    200: scriptAnswer('The entry as replaced'),
    400: problem('Malformed JSON, a missing field or one that breaks its rule'),
    404: problem('No such entry (or a malformed id)'),
    415: problem('The body is not JSON'),
  },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/device-scripts/{id}/',
  tags: [TAG],
  summary: 'Change some fields of a device script',
  description: 'Sets the fields given; `updated_at` moves forward. An empty object changes nothing (and leaves `updated_at`).',
  request: { params: IdParams, body: jsonBody(DeviceScriptPatch) },
  responses: {
    200: scriptAnswer('The entry as changed'),
    400: problem('Malformed JSON or a field that breaks its rule'),
    404: problem('No such entry (or a malformed id)'),
    415: problem('The body is not JSON'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/device-scripts/{id}/',
  tags: [TAG],
  summary: 'Remove a device script from the catalogue',
  request: { params: IdParams },
  responses: { 204: { description: 'Removed' }, 404: problem('No such entry (or a malformed id)') },
});

export function deviceScriptsRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(deviceScriptNotFound) });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    return c.json(await ctx.deviceScripts.list({ deviceType: q.device_type, limit: q.limit, offset: q.offset }), 200);
  });

  app.openapi(createScriptRoute, async (c) => {
    const created = await ctx.deviceScripts.create(c.req.valid('json'));
    setAuditTarget(`device_script ${created.id}`);
    return c.json(created, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.deviceScripts.get(c.req.valid('param').id), 200));

  app.openapi(replaceRoute, async (c) =>
    c.json(await ctx.deviceScripts.update(c.req.valid('param').id, c.req.valid('json')), 200),
  );

  app.openapi(patchRoute, async (c) =>
    c.json(await ctx.deviceScripts.update(c.req.valid('param').id, c.req.valid('json')), 200),
  );

  app.openapi(deleteRoute, async (c) => {
    await ctx.deviceScripts.delete(c.req.valid('param').id);
    return c.body(null, 204);
  });

  return app;
}
