import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { archiveInstallBody, boardIdField, startArchiveInstall } from './archive-install.ts';
import { ApiError, NotFoundError } from '../errors.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { validationHook } from '../http/validation.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { PacInstallAnswerSchema, PacName, PacQueryAnswerSchema, PacRecordSchema } from '../pacs/pac-schemas.ts';
import { PAC_LIST_MAX_AGE_S } from '../pacs/pac-lists.ts';
import { IdParams } from '../http/params.ts';
import { requireJson, fileUploadResponses } from '../http/openapi.ts';

/** The pre-check of an activation: the agent's `xlnx-config -q` takes up to 30 s. */
const PRECHECK_TIMEOUT_MS = 60_000;

const QueryBody = z.object({ board_id: boardIdField.optional() }).openapi('PacQueryRequest');
const ActivateBody = z.object({ board_id: boardIdField.optional(), pac: PacName }).openapi('PacActivateRequest');

const preferHeader = z.object({
  prefer: safeString().optional().openapi({ description: '`respond-async` answers 202 at once; `wait=<s>` caps the wait', example: 'respond-async' }),
});

const OperationProblem = { description: 'Problem details; `operation` holds the operation' };
const common = {
  202: {
    description: 'Accepted (`Prefer: respond-async`, or still running after MM_SYNC_WAIT_S): the operation; `Location` names it',
    content: { 'application/json': { schema: OperationSchema } },
  },
  404: { description: '`board_not_found`' },
  409: { description: '`operation_cancelled` (the problem carries `operation`)' },
  502: { description: '`operation_failed`: the board ran it and it failed (the problem carries `operation`, whose `error.code` says why)' },
  503: { description: '`no_board` (none registered) or `board_offline` (not connected; nothing was started)' },
} as const;

const queryRoute = createRoute({
  method: 'post',
  path: '/api/pacs/query/',
  tags: ['pacs'],
  summary: "List the board's PACs (xlnx-config -q)",
  description:
    'Runs as an operation of kind `pac_query`, so it waits for the board\'s earlier work (a reboot above all). ' +
    'Waits for the end and answers the query itself; with `Prefer: respond-async` answers 202 with the operation, ' +
    'whose `result` is the same `{ board_id, pacs, active }`. The answer\'s `active` is stored as the board\'s `active_pac`. ' +
    'A query asked while another of the same board still waits last in its queue joins it: the same operation answers both.',
  middleware: [emptyBodyIsNoBody] as const,
  request: { headers: preferHeader, body: { required: false, content: { 'application/json': { schema: QueryBody } } } },
  responses: {
    200: { description: "The board's PACs and the active one's name", content: { 'application/json': { schema: PacQueryAnswerSchema } } },
    ...common,
    400: { description: '`validation_failed`, or `board_required` (several boards, none named)' },
  },
});

const activateRoute = createRoute({
  method: 'post',
  path: '/api/pacs/activate/',
  tags: ['pacs'],
  summary: 'Activate a PAC and reboot the board into it (verified)',
  description:
    'The PAC must be one the board lists (checked against a fresh `xlnx-config -q` before anything runs): otherwise 400 ' +
    '`pac_not_found` and the board is left untouched. Then an operation of kind `pac_activate`: `xlnx-config -a <pac>`, ' +
    'the board goes `rebooting` (its other operations wait) and reboots; the operation succeeds once the board has ' +
    'reconnected with a new boot id and reports the PAC active. It fails with `error.code` `xlnx_config_failed` (the ' +
    'output is in its log and message), `reboot_failed`, `reboot_timeout` (not back within MM_REBOOT_TIMEOUT_S), ' +
    '`reboot_not_observed` (back with the same boot id) or `pac_not_active` (back with another PAC active).',
  middleware: [requireJson] as const,
  request: { headers: preferHeader, body: { required: true, content: { 'application/json': { schema: ActivateBody } } } },
  responses: {
    200: { description: 'The succeeded operation (`result`: `{ board_id, pac, active, pacs, boot_id, previous_boot_id }`)', content: { 'application/json': { schema: OperationSchema } } },
    ...common,
    400: { description: '`validation_failed`, `board_required`, or `pac_not_found` (the board does not list it; `pacs` names those it does)' },
    415: { description: 'The body is not application/json' },
  },
});

