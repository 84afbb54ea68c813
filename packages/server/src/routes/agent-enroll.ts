import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { Services } from '../services.ts';
import { problem } from '../auth/schemas.ts';
import { requestAuth, setAuditTarget } from '../auth/request-auth.ts';
import { notFound } from '../errors.ts';
import { requireJson } from '../http/openapi.ts';
import { safeString } from '../http/safe-string.ts';
import { validationHook } from '../http/validation.ts';
import { EnrollFactsSchema } from '../enrollment/enroll-facts.ts';

/** How long a pending board's agent waits before asking again (Retry-After). */
export const PENDING_RETRY_AFTER_S = 5;

const EnrollBody = z
  .object({
    key: z.string().min(1).max(200).openapi({ description: 'The provisioning key (`MM_PROVISIONING_KEY`).' }),
    machine_id: safeString().trim().min(1, 'must not be empty').max(200).openapi({ description: "The board's stable id (`/etc/machine-id`): the same machine enrolling again gets the same board." }),
    hostname: safeString().trim().min(1, 'must not be empty').max(200).openapi({ description: "The board's host name; the new board's name." }),
    facts: EnrollFactsSchema.optional().openapi({ description: 'What the agent found on the board (arch, os, ...).' }),
    token: z.string().min(1).max(200).optional().openapi({ description: "Re-enrolling: the board's current token, which proves the caller is the board (without it, a board that exists is held for an admin unless the key is `auto` and the board is not connected)." }),
  })
  .openapi('Enroll', { example: { key: 'mmk_…', machine_id: '5f1c0e8e0e9a4a0c9d6f1e2b3c4d5e6f', hostname: 'kria-07' } });

const Enrolled = z.object({ board_id: z.string().uuid(), token: z.string().openapi({ description: 'The board token; keep it (MM_BOARD_TOKEN_FILE).' }) }).openapi('Enrolled');
const EnrollPending = z.object({ board_id: z.string().uuid(), status: z.literal('pending') }).openapi('EnrollPending');

const enrollRoute = createRoute({
  method: 'post',
  path: '/api/agent/enroll/',
  tags: ['enrollment'],
  summary: 'An agent exchanges a provisioning key for a board token',
  description: 'No user auth: the provisioning key in the body is the credential. See docs/enrollment.md.',
  security: [],
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: EnrollBody } } } },
  responses: {
    201: { description: 'Enrolled: the board and its token (a new token each time the same machine enrolls again)', content: { 'application/json': { schema: Enrolled } } },
    202: {
      description: 'The key needs approval (the board is pending), or a re-enrolment of an existing board is held for an admin; ask again after Retry-After',
      content: { 'application/json': { schema: EnrollPending } },
    },
    400: problem('Bad input (`validation_failed`)'),
    401: problem('`unauthorized`: the key is unknown, expired, used up or deleted'),
    429: problem('`too_many_attempts`: too many refused enrolments from this address; Retry-After says when to try again'),
    415: problem('Not application/json'),
  },
});

/** `POST /api/agent/enroll/` (public: the key authenticates; docs/enrollment.md). */
export function agentEnrollRoutes(ctx: Services) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(notFound.board) });

  app.openapi(enrollRoute, async (c) => {
    const body = c.req.valid('json');
    const a = requestAuth();
    const result = await ctx.provisioningKeys.enroll(
      { key: body.key, machineId: body.machine_id, hostname: body.hostname, facts: body.facts, token: body.token, address: a.ip },
      { ip: a.ip ?? 'unknown', requestId: a.requestId },
    );
    const board = result.board;
    setAuditTarget(`board ${board.id}`, {
      hostname: body.hostname,
      machine_id: body.machine_id,
      key_id: board.provisioningKeyId,
      result: result.kind === 'pending' && result.held ? 'held' : result.kind,
      ...(result.kind === 'token' && result.proof ? { proof: result.proof } : {}),
    });
    if (result.kind === 'pending') {
      if (result.held) ctx.log.warn({ board_id: board.id, hostname: body.hostname }, 're-enrolment of a board held for an admin: it did not prove it is the board');
      else ctx.log.info({ board_id: board.id, hostname: body.hostname }, 'board enrolled, waiting for approval');
      c.header('Retry-After', String(PENDING_RETRY_AFTER_S));
      return c.json({ board_id: board.id, status: 'pending' as const }, 202);
    }
    // The old token stops working: a link still open with it is closed too.
    if (result.rotated) ctx.hub.revoke(board.id);
    ctx.log.info({ board_id: board.id, hostname: body.hostname, again: result.rotated }, 'board enrolled');
    return c.json({ board_id: board.id, token: result.token }, 201);
  });

  return app;
}
