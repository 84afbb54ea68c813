import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { BoardPowerSchema, BoardSchema } from '../boards/board-store.ts';
import { LabelsSchema } from '../boards/label-schema.ts';
import { selectorFromPairs } from '../boards/board-selector.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { validationHook } from '../http/validation.ts';
import { IdParams, PageQuery } from '../http/params.ts';
import { ConflictError, notFound } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { installCommand, installWarning, publicOrigin } from '../downloads/install-command.ts';

const ListQuery = PageQuery.extend({
  label: z
    .union([safeString(), z.array(safeString())])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const parsed = selectorFromPairs(Array.isArray(v) ? v : [v]);
      if ('problem' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      return parsed.selector;
    })
    .openapi({ param: { style: 'form', explode: true }, description: '`key=value`; repeat it: boards holding every pair', example: 'camera=yes' }),
  status: z.enum(['online', 'offline', 'rebooting', 'pending', 'unresponsive']).optional(),
  health: z.enum(['unknown', 'good', 'bad']).optional(),
});

const PatchBoardBody = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
    labels: LabelsSchema.optional().openapi({ description: "Replaces the people's labels; the agent's `mm/` ones stay (an `mm/` key here is 400)" }),
    maintenance: z.boolean().optional().openapi({ description: 'Under repair: no selector work goes to it (work naming it still runs)' }),
    power: z
      .union([BoardPowerSchema, z.null()])
      .optional()
      .openapi({ description: 'Its power controller (docs/power.md): the lab host (another board) relaying to pdudaemon, and the PDU name and port there; null removes it' }),
  })
  .strict()
  .openapi('PatchBoard', { example: { labels: { camera: 'yes', site: 'lab-2' }, maintenance: false } });

const CreateBoardBody = z
  .object({ name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters') })
  .openapi('CreateBoard', { example: { name: 'zcu104-lab-1' } });

const NewBoard = BoardSchema.extend({
  token: z.string().openapi({ description: 'The board token for the agent (MM_BOARD_TOKEN). Shown this once; only its hash is stored.' }),
  install_command: z.string().openapi({ description: 'The one line that installs the agent on the board with this token (docs/packages.md); it names MM_PUBLIC_URL, else the address the request came to' }),
  install_warning: z.string().nullable().openapi({ description: 'Set when MM_PUBLIC_URL is not: the command names the address the request came to, which a board may not reach' }),
}).openapi('NewBoard');

const BoardList = z.object({ boards: z.array(BoardSchema), total: z.number().int() }).openapi('BoardList');

const problems = {
  400: { description: 'Bad input (problem+json, `validation_failed`, `malformed_json`)' },
  404: { description: 'No such board (problem+json, `board_not_found`)' },
} as const;

const listRoute = createRoute({
  method: 'get',
  path: '/api/boards/',
  tags: ['boards'],
  summary: 'List boards with their presence',
  request: { query: ListQuery },
  responses: {
    200: { description: 'A page of boards (oldest first) and how many there are', content: { 'application/json': { schema: BoardList } } },
    400: problems[400],
  },
});

const createBoardRoute = createRoute({
  method: 'post',
  path: '/api/boards/',
  tags: ['boards'],
  summary: 'Register a board; answers its agent token once',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateBoardBody } } } },
  responses: {
    201: { description: 'The board and its token', content: { 'application/json': { schema: NewBoard } } },
    400: problems[400],
    409: { description: '`board_name_taken`: another board has that name (names are unique)' },
    415: { description: 'The body is not application/json' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/',
  tags: ['boards'],
  summary: 'A board',
  request: { params: IdParams },
  responses: {
    200: { description: 'The board', content: { 'application/json': { schema: BoardSchema } } },
    404: problems[404],
  },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/boards/{id}/',
  tags: ['boards'],
  summary: "Rename a board, set its labels (the agent's mm/ labels stay), put it in or out of maintenance, set its power controller",
  middleware: [requireJson] as const,
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: PatchBoardBody } } } },
  responses: {
    200: { description: 'The board', content: { 'application/json': { schema: BoardSchema } } },
    400: problems[400],
    404: problems[404],
    409: { description: '`board_name_taken`: another board has that name (names are unique)' },
    415: { description: 'The body is not application/json' },
  },
});

const healthCheckRoute = createRoute({
  method: 'post',
  path: '/api/boards/{id}/health-check/',
  tags: ['boards', 'fleet'],
  summary: "Run the board's health checks now",
  description:
    'Queues a run of every health check whose selector the board matches, ahead of its other waiting work. ' +
    'Answers 202 with the first run (the `Location` header names it); `runs` lists them all.',
  request: { params: IdParams },
  responses: {
    202: {
      description: 'The first run; `runs` holds every run queued',
      content: { 'application/json': { schema: OperationSchema.extend({ runs: z.array(OperationSchema) }).openapi('HealthCheckRuns') } },
    },
    404: problems[404],
    409: { description: '`no_health_check`: no health check matches the board' },
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/boards/{id}/',
  tags: ['boards'],
  summary: 'Delete a board: cancels its operations, revokes its token, disconnects its agent',
  request: { params: IdParams },
  responses: {
    204: { description: 'Deleted' },
    404: problems[404],
  },
});

export function boardRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(listRoute, async (c) => {
    const { limit, offset, label, status, health } = c.req.valid('query');
    return c.json(await ctx.boards.list({ limit, offset }, { labels: label, status, health }), 200);
  });

  app.openapi(patchRoute, async (c) => {
    const { id } = c.req.valid('param');
    const change = c.req.valid('json');
    const board = await ctx.boards.update(id, change);
    setAuditTarget(`board ${id}`, { name: board.name, ...change });
    return c.json(board, 200);
  });

  app.openapi(healthCheckRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await ctx.boards.require(id);
    setAuditTarget(`board ${id}`, { name: row.name });
    const runs = await ctx.healthChecks.runNow(id);
    if (runs.length === 0) throw new ConflictError('no_health_check', 'No health check matches this board (POST /api/health-checks/ defines one).');
    const first = runs[0]!;
    c.header('Location', `/api/operations/${first.id}/`);
    return c.json({ ...first, runs }, 202);
  });

  app.openapi(createBoardRoute, async (c) => {
    const { board, token } = await ctx.boards.register(c.req.valid('json').name);
    setAuditTarget(`board ${board.id}`, { name: board.name });
    const origin = publicOrigin(c, ctx.config);
    const install_command = installCommand(origin, { token });
    return c.json({ ...board, token, install_command, install_warning: installWarning(origin, ctx.config) }, 201);
  });

  app.openapi(getRoute, async (c) => c.json(await ctx.boards.get(c.req.valid('param').id), 200));

  app.openapi(deleteRoute, async (c) => {
    await ctx.boards.delete(c.req.valid('param').id);
    return c.body(null, 204);
  });

  return app;
}
