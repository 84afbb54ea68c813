import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { BadRequestError, NotFoundError, UnsupportedMediaTypeError, ValidationError, notFound } from '../errors.ts';
import { emptyBodyIsNoBody } from '../http/empty-body.ts';
import { serveFile } from '../http/file-response.ts';
import { fileUploadResponses } from '../http/openapi.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams } from '../http/params.ts';
import { safeString } from '../http/safe-string.ts';
import { SCRIPT_CONTROL_KINDS, type ScriptAction } from '../device-scripts/script-operations.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { boardForOperation } from '../operations/board-selection.ts';
import { respondWithOperation } from '../operations/respond.ts';
import { DEVICE_SCRIPT_ID_PATTERN } from '../device-scripts/device-scripts-schema.ts';
import { programNotFound } from '../device-scripts/device-script-programs.ts';
import { contentSource } from '../invocations/invocation-files.ts';
import { receiveFileUpload } from '../services/file-upload.ts';

const TAG = 'device scripts';
const SHA256_HEX = /^[0-9a-f]{64}$/;

const ProgramSchema = z
  .object({
    script_id: z.string(),
    version: z.string(),
    filename: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    uploaded_at: z.string(),
  })
  .openapi('DeviceScriptProgram');

const BoardScriptSchema = z
  .object({
    script_id: z.string(),
    name: z.string(),
    version: z.string(),
    port: z.number().int(),
    state: z.enum(['running', 'stopped', 'failed']),
    since: z.string(),
    restarts: z.number().int(),
    board_id: z.string(),
    board_name: z.string(),
    reported_at: z.string(),
  })
  .openapi('BoardScript');

const BoardBody = z
  .object({ board_id: z.string().uuid().optional().openapi({ description: 'The board; may be left out when exactly one is registered' }) })
  .strict()
  .openapi('ScriptBoardChoice', { example: { board_id: '5f0c6a1e-8d2b-4a7e-9d51-2b3c4d5e6f70' } });

const problems = {
  400: { description: '`validation_failed`, `board_required`, `script_dir_refused` (remote_dir with `.`/`..` segments)' },
  404: { description: '`device_script_not_found`, `board_not_found`, `script_program_not_found`' },
};

