import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { archiveInstallBody, boardIdField, startArchiveInstall } from './archive-install.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { fileUploadResponses, requireJson } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { AppName, BoardAppsSchema } from '../accelerators/accelerator-schemas.ts';

const BoardIdParams = z.object({
  id: z.string().uuid().openapi({ param: { name: 'id', in: 'path' }, example: '0b6f3c1e-8d4a-4f51-9a43-2f0f2b1f7c11' }),
});
const AppsQuery = z.object({
  refresh: z.enum(['0', '1', 'true', 'false']).optional().openapi({ description: '`1` asks the board now (an `app_query` operation) instead of answering what it last reported' }),
});
const LoadBody = z.object({ board_id: boardIdField.optional(), app: AppName }).openapi('AppLoadRequest');
const UnloadBody = z.object({ board_id: boardIdField.optional() }).openapi('AppUnloadRequest');

const preferHeader = z.object({
  prefer: safeString().optional().openapi({ description: '`respond-async` answers 202 at once; `wait=<s>` caps the wait', example: 'respond-async' }),
});

const common = {
  202: {
    description: 'Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it',
    content: { 'application/json': { schema: OperationSchema } },
  },
  404: { description: '`board_not_found`' },
  409: { description: '`operation_cancelled` (the problem carries `operation`)' },
  502: { description: '`operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why: `no_empty_slot`, `app_load_failed`, `app_load_timeout`, ...)' },
  503: { description: '`no_board` (none registered) or `board_offline` (not connected; nothing was started)' },
} as const;

const appsRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/apps/',
  tags: ['boards', 'apps'],
  summary: "A board's accelerated applications, the active one and its DPU",
  description:
    'As the board last reported them (at its hello and after every app or PAC change). With `?refresh=1` the board is ' +
    'asked now: an operation of kind `app_query` (it waits for the board\'s earlier work), answered like the PAC routes ' +
    '(the result itself when it ends in time, else 202 with the operation).',
  request: { params: BoardIdParams, query: AppsQuery, headers: preferHeader },
  responses: {
    200: { description: 'The apps', content: { 'application/json': { schema: BoardAppsSchema } } },
    ...common,
    400: { description: '`validation_failed`' },
  },
});

const loadRoute = createRoute({
  method: 'post',
  path: '/api/apps/load/',
  tags: ['apps'],
  summary: 'Load an accelerated application (no reboot), verified',
  description:
    'The app must be one the board lists (checked before anything runs): otherwise 400 `app_not_found`. Then an operation of ' +
    'kind `app_load`: the board unloads what holds the slot, loads the app (`dfx-mgr-client -load`, or `xmutil loadapp`) and ' +
    'verifies it by the listing (the app in an active slot), by `xdputil query` (the DPU answers, where xdputil exists) and ' +
    'by /etc/vart.conf, never by exit statuses. It fails with `error.code` `no_empty_slot`, `app_load_failed` or ' +
    '`app_load_timeout` (a load still running after the agent\'s MM_APP_LOAD_TIMEOUT_S is killed), the tools\' output in its log and message.',
  middleware: [requireJson] as const,
  request: { headers: preferHeader, body: { required: true, content: { 'application/json': { schema: LoadBody } } } },
  responses: {
    200: { description: 'The succeeded operation (`result`: the board\'s apps and `app`, `loaded`, `slot`, `unloaded`)', content: { 'application/json': { schema: OperationSchema } } },
    ...common,
    400: { description: '`validation_failed`, `board_required`, or `app_not_found` (the board does not list it; `apps` names those it does)' },
    415: { description: 'The body is not application/json' },
  },
});

const unloadRoute = createRoute({
  method: 'post',
  path: '/api/apps/unload/',
  tags: ['apps'],
  summary: 'Unload the active accelerated application',
  description: 'An operation of kind `app_unload`, verified by the listing afterwards (`app_unload_failed` when the app still holds its slot).',
  middleware: [emptyBodyIsNoBody] as const,
  request: { headers: preferHeader, body: { required: false, content: { 'application/json': { schema: UnloadBody } } } },
  responses: {
    200: { description: 'The succeeded operation (`result`: the board\'s apps and `unloaded`)', content: { 'application/json': { schema: OperationSchema } } },
    ...common,
    400: { description: '`validation_failed` or `board_required`' },
  },
});

const installRoute = createRoute({
  method: 'post',
  path: '/api/apps/install/',
  tags: ['apps'],
  summary: 'Install an accelerated application from a .tar, .tar.gz or .zip of one app folder',
  description:
    'The upload is streamed to disk (at most MM_MAX_UPLOAD_BYTES), then an operation of kind `app_install` lets the board pull it, ' +
    'check it as strictly as a PAC archive (no absolute paths, `..`, links, devices or fifos, one top-level folder holding ' +
    'shell.json with a `shell_type` dfx-mgrd knows, a `*.bit.bin`/`*.bin` bitstream and a `*.dtbo` overlay, optionally ' +
    'accel.json; size limits) and install it atomically under MM_APPS_DIR/<folder>. A refused archive: 400 ' +
    '`invalid_app_archive` with the reason, nothing written. The server removes its copy once the operation ends.',
  request: {
    headers: preferHeader,
    body: archiveInstallBody('.tar, .tar.gz or .zip of one app folder'),
  },
  responses: {
    200: { description: 'The succeeded operation (`result`: the board\'s apps and `app`, `listed`, `shell_type`)', content: { 'application/json': { schema: OperationSchema } } },
    ...common,
    400: { description: '`validation_failed` (no `file` part, bad `board_id`), `malformed_multipart`, `board_required`, or `invalid_app_archive` (the problem carries `operation`)' },
    ...fileUploadResponses,
  },
});

/** Accelerated applications (docs/accelerators.md): list, load, unload, install. */
export function appRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook((raw) => new NotFoundError('board_not_found', `No board ${raw}.`)) });

  app.openapi(appsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { refresh } = c.req.valid('query');
    if (refresh !== '1' && refresh !== 'true') return c.json(await ctx.accelerators.boardApps(id), 200);
    const boardId = await boardForOperation(ctx, id);
    const op = await ctx.operations.create({ kind: 'app_query', boardId });
    return respondWithOperation(c, ctx, op, { successStatus: 200, body: (ended) => ended.result });
  });

  app.openapi(loadRoute, async (c) => {
    const body = c.req.valid('json');
    const boardId = await boardForOperation(ctx, body.board_id);
    await ctx.accelerators.refuseUnlistedApp(boardId, body.app);
    const op = await ctx.operations.create({ kind: 'app_load', boardId, params: { app: body.app } });
    return respondWithOperation(c, ctx, op, { successStatus: 200, badRequestCodes: ['app_not_found', 'invalid_app_name'] });
  });

  app.openapi(unloadRoute, async (c) => {
    const boardId = await boardForOperation(ctx, c.req.valid('json').board_id);
    const op = await ctx.operations.create({ kind: 'app_unload', boardId });
    return respondWithOperation(c, ctx, op, { successStatus: 200 });
  });

  app.openapi(installRoute, async (c) => {
    const op = await startArchiveInstall(ctx, c.env.incoming, 'app_install', 'a .tar, .tar.gz or .zip of one app folder');
    return respondWithOperation(c, ctx, op, { successStatus: 200, badRequestCodes: ['invalid_app_archive'] });
  });

  return app;
}
