import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { upgradeWebSocket } from '@hono/node-server';
import type WebSocket from 'ws';
import { accessOf } from '../auth/middleware/access-state.ts';
import { anonymousPrincipal } from '../auth/principal.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { rejectUpgrade } from '../agent-link/reject-upgrade.ts';
import { ApiError, NotFoundError, notFound } from '../errors.ts';
import { toProblem } from '../http/problem.ts';
import { validationHook } from '../http/validation.ts';
import { uuidParam } from '../http/params.ts';

const TAG = 'terminals';

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: z.looseObject({ status: z.number().int(), code: z.string() }) } },
});

const SizeParam = (name: 'cols' | 'rows', fallback: number) =>
  z.coerce.number().int().min(1).max(1000).default(fallback).openapi({ param: { name, in: 'query' }, description: `The terminal's ${name === 'cols' ? 'columns' : 'rows'} at the start (default ${fallback}); later sizes come as resize frames.` });

const TerminalQuery = z.object({ cols: SizeParam('cols', 80), rows: SizeParam('rows', 24) });

const TerminalSessionSchema = z
  .object({
    id: z.string().uuid(),
    board_id: z.string().uuid(),
    board_name: z.string(),
    user_id: z.string().uuid().nullable(),
    username: z.string().nullable(),
    started_at: z.string().openapi({ format: 'date-time' }),
    ended_at: z.string().nullable().openapi({ format: 'date-time' }),
    exit_code: z.number().int().nullable().openapi({ description: "The shell's exit status, when it exited" }),
    end_reason: z.string().nullable().openapi({ description: '`exited`, `client_left`, `idle_timeout`, `board_rebooting`, `link_lost`, `server_stopping`, `server_stopped`, `terminal_disabled`, `pty_failed`; null while it runs' }),
    cols: z.number().int(),
    rows: z.number().int(),
    recording_bytes: z.number().int(),
    recording_truncated: z.boolean(),
  })
  .openapi('TerminalSession');

const sessionNotFound = (id: unknown) => new NotFoundError('terminal_session_not_found', `No terminal session with id ${String(id)}.`);

const listRoute = createRoute({
  method: 'get',
  path: '/api/terminal-sessions/',
  tags: [TAG],
  summary: 'Terminal sessions, newest first (admins)',
  request: {
    query: z.object({
      board_id: z.string().uuid().optional().openapi({ description: 'Only this board’s sessions' }),
      limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ description: 'At most this many (max 1000)' }),
    }),
  },
  responses: {
    200: { description: 'The sessions', content: { 'application/json': { schema: z.object({ sessions: z.array(TerminalSessionSchema) }).openapi('TerminalSessionList') } } },
    400: problem('Bad query (`validation_failed`)'),
  },
});

const recordingRoute = createRoute({
  method: 'get',
  path: '/api/terminal-sessions/{id}/recording/',
  tags: [TAG],
  summary: "A session's recording (asciicast v2, admins)",
  description:
    'Newline-delimited JSON: a header, then `[seconds, "o", text]` per piece of output and `[seconds, "r", "COLSxROWS"]` per resize. Keystrokes are not recorded; what the shell echoed is. Written when the session ends (404 `recording_not_ready` while it runs).',
  request: { params: z.object({ id: uuidParam('id') }) },
  responses: {
    200: { description: 'The recording', content: { 'application/x-asciicast': { schema: z.string() } } },
    404: problem('`terminal_session_not_found`, or `recording_not_ready` (the session still runs)'),
  },
});

/**
 * Terminals on boards (docs/terminal.md): the WebSocket `GET /api/boards/<id>/terminal/`
 * and, for admins, the sessions and their recordings.
 */
export function terminalRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(sessionNotFound) });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/boards/{id}/terminal/',
    tags: [TAG],
    summary: 'A terminal on the board (WebSocket upgrade)',
    description:
      'A login shell on the board as its MM_TERMINAL_USER, in a pseudo-terminal. Binary frames are the terminal’s bytes both ways; the client sends text frames `{"type":"resize","cols":N,"rows":N}`, the server a last text frame `{"type":"exit","code":N|null,"reason","message"}` before it closes the socket. For an operator holding the board’s reservation, or an admin. Every session is audited and recorded (see /api/terminal-sessions/).',
    request: { params: z.object({ id: uuidParam('id') }), query: TerminalQuery },
    responses: {
      101: { description: 'Switching protocols: the terminal is open' },
      400: problem('Bad size (`validation_failed`)'),
      403: problem('`reservation_required` (an operator not holding the board’s reservation), `terminal_disabled` (the board’s MM_TERMINAL=off), or `forbidden` (a viewer)'),
      404: problem('`board_not_found`'),
      426: problem('`upgrade_required`: not a WebSocket upgrade request'),
      503: problem('`board_offline`: the board is not connected (to this replica)'),
    },
  });

  app.get('/api/boards/:id/terminal/', async (c) => {
    const isUpgrade = c.req.header('upgrade')?.toLowerCase() === 'websocket';
    try {
      return await openTerminal(c, isUpgrade);
    } catch (err) {
      // Refused before the upgrade: a whole problem+json answer (the node server would drop the body).
      if (isUpgrade && err instanceof ApiError && c.env?.incoming) {
        await rejectUpgrade(c.env.incoming, toProblem(err));
        return c.body(null, err.status as 403);
      }
      throw err;
    }
  });

  async function openTerminal(c: Context<AppEnv>, isUpgrade: boolean) {
    const id = c.req.param('id') ?? '';
    const parsedId = z.string().uuid().safeParse(id);
    if (!parsedId.success) throw notFound.board(id);
    const size = TerminalQuery.safeParse({ cols: c.req.query('cols'), rows: c.req.query('rows') });
    if (!size.success) throw new ApiError(400, 'validation_failed', 'Validation Failed', 'cols and rows must be whole numbers from 1 to 1000.');
    const board = await ctx.boards.get(parsedId.data);
    const request = accessOf(c).request;
    const principal = request?.principal ?? anonymousPrincipal;
    const conn = await ctx.terminals.check({ id: board.id, name: board.name }, principal);
    if (!isUpgrade) {
      const err = new ApiError(426, 'upgrade_required', 'Upgrade Required', 'This route is a WebSocket: send an upgrade request.');
      err.headers.upgrade = 'websocket';
      throw err;
    }
    const opener = { principal, ip: request?.ip ?? null, requestId: c.get('requestId') ?? null };
    return upgradeWebSocket(c, {
      onOpen: (_event, ws) => ctx.terminals.open(ws.raw as WebSocket, conn, { id: board.id, name: board.name }, size.data, opener),
    });
  }

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const sessions = await ctx.terminalSessions.list({ ...(q.board_id ? { boardId: q.board_id } : {}), limit: q.limit });
    return c.json({ sessions }, 200);
  });

  app.openapi(recordingRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await ctx.terminalSessions.recording(id);
    if (!found) throw sessionNotFound(id);
    if (found.session.ended_at === null || found.recording === null) throw new NotFoundError('recording_not_ready', 'The session still runs: its recording is written when it ends.');
    return c.body(new Uint8Array(found.recording), 200, {
      'content-type': 'application/x-asciicast',
      'content-disposition': `inline; filename="terminal-${id}.cast"`,
    }) as never;
  });

  return app;
}
