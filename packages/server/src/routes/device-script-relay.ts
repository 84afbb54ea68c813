import type { IncomingMessage } from 'node:http';
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { CAMERA_BOUNDARY } from '../device-relay/camera-relay.ts';
import { endToEndHeaders, pairsOfRawHeaders } from '../device-relay/http-headers.ts';
import { BadRequestError, boardOffline, notFound } from '../errors.ts';
import { resolveBoardId } from '../operations/board-selection.ts';
import { getDeviceScript } from '../services/device-scripts.ts';
import { deployedPort } from '../services/device-script-programs.ts';
import { DEVICE_SCRIPT_ID_PATTERN } from '../services/device-scripts-schema.ts';
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

const IdParam = z.string().openapi({ param: { name: 'id', in: 'path' }, format: 'uuid' });
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
  const [script, board] = await Promise.allSettled([getDeviceScript(ctx.database.db, scriptId), connectedBoard(ctx, boardId, anywhere)]);
  if (script.status === 'rejected') throw script.reason;
  if (board.status === 'rejected') throw board.reason;
  // The port the board deployed the script on, when it did (docs/device-scripts.md); else the catalogue's.
  const port = (await deployedPort(ctx.database.db, board.value, script.value.id)) ?? script.value.port;
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
        params: z.object({ id: IdParam, path: z.string().openapi({ param: { name: 'path', in: 'path' }, description: 'The script\'s route, may be empty' }) }),
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
      'then from the last 256. An `upstream` event (`{"state":"down"}` / `{"state":"up"}`) tells when the script\'s stream ' +
      'drops and when it is back (link drop, agent reconnect, script restart); a client joining gets the current state.',
    request: {
      params: z.object({ id: IdParam }),
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
      "must be linked to the replica answering.",
    request: { params: z.object({ id: IdParam }), query: BoardQuery },
    responses: {
      200: { description: 'An endless MJPEG stream', content: { 'multipart/x-mixed-replace': { schema: z.string().openapi({ format: 'binary' }) } } },
      ...boardProblems,
      502: problem('`script_unreachable`: nothing listens on the port on the board; `not_a_camera_stream`: the script does not serve MJPEG there'),
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
    const body = await relay.camera.attach({ boardId, scriptId: script.id, port: script.port }, c.req.raw.signal);
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
    const conn = ctx.agents.connection(boardId);
    if (!conn) {
      // Linked to another replica: through board_calls (bodies of 1 MiB at most).
      return relay.remoteProxy.forward({
        boardId,
        port: script.port,
        method: c.req.method,
        path,
        headers: endToEndHeaders(pairsOfRawHeaders(incoming.rawHeaders)),
        body: hasBody(incoming) ? incoming : undefined,
        signal: c.req.raw.signal,
        timeoutMs: ctx.config.relayTimeoutMs,
      });
    }
    return relay.proxy.forward({
      conn,
      port: script.port,
      method: c.req.method,
      path,
      headers: endToEndHeaders(pairsOfRawHeaders(incoming.rawHeaders)),
      body: hasBody(incoming) ? incoming : undefined,
      signal: c.req.raw.signal,
      timeoutMs: ctx.config.relayTimeoutMs,
    });
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
