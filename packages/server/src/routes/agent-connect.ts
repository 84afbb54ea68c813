import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { upgradeWebSocket } from '@hono/node-server';
import type WebSocket from 'ws';
import { AGENT_CONNECT_PATH } from '@mm/protocol';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { rejectUpgrade } from '../agent-link/reject-upgrade.ts';
import { handshakeRetryAfterS } from '../agent-link/handshake-gate.ts';
import { ApiError, ServiceUnavailableError, UnauthorizedError } from '../errors.ts';
import { bearerToken } from '../http/auth.ts';
import { toProblem } from '../http/problem.ts';

/**
 * `GET /api/agent/connect/`: the board agent's WebSocket (docs/agent-link.md). The board
 * token is checked before the upgrade: without a valid one (or with the token of a deleted
 * board) the answer is a 401 problem, never a socket.
 */
export function agentConnectRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>();

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: AGENT_CONNECT_PATH,
    tags: ['agent'],
    summary: "The board agent's link (WebSocket upgrade)",
    description: 'Authenticated with the board token (`Authorization: Bearer <board token>`), not the API token. See docs/agent-link.md.',
    security: [{ boardToken: [] }],
    request: { headers: z.object({ authorization: z.string().openapi({ example: 'Bearer <board token>' }) }) },
    responses: {
      101: { description: 'Switching protocols: the agent link is open' },
      401: { description: 'Missing or invalid board token (problem+json, `unauthorized`)' },
      503: {
        description:
          'Too many agents linking at once (MM_AGENT_HANDSHAKES_MAX): problem+json `server_busy` with Retry-After, answered before any database work; the agent retries after its backoff',
      },
      426: { description: 'Not a WebSocket upgrade request (problem+json, `upgrade_required`)' },
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'boardToken', { type: 'http', scheme: 'bearer', description: 'A board token' });

  app.get(AGENT_CONNECT_PATH, async (c) => {
    const isUpgrade = c.req.header('upgrade')?.toLowerCase() === 'websocket';
    const endHandshake = isUpgrade ? ctx.hub.handshakes.tryEnter() : () => {};
    if (!endHandshake) {
      const busy = new ServiceUnavailableError('server_busy', 'Too many boards are linking right now; try again in a few seconds.');
      const retryAfter = String(handshakeRetryAfterS());
      if (c.env?.incoming) {
        await rejectUpgrade(c.env.incoming, toProblem(busy), { 'Retry-After': retryAfter });
        return c.body(null, 503);
      }
      busy.headers['retry-after'] = retryAfter;
      throw busy;
    }
    let handedOver = false;
    try {
      return await upgradeAgent(c, endHandshake, isUpgrade, () => (handedOver = true));
    } finally {
      if (!handedOver) endHandshake();
    }
  });

  /** The token check and the upgrade; `handOver` marks the handshake's place as the link's to end. */
  async function upgradeAgent(c: Context<AppEnv>, endHandshake: () => void, isUpgrade: boolean, handOver: () => void) {
    const token = bearerToken(c.req.header('authorization'));
    const board = token ? await ctx.boards.byToken(token) : undefined;
    if (!board) {
      const err = new UnauthorizedError('A valid board token is required (Authorization: Bearer <board token>).');
      if (isUpgrade && c.env?.incoming) {
        ctx.log.warn({ path: c.req.path }, 'agent connection refused: bad board token');
        await rejectUpgrade(c.env.incoming, toProblem(err), { 'WWW-Authenticate': 'Bearer' });
        return c.body(null, 401);
      }
      throw err;
    }
    if (!isUpgrade) {
      const err = new ApiError(426, 'upgrade_required', 'Upgrade Required', 'This route is a WebSocket: send an upgrade request.');
      err.headers.upgrade = 'websocket';
      throw err;
    }
    handOver();
    return upgradeWebSocket(c, {
      onOpen: (_event, ws) => {
        // After the upgrade the request's TCP socket carries the link: its byte counts are the link's.
        const socket = c.env?.incoming?.socket;
        if (socket) ctx.metrics.trackAgentLink(socket);
        ctx.hub.accept(ws.raw as WebSocket, { id: board.id, name: board.name }, endHandshake);
      },
      // The upgrade failed (the socket went first): the link never starts.
      onError: () => endHandshake(),
    });
  }

  return app;
}
