import type { IncomingMessage } from 'node:http';
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { accessOf } from '../auth/middleware/access-state.ts';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { CAMERA_BOUNDARY } from '../device-relay/camera-relay.ts';
import { endToEndHeaders, pairsOfRawHeaders } from '../device-relay/http-headers.ts';
import { ApiError, BadRequestError, boardOffline, notFound } from '../errors.ts';
import { SCRIPT_PORT_NOT_ALLOWED } from '../device-relay/proxy-relay.ts';
import { IdParams } from '../http/params.ts';
import { resolveBoardId } from '../operations/board-selection.ts';
import { DEVICE_SCRIPT_ID_PATTERN } from '../device-scripts/device-scripts-schema.ts';
import { ScriptPath } from '@mm/protocol';

const TAG = 'device scripts';

/** Where a script serves its event stream (docs/api.md: the script's `GET /stream`). */
const SCRIPT_STREAM_PATH = '/stream';

/** `/api/device-scripts/<id>/proxy` and what follows it: the path the script gets. */
const PROXY_PATH = /^\/api\/device-scripts\/[^/]+\/proxy(\/.*)?$/;

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: z.looseObject({ status: z.number().int(), code: z.string() }) } },
});

const BoardQuery = z.object({
  board_id: z.string().optional().openapi({ format: 'uuid', description: 'The board; may be left out when exactly one is registered.' }),
});

const boardProblems = {
  400: problem('`board_required`: several boards are registered and none is named'),
  404: problem('`device_script_not_found` or `board_not_found`'),
  503: problem('`board_offline` (or `no_board`): the board is not connected'),
};

/**
 * The catalogue entry and the connected board a relay request means, looked up together
 * (they are independent); an unknown script is reported before any board problem.
 */
async function scriptAndBoard(ctx: Services, scriptId: string, boardId: string | undefined, anywhere = false) {
  const [script, board] = await Promise.allSettled([ctx.deviceScripts.get(scriptId), connectedBoard(ctx, boardId, anywhere)]);
  if (script.status === 'rejected') throw script.reason;
  if (board.status === 'rejected') throw board.reason;
  // The port the board deployed the script on, when it did (docs/device-scripts.md); else the catalogue's.
  const port = (await ctx.deviceScripts.deployedPort(board.value, script.value.id)) ?? script.value.port;
  return { script: { ...script.value, port }, boardId: board.value };
}

/**
 * Returns the board a relay request means, connected: `?board_id=` or the only board. Linked
 * here, or (`anywhere`: the proxy) to another replica.
 */
async function connectedBoard(ctx: Services, boardId: string | undefined, anywhere: boolean): Promise<string> {
  if (boardId !== undefined && !DEVICE_SCRIPT_ID_PATTERN.test(boardId)) throw notFound.board(boardId);
  const id = await resolveBoardId(ctx, boardId);
  if (ctx.agents.connection(id)) return id;
  if (anywhere && (await ctx.agents.holderElsewhere(id))) return id;
  throw boardOffline(id);
}

/**
 * The board refused the script's port, and the script is not deployed there: the fix is to
 * deploy it (which opens its port to the relay), not to edit the agent's settings (issue 39:
 * the drive view sent people to MM_SCRIPT_PORTS for a board without the webcam). Same status
 * and code; the detail leads with the deploy, and `deployed: false` says it to programs.
 */
async function explainRefusal<T>(ctx: Services, script: { id: string; name: string; port: number }, boardId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== SCRIPT_PORT_NOT_ALLOWED) throw err;
    if ((await ctx.deviceScripts.deployedPort(boardId, script.id)) !== undefined) throw err;
    const board = (await ctx.boards.get(boardId).catch(() => undefined))?.name ?? boardId;
    throw new ApiError(
      403,
      SCRIPT_PORT_NOT_ALLOWED,
      'Forbidden',
      `${script.name} is not deployed on ${board}: deploy it there (the script's page, "Deploy", or \`mm scripts deploy "${script.name}" --board ${board}\`); ` +
        `deploying it also opens its port ${script.port} to the relay. Only a script the agent does not run itself needs its port in the agent's MM_SCRIPT_PORTS.`,
      undefined,
      { deployed: false, script_id: script.id, board_id: boardId },
    );
  }
}

/** The query string without `board_id` (it chose the board; the script never sees it), other parameters untouched. */
function queryWithoutBoardId(search: string): string {
  if (search.length <= 1) return '';
  const kept = search
    .slice(1)
    .split('&')
    .filter((part) => {
      const name = part.split('=', 1)[0]!.replace(/\+/g, ' ');
      try {
        return decodeURIComponent(name) !== 'board_id';
      } catch {
        return true;
      }
    });
  return kept.length ? `?${kept.join('&')}` : '';
}