const installRoute = createRoute({
  method: 'post',
  path: '/api/pacs/install/',
  tags: ['pacs'],
  summary: 'Install a PAC from a .tar or .tar.gz archive of one PAC folder',
  description:
    'The upload is streamed to disk (never held in memory; at most MM_MAX_UPLOAD_BYTES), then an operation of kind ' +
    '`pac_install` lets the board pull it and extract it into `MM_PAC_DIR/<folder>` (refusing absolute paths, `..`, links, ' +
    'devices and fifos, several top-level folders, a missing manifest.yaml, and anything not tar/gzip, with nothing ' +
    'written) and list its PACs again. The server removes its copy of the archive once the operation ends.',
  request: {
    headers: preferHeader,
    body: archiveInstallBody('.tar or .tar.gz of one PAC folder'),
  },
  responses: {
    201: { description: 'Installed: the PAC folder and the board\'s PACs now', content: { 'application/json': { schema: PacInstallAnswerSchema } } },
    ...common,
    400: { description: '`validation_failed` (no `file` part, bad `board_id`), `malformed_multipart`, `board_required`, or `invalid_pac_archive` (the board refused the archive; the problem carries `operation`)' },
    ...fileUploadResponses,
  },
});

const StoredPacsSchema = z
  .object({
    board_id: z.string().uuid(),
    pacs: z.array(PacRecordSchema).nullable().openapi({ description: 'As the last query listed them; null: never listed' }),
    active: z.string().nullable().openapi({ description: "The board's `active_pac`" }),
    listed_at: z.string().nullable().openapi({ format: 'date-time', description: 'When that query ran' }),
    age_s: z.number().int().nullable().openapi({ description: 'Seconds since `listed_at`' }),
    stale: z.boolean().openapi({ description: `Ask the board again: never listed, listed before its current connection, or more than ${PAC_LIST_MAX_AGE_S / 3600} h ago` }),
    stale_reason: z.string().nullable(),
    query_operation_id: z.number().int().nullable().openapi({ description: 'A `pac_query` of this board queued or running: follow it rather than queue another' }),
  })
  .openapi('StoredPacs');

const storedRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/pacs/',
  tags: ['pacs'],
  summary: "The board's last known PACs, without asking the board",
  description:
    'Every `pac_query` (and `pac_install`, and the check after `pac_activate`) stores the list it got; this answers it with ' +
    'its age, whether it is `stale` (and why), and a `pac_query` already under way. Nothing is queued: refresh with ' +
    '`POST /api/pacs/query/` when it is stale or on request.',
  request: { params: IdParams },
  responses: {
    200: { description: 'The stored list', content: { 'application/json': { schema: StoredPacsSchema } } },
    404: { description: '`board_not_found`' },
  },
});

/**
 * Row 11's "else 400, the board untouched": the name must be one the board lists right
 * now. Checked outside the queue, so the answer comes at once even while the board is
 * busy (a query changes nothing). A board that is rebooting cannot be asked: the
 * operation's own check (the agent refuses an unlisted name before running anything)
 * then fails it with the same code at its turn.
 */
async function refuseUnlistedPac(ctx: Services, boardId: string, pac: string): Promise<void> {
  if (!ctx.agents.connection(boardId)) return;
  const { pacs } = await ctx.agents.call(boardId, 'pac.query', {}, { timeoutMs: PRECHECK_TIMEOUT_MS });
  if (pacs.some((p) => p.name === pac)) return;
  const names = pacs.map((p) => p.name);
  throw new ApiError(
    400,
    'pac_not_found',
    'Bad Request',
    `The board has no PAC configuration named ${JSON.stringify(pac)} (it has ${names.length > 0 ? names.join(', ') : 'none'}).`,
    [{ field: 'pac', message: 'not a PAC the board lists' }],
    { board_id: boardId, pacs: names },
  );
}

/** PAC query, activate, install (docs/api.md, "PACs"). */
export function pacRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook((raw) => new NotFoundError('not_found', `No resource ${raw}.`)) });

  app.openapi(storedRoute, async (c) => c.json(await ctx.pacLists.of(c.req.valid('param').id), 200));

  app.openapi(queryRoute, async (c) => {
    const boardId = await boardForOperation(ctx, c.req.valid('json').board_id);
    // A query still waiting for its board is answered to whoever asks meanwhile.
    const op = await ctx.operations.createOrJoin({ kind: 'pac_query', boardId });
    return respondWithOperation(c, ctx, op, { successStatus: 200, body: (ended) => ended.result });
  });

  app.openapi(activateRoute, async (c) => {
    const body = c.req.valid('json');
    const boardId = await boardForOperation(ctx, body.board_id);
    await refuseUnlistedPac(ctx, boardId, body.pac);
    const op = await ctx.operations.create({ kind: 'pac_activate', boardId, params: { pac: body.pac } });
    return respondWithOperation(c, ctx, op, { successStatus: 200, badRequestCodes: ['pac_not_found', 'invalid_pac_name'] });
  });

  app.openapi(installRoute, async (c) => {
    const op = await startArchiveInstall(ctx, c.env.incoming, 'pac_install', 'a .tar or .tar.gz of one PAC folder');
    return respondWithOperation(c, ctx, op, { successStatus: 201, body: (ended) => ended.result, badRequestCodes: ['invalid_pac_archive'] });
  });

  return app;
}