const putFileRoute = createRoute({
  method: 'put',
  path: '/api/device-scripts/{id}/file/',
  tags: [TAG],
  summary: "Set the program of the entry's current version: a multipart `file`, or `{ sha256 }` of content the server holds",
  request: {
    params: IdParams,
    body: {
      required: true,
      // Described only: the route streams the multipart body itself, or reads the small JSON.
      content: {
        'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } },
        'application/json': {
          schema: {
            type: 'object',
            required: ['sha256'],
            properties: { sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' }, filename: { type: 'string' } },
          },
        },
      },
    },
  },
  responses: {
    200: { description: 'The program of that version (it replaces what the version had; other versions keep theirs)', content: { 'application/json': { schema: ProgramSchema } } },
    ...problems,
    ...fileUploadResponses,
  },
});

const getFileRoute = createRoute({
  method: 'get',
  path: '/api/device-scripts/{id}/file/',
  tags: [TAG],
  summary: "The program of the entry's current version (or `?version=`)",
  request: { params: IdParams, query: z.object({ version: safeString().optional() }) },
  responses: {
    200: { description: 'The program (attachment)', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    400: { description: '`validation_failed` (a `version` holding a NUL)' },
    404: problems[404],
  },
});

const programsRoute = createRoute({
  method: 'get',
  path: '/api/device-scripts/{id}/programs/',
  tags: [TAG],
  summary: 'Every version that has a program, and the boards the script is deployed on (version and state each)',
  request: { params: IdParams },
  responses: {
    200: {
      description: 'Programs and deployments',
      content: { 'application/json': { schema: z.object({ programs: z.array(ProgramSchema), deployments: z.array(BoardScriptSchema), total: z.number().int() }) } },
    },
    404: problems[404],
  },
});

const operationResponses = {
  200: { description: 'The operation, succeeded', content: { 'application/json': { schema: OperationSchema } } },
  202: { description: 'The operation (Prefer: respond-async, or still running after MM_SYNC_WAIT_S)', content: { 'application/json': { schema: OperationSchema } } },
  ...problems,
  409: { description: 'The operation was cancelled' },
  502: { description: 'It failed on the board (`script_unhealthy` or `script_unstable`: the previous version is back; `script_dir_refused`, `checksum_mismatch`, `script_not_deployed`, ...); the problem carries the operation' },
  503: { description: '`board_offline`, `no_board`' },
};

const deployRoute = createRoute({
  method: 'post',
  path: '/api/device-scripts/{id}/deploy/',
  tags: [TAG],
  summary: "Deploy the entry's current program to a board: written under its MM_SCRIPTS_ROOT, run supervised, health-checked on its port",
  middleware: [emptyBodyIsNoBody] as const,
  request: { params: IdParams, body: { required: false, content: { 'application/json': { schema: BoardBody } } } },
  responses: operationResponses,
});

const controlRoute = (action: ScriptAction) =>
  createRoute({
    method: 'post',
    path: `/api/device-scripts/{id}/${action}/`,
    tags: [TAG],
    summary: `${action[0]!.toUpperCase()}${action.slice(1)} the script deployed on a board (operation \`${SCRIPT_CONTROL_KINDS[action]}\`)`,
    middleware: [emptyBodyIsNoBody] as const,
    request: { params: IdParams, body: { required: false, content: { 'application/json': { schema: BoardBody } } } },
    responses: operationResponses,
  });

const logsRoute = createRoute({
  method: 'get',
  path: '/api/device-scripts/{id}/logs/',
  tags: [TAG],
  summary: "The script's recent output on a board (a bounded buffer the agent keeps)",
  request: { params: IdParams, query: z.object({ board_id: z.string().optional().openapi({ format: 'uuid' }) }) },
  responses: {
    200: { description: 'Its output, oldest first', content: { 'text/plain': { schema: { type: 'string' } } } },
    ...problems,
    502: { description: '`script_not_deployed` on that board, or the board failed to answer' },
    503: { description: '`board_offline`' },
    504: { description: '`board_timeout`' },
  },
});

const boardScriptsRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/scripts/',
  tags: ['boards'],
  summary: 'The device scripts deployed on the board and their states, as its agent last reported them',
  request: { params: IdParams },
  responses: {
    200: { description: 'Its scripts', content: { 'application/json': { schema: z.object({ scripts: z.array(BoardScriptSchema), total: z.number().int() }) } } },
    404: { description: '`board_not_found`' },
  },
});

/** `{ sha256, filename? }`: content the server holds already, attached by digest. */
const AttachBody = z.object({ sha256: z.string().regex(SHA256_HEX, 'must be 64 lowercase hex digits'), filename: z.string().min(1).max(255).optional() }).strict();

/**
 * Device scripts on the board (docs/device-scripts.md): the program of each version, deploy
 * and start/stop/restart as operations, the board's scripts and their logs.
 */