/**
 * Who watches a camera, for the camera relay's per-user cap: the signed-in user, the shared API
 * token, or with auth off the client's address (the last X-Forwarded-For entry behind a
 * trusted proxy).
 */
function cameraViewerKey(c: Context<AppEnv>): string {
  const request = accessOf(c).request;
  const principal = request?.principal;
  if (principal?.kind === 'user' && principal.userId) return `user:${principal.userId}`;
  if (principal?.kind === 'api_token') return 'api-token';
  return `address:${request?.ip ?? 'unknown'}`;
}

/** A request with a body to relay (a declared length above 0, or a chunked one). */
function hasBody(incoming: IncomingMessage): boolean {
  if (incoming.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(incoming.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

/**
 * Row 14's relay: `ANY /api/device-scripts/<id>/proxy/<path>`,
 * `GET /api/device-scripts/<id>/stream/` and `GET /api/device-scripts/<id>/camera/`, through the board's agent to the script's port
 * (the catalogue entry's, never one from the request) on the board's loopback.
 */
export function deviceScriptRelayRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>();
  const relay = ctx.deviceRelay;

  for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: '/api/device-scripts/{id}/proxy/{path}',
      tags: [TAG],
      summary: "Relay a request to the device script's own route on the board",
      description:
        "Any method. The request goes through the board's agent to `127.0.0.1:<port>/<path>` on the board, where `port` is the " +
        'catalogue entry\'s: method, query (without `board_id`) and end-to-end headers (hop-by-hop ones, `Host` and ' +
        '`Authorization` removed); bodies are streamed both ways. The answer is the script\'s own: status, headers, body. ' +
        `The board must answer within MM_RELAY_TIMEOUT_S seconds.`,
      request: {
        params: IdParams.extend({ path: z.string().openapi({ param: { name: 'path', in: 'path' }, description: 'The script\'s route, may be empty' }) }),
        query: BoardQuery,
        // The script's own body, relayed as sent (JSON for the GPIO script's commands).
        ...(method === 'get' || method === 'delete'
          ? {}
          : { body: { required: false, content: { 'application/json': { schema: z.unknown().openapi({ description: "The script's own request body" }) } } } }),
      },
      responses: {
        200: {
          description: "The script's answer (any status it sends; JSON from the GPIO script)",
          content: { 'application/json': { schema: z.unknown().openapi({ description: "The script's own answer" }) } },
        },
        ...boardProblems,
        502: problem('`script_unreachable`: nothing listens on the port on the board; or the request to the script failed'),
        504: problem('`board_timeout`: the board did not answer in time'),
      },
    });
  }

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/device-scripts/{id}/stream/',
    tags: [TAG],
    summary: "The script's event stream, relayed live (server-sent events)",
    description:
      "The script's `GET /stream` events (id, event name, data as it sent them) to any number of clients from one upstream " +
      'subscription per board and script, opened with the first client and closed shortly after the last one leaves. ' +
      'Heartbeat comments every 15 s while idle. `Last-Event-ID` (or `?last_event_id=`) replays the events missed since ' +
      'then from the last 256 (at most 1 MiB), after an `event: gap` (`{"last_event_id","message"}`) when some of them are ' +
      'no longer held. A client that stops reading is cut (its connection reset) once 1 MiB waits for it for 2 s, or 2 MiB. ' +
      'An `upstream` event (`{"state":"down"}` / `{"state":"up"}`) tells when the script\'s stream ' +
      'drops and when it is back (link drop, agent reconnect, script restart); a client joining gets the current state.',
    request: {
      params: IdParams,
      query: BoardQuery.extend({ last_event_id: z.string().optional().openapi({ description: 'Same as the Last-Event-ID header' }) }),
    },
    responses: {
      200: { description: 'An endless event stream', content: { 'text/event-stream': { schema: z.string() } } },
      ...boardProblems,
    },
  });

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api/device-scripts/{id}/camera/',
    tags: [TAG],
    summary: "The webcam script's camera, relayed live (MJPEG)",
    description:
      "The script's `GET /stream.mjpg` (`multipart/x-mixed-replace; boundary=mmframe`, one whole JPEG a part with " +
      '`Content-Length` and, when the script sends it, `X-Capture-Time` in ms since the epoch) to any number of viewers from ' +
      'one upstream request per board and script, opened with the first viewer and closed MM_CAMERA_LINGER_MS after the ' +
      'last one leaves. A viewer that reads slower than the camera gets the newest whole frame each time it is ready and ' +
      'skips the rest: no delay builds up and the server holds no queue for it. `<img src>` shows it in a browser. The board ' +
      'must be linked to the replica answering. At most MM_CAMERA_MAX_VIEWERS viewers per camera and ' +
      'MM_CAMERA_MAX_VIEWERS_PER_USER per user on a replica; a viewer so far behind that the frames it still holds ' +
      'pass MM_CAMERA_MAX_PENDING_BYTES (all viewers together) has its connection reset.',
    request: { params: IdParams, query: BoardQuery },
    responses: {
      200: { description: 'An endless MJPEG stream', content: { 'multipart/x-mixed-replace': { schema: z.string().openapi({ format: 'binary' }) } } },
      ...boardProblems,
      429: problem('`too_many_camera_viewers`: this user (or, with auth off, this address) already has MM_CAMERA_MAX_VIEWERS_PER_USER camera streams open here; `Retry-After`'),
      502: problem('`script_unreachable`: nothing listens on the port on the board; `not_a_camera_stream`: the script does not serve MJPEG there'),
      503: problem('`board_offline` (or `no_board`): the board is not connected; `camera_full`: the camera already has MM_CAMERA_MAX_VIEWERS viewers here (`Retry-After`)'),
      504: problem('`board_timeout`: the board did not answer in time'),
    },
  });

  app.get('/api/device-scripts/:id/camera/', async (c) => {
    // Linked to another replica: found (anywhere), then refused with the reason.
    const { script, boardId } = await scriptAndBoard(ctx, c.req.param('id'), c.req.query('board_id'), true);
    // Linked to another replica: that replica shares its one upstream's frames (docs/replicas.md, *Cameras*).
    if (!ctx.agents.connection(boardId) && (!relay.remoteCameras || (await ctx.agents.holderElsewhere(boardId)) === undefined)) {
      throw boardOffline(boardId);
    }
    const headers = {
      'content-type': `multipart/x-mixed-replace; boundary=${CAMERA_BOUNDARY}`,
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    };
    const body = await explainRefusal(ctx, script, boardId, () =>
      relay.camera.attach({ boardId, scriptId: script.id, port: script.port }, c.req.raw.signal, {
        viewer: cameraViewerKey(c),
        out: c.env.outgoing,
      }),
    );
    if (c.req.method === 'HEAD') {
      await body.cancel();
      return c.body(null, 200, headers);
    }
    return new Response(body, { status: 200, headers: { ...headers, 'transfer-encoding': 'chunked' } });
  });

  app.all('/api/device-scripts/:id/proxy/*', async (c) => {
    const { script, boardId } = await scriptAndBoard(ctx, c.req.param('id'), c.req.query('board_id'), true);
    // The path as routed (dot segments already resolved); percent-escapes stay as sent, so
    // `..%2f..` is just a strange path on the script's port, like any other.
    const url = new URL(c.req.url);
    const path = (PROXY_PATH.exec(url.pathname)?.[1] || '/') + queryWithoutBoardId(url.search);
    if (!ScriptPath.safeParse(path).success) throw new BadRequestError('bad_proxy_path', 'The path cannot be relayed.');
    const incoming = c.env.incoming;
    const request = {
      port: script.port,
      method: c.req.method,
      path,
      headers: endToEndHeaders(pairsOfRawHeaders(incoming.rawHeaders)),
      body: hasBody(incoming) ? incoming : undefined,
      signal: c.req.raw.signal,
      timeoutMs: ctx.config.relayTimeoutMs,
    };
    const conn = ctx.agents.connection(boardId);
    // Linked to another replica: through board_calls (bodies of 1 MiB at most).
    if (!conn) return relay.remoteProxy.forward({ boardId, ...request });
    return explainRefusal(ctx, script, boardId, () => relay.proxy.forward({ conn, ...request }));
  });

  app.get('/api/device-scripts/:id/stream/', async (c) => {
    // Linked to another replica: that replica's upstream feeds this one (with several replicas).
    const { script, boardId } = await scriptAndBoard(ctx, c.req.param('id'), c.req.query('board_id'), relay.remoteStreams !== undefined);
    const headers = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // Reverse proxies (nginx) must pass events on at once.
      'x-accel-buffering': 'no',
    };
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    const body = relay.streams.attach(
      { boardId, scriptId: script.id, port: script.port, path: SCRIPT_STREAM_PATH },
      { lastEventId: c.req.header('last-event-id') ?? c.req.query('last_event_id'), out: c.env.outgoing },
    );
    // Chunked from the start: the adapter then sends the head at once instead of first
    // reading ahead to work out a length.
    return new Response(body, { status: 200, headers: { ...headers, 'transfer-encoding': 'chunked' } });
  });

  return app;
}
