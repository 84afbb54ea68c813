import { randomBytes } from 'node:crypto';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { safeString } from '../http/safe-string.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { BoardSchema, deleteBoardRow, findBoard, insertBoard, listBoardRows, toBoardObject, updateBoard, type BoardRow } from '../agent-link/board-store.ts';
import { LabelsSchema } from '../enrollment/label-schema.ts';
import { BoardSelectorSchema } from '../fleet/board-selector.ts';
import { OperationSchema } from '../operations/operation-object.ts';
import { sha256Hex } from '../http/auth.ts';
import { validationHook } from '../http/validation.ts';
import { ConflictError, notFound } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { setAuditTarget } from '../auth/request-auth.ts';
import { installCommand, publicOrigin } from '../downloads/install-command.ts';

const BoardIdParams = z.object({
  id: z.string().uuid().openapi({ param: { name: 'id', in: 'path' }, example: '0b6f3c1e-8d4a-4f51-9a43-2f0f2b1f7c11' }),
});

/** `k=v` → [k, v] (the value may itself hold `=`). */
function labelPair(text: string): [string, string] | undefined {
  const at = text.indexOf('=');
  return at > 0 ? [text.slice(0, at), text.slice(at + 1)] : undefined;
}

const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ description: 'Page size (max 1000).' }),
  offset: z.coerce.number().int().min(0).default(0),
  label: z
    .union([safeString(), z.array(safeString())])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const pairs: Record<string, string> = {};
      for (const text of Array.isArray(v) ? v : [v]) {
        const pair = labelPair(text);
        if (!pair) {
          ctx.addIssue({ code: 'custom', message: `\`${text}\` is not key=value` });
          return z.NEVER;
        }
        pairs[pair[0]] = pair[1];
      }
      const checked = BoardSelectorSchema.safeParse(pairs);
      if (!checked.success) {
        ctx.addIssue({ code: 'custom', message: checked.error.issues[0]?.message ?? 'not a label' });
        return z.NEVER;
      }
      return checked.data;
    })
    .openapi({ param: { style: 'form', explode: true }, description: '`key=value`; repeat it: boards holding every pair', example: 'camera=yes' }),
  status: z.enum(['online', 'offline', 'rebooting', 'pending']).optional(),
  health: z.enum(['unknown', 'good', 'bad']).optional(),
});

const PatchBoardBody = z
  .object({
    name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
    labels: LabelsSchema.optional().openapi({ description: "Replaces the people's labels; the agent's `mm/` ones stay (an `mm/` key here is 400)" }),
    maintenance: z.boolean().optional().openapi({ description: 'Under repair: no selector work goes to it (work naming it still runs)' }),
  })
  .strict()
  .openapi('PatchBoard', { example: { labels: { camera: 'yes', site: 'lab-2' }, maintenance: false } });

const CreateBoardBody = z
  .object({ name: safeString().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters') })
  .openapi('CreateBoard', { example: { name: 'zcu104-lab-1' } });

const NewBoard = BoardSchema.extend({
  token: z.string().openapi({ description: 'The board token for the agent (MM_BOARD_TOKEN). Shown this once; only its hash is stored.' }),
  install_command: z.string().openapi({ description: 'The one line that installs the agent on the board with this token (docs/packages.md)' }),
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
    415: { description: 'The body is not application/json' },
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/boards/{id}/',
  tags: ['boards'],
  summary: 'A board',
  request: { params: BoardIdParams },
  responses: {
    200: { description: 'The board', content: { 'application/json': { schema: BoardSchema } } },
    404: problems[404],
  },
});

const patchRoute = createRoute({
  method: 'patch',
  path: '/api/boards/{id}/',
  tags: ['boards'],
  summary: "Rename a board, set its labels (the agent's mm/ labels stay), put it in or out of maintenance",
  middleware: [requireJson] as const,
  request: { params: BoardIdParams, body: { required: true, content: { 'application/json': { schema: PatchBoardBody } } } },
  responses: {
    200: { description: 'The board', content: { 'application/json': { schema: BoardSchema } } },
    400: problems[400],
    404: problems[404],
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
  request: { params: BoardIdParams },
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
  request: { params: BoardIdParams },
  responses: {
    204: { description: 'Deleted' },
    404: problems[404],
  },
});

export function boardRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });
  const { db } = ctx.database;

  const present = async (rows: BoardRow[]) => {
    const ids = rows.map((r) => r.id);
    // Presence wherever the board is linked: this replica or another (board_sessions).
    const [loads, presence] = await Promise.all([ctx.operations.boardLoads(ids), ctx.agents.presenceOf(ids)]);
    return rows.map((r) => {
      const load = loads.get(r.id);
      return toBoardObject(r, presence.get(r.id) ?? ctx.agents.presence(r.id), load?.running != null, load);
    });
  };

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const { rows, total } = await listBoardRows(db, q, { labels: q.label, status: q.status, health: q.health, sessionStaleMs: ctx.sessions.staleMs });
    return c.json({ boards: await present(rows), total }, 200);
  });

  app.openapi(patchRoute, async (c) => {
    const { id } = c.req.valid('param');
    const change = c.req.valid('json');
    const row = await updateBoard(db, id, change);
    if (!row) throw notFound.board(id);
    setAuditTarget(`board ${id}`, { name: row.name, ...change });
    ctx.log.info({ board_id: id, change }, 'board updated');
    // Labels or maintenance decide which selector work it may take.
    if (change.labels !== undefined || change.maintenance !== undefined) await ctx.scheduler.boardChanged();
    const [board] = await present([row]);
    return c.json(board!, 200);
  });

  app.openapi(healthCheckRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await findBoard(db, id);
    if (!row) throw notFound.board(id);
    setAuditTarget(`board ${id}`, { name: row.name });
    const runs = await ctx.scheduler.runHealthChecksNow(id);
    if (runs.length === 0) throw new ConflictError('no_health_check', 'No health check matches this board (POST /api/health-checks/ defines one).');
    const first = runs[0]!;
    c.header('Location', `/api/operations/${first.id}/`);
    return c.json({ ...first, runs }, 202);
  });

  app.openapi(createBoardRoute, async (c) => {
    // 32 random bytes: 256 bits, base64url (43 characters); only the sha256 is stored.
    const token = randomBytes(32).toString('base64url');
    const row = await insertBoard(db, c.req.valid('json').name, sha256Hex(token));
    ctx.log.info({ board_id: row.id, name: row.name }, 'board registered');
    setAuditTarget(`board ${row.id}`, { name: row.name });
    const install_command = installCommand(publicOrigin(c, ctx.config), { token });
    return c.json({ ...toBoardObject(row, ctx.agents.presence(row.id), false), token, install_command }, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await findBoard(db, id);
    if (!row) throw notFound.board(id);
    const [board] = await present([row]);
    return c.json(board!, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await findBoard(db, id))) throw notFound.board(id);
    // Its work ends first (while the operations still name the board), then the row and
    // with it the token go, then any connection of it is closed (4003).
    await ctx.operations.cancelOperationsOfBoard(id);
    await deleteBoardRow(db, id);
    ctx.hub.revoke(id);
    ctx.log.info({ board_id: id }, 'board deleted');
    return c.body(null, 204);
  });

  return app;
}