export function deviceScriptProgramRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook((id) => new NotFoundError('device_script_not_found', `No device script with id ${String(id)}.`)) });
  const scripts = ctx.deviceScripts;

  app.openapi(putFileRoute, async (c) => {
    const { id } = c.req.valid('param');
    const script = await scripts.get(id);
    setAuditTarget(`device_script ${id}`, { version: script.version });
    const type = c.req.header('content-type') ?? '';
    if (/^application\/json\b/i.test(type)) {
      let raw: unknown;
      try {
        raw = await c.req.json();
      } catch {
        throw new BadRequestError('malformed_json', 'The body is not valid JSON.');
      }
      const parsed = AttachBody.safeParse(raw);
      if (!parsed.success) throw new ValidationError(parsed.error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message })));
      const { sha256 } = parsed.data;
      if (!(await ctx.files.pin(sha256))) throw new NotFoundError('content_not_found', `The server does not hold content with sha256 ${sha256}; upload the file instead.`);
      const stored = await ctx.files.stat(sha256);
      if (!stored) {
        ctx.files.release(sha256);
        throw new NotFoundError('content_not_found', `The server does not hold content with sha256 ${sha256}; upload the file instead.`);
      }
      return c.json(await scripts.attachProgram(id, { filename: parsed.data.filename ?? script.script_filename, sha256, size: stored.size }), 200);
    }
    if (!/^multipart\/form-data\b/i.test(type)) throw new UnsupportedMediaTypeError('Send the program as multipart/form-data (a part named "file") or { "sha256" } as application/json.');
    const file = await receiveFileUpload(ctx, c.env.incoming, {
      accept: (_fields, file) => {
        if (!file) throw new ValidationError([{ field: 'file', message: 'required: a file part named "file"' }]);
        return file;
      },
    });
    return c.json(await scripts.attachProgram(id, { filename: file.filename || script.script_filename, sha256: file.sha256, size: file.size }), 200);
  });

  app.openapi(getFileRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { version } = c.req.valid('query');
    const script = await scripts.get(id);
    const program = await scripts.program(id, version ?? script.version);
    if (!program) throw programNotFound(id, version ?? script.version);
    return serveFile(c, {
      size: program.size,
      etag: `"${program.sha256}"`,
      lastModified: new Date(program.uploaded_at),
      contentType: 'application/octet-stream',
      disposition: { type: 'attachment', filename: script.script_filename },
      ...contentSource(ctx, program.sha256),
    });
  });

  app.openapi(programsRoute, async (c) => {
    const { id } = c.req.valid('param');
    await scripts.get(id);
    const [programs, deployments] = await Promise.all([scripts.programs(id), scripts.deployments(id)]);
    return c.json({ programs, deployments, total: programs.length }, 200);
  });

  app.openapi(deployRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json') ?? {};
    const script = await scripts.requireDeployable(id);
    const boardId = await boardForOperation(ctx, body.board_id);
    setAuditTarget(`device_script ${id}`, { board_id: boardId, version: script.version });
    const op = await ctx.operations.create({ kind: 'script_deploy', boardId, params: { script_id: id } });
    return respondWithOperation(c, ctx, op, { badRequestCodes: ['script_dir_refused'] });
  });

  for (const action of Object.keys(SCRIPT_CONTROL_KINDS) as ScriptAction[]) {
    app.openapi(controlRoute(action), async (c) => {
      const { id } = c.req.valid('param');
      const body = c.req.valid('json') ?? {};
      await scripts.get(id);
      const boardId = await boardForOperation(ctx, body.board_id);
      setAuditTarget(`device_script ${id}`, { board_id: boardId });
      const op = await ctx.operations.create({ kind: SCRIPT_CONTROL_KINDS[action], boardId, params: { script_id: id } });
      return respondWithOperation(c, ctx, op);
    });
  }

  app.openapi(logsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { board_id } = c.req.valid('query');
    if (board_id !== undefined && !DEVICE_SCRIPT_ID_PATTERN.test(board_id)) throw notFound.board(board_id);
    await scripts.get(id);
    const boardId = await boardForOperation(ctx, board_id);
    const { text } = await ctx.agents.call(boardId, 'script.logs', { script_id: id }, { timeoutMs: 10_000 });
    return c.body(text, 200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  });

  app.openapi(boardScriptsRoute, async (c) => {
    const { id } = c.req.valid('param');
    await ctx.boards.require(id);
    const onBoard = await scripts.onBoard(id);
    return c.json({ scripts: onBoard, total: onBoard.length }, 200);
  });

  return app;
}
