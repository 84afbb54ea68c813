import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { ForbiddenError } from '../auth/errors.ts';
import { requestAuth } from '../auth/request-auth.ts';
import { problem, TokenSchema } from '../auth/schemas.ts';
import { IdParams, PageQuery } from '../http/params.ts';
import { tokenNotFound, toTokenObject } from '../auth/tokens.ts';
import { ValidationError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { requireJson } from '../http/openapi.ts';

const TAG = 'people and access';

const CreateTokenBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').refine((s) => !s.includes('\0'), 'must not contain NUL'),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional().openapi({ description: 'When it stops working (ISO 8601); left out or null: never' }),
  })
  .strict()
  .openapi('CreateToken', { example: { name: 'ci runner', expires_at: '2027-01-01T00:00:00.000Z' } });

const NewToken = TokenSchema.extend({
  token: z.string().openapi({ description: 'The token (`Authorization: Bearer <token>`). Shown this once; only its hash is stored.' }),
}).openapi('NewToken');

const TokenList = z.object({ tokens: z.array(TokenSchema), total: z.number().int() }).openapi('TokenList');

const noUser = problem('`user_required`: MM_API_TOKEN (or a server with auth off) has no user to own tokens');

const TokenListQuery = PageQuery.extend({
  user_id: z.string().uuid().optional().openapi({ description: "Another user's tokens (admin only; your own id needs no role)" }),
  all: z.enum(['1', 'true']).optional().openapi({ description: "`1`: every user's tokens (admin only)" }),
});

const listRoute = createRoute({
  method: 'get',
  path: '/api/tokens/',
  tags: [TAG],
  summary: 'Your personal tokens; an admin may list any user\'s or everyone\'s (never the tokens themselves)',
  request: { query: TokenListQuery },
  responses: {
    200: { description: 'A page of tokens, newest first', content: { 'application/json': { schema: TokenList } } },
    400: problem('Bad input'),
    403: problem("`forbidden`: another user's tokens, or everyone's, need the admin role"),
  },
});

const createTokenRoute = createRoute({
  method: 'post',
  path: '/api/tokens/',
  tags: [TAG],
  summary: 'Make a personal token; answers it once',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateTokenBody } } } },
  responses: {
    201: { description: 'The token', content: { 'application/json': { schema: NewToken } } },
    400: problem('Bad input (`validation_failed`; an `expires_at` in the past)'),
    403: noUser,
    415: problem('Not application/json'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/tokens/{id}/',
  tags: [TAG],
  summary: 'Revoke one of your tokens (an admin: anyone\'s): it stops working at once (open streams too)',
  request: { params: IdParams },
  responses: { 204: { description: 'Revoked' }, 404: problem('`token_not_found`') },
});

export function tokenRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(tokenNotFound) });

  const ownerId = () => {
    const a = requestAuth();
    return a.principal.kind === 'user' ? a.principal.userId : null;
  };
  const isAdmin = () => requestAuth().principal.role === 'admin';
  const needAdmin = (what: string) => new ForbiddenError(`${what} needs the admin role.`);

  app.openapi(listRoute, async (c) => {
    const { user_id, all, ...page } = c.req.valid('query');
    const own = ownerId();
    let whose: string | null;
    if (all !== undefined) {
      if (!isAdmin()) throw needAdmin("Listing everyone's tokens");
      whose = null;
    } else if (user_id !== undefined && user_id !== own) {
      if (!isAdmin()) throw needAdmin("Listing another user's tokens");
      whose = user_id;
    } else if (own) {
      whose = own;
    } else {
      return c.json({ tokens: [], total: 0 }, 200);
    }
    const { rows, total } = await auth.tokens.list(whose, page);
    return c.json({ tokens: rows.map((r) => toTokenObject(r.token, r.username)), total }, 200);
  });

  app.openapi(createTokenRoute, async (c) => {
    const userId = ownerId();
    if (!userId) throw new ForbiddenError('Tokens belong to users: sign in as a user to make one.', 'user_required');
    const body = c.req.valid('json');
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= auth.clock.now()) throw new ValidationError([{ field: 'expires_at', message: 'must be in the future' }]);
    const { row, token } = await auth.tokens.create(userId, body.name, expiresAt);
    const a = requestAuth();
    await auth.audit.record({ action: 'token.create', target: `token ${row.id}`, actor: a.principal, ip: a.ip, requestId: a.requestId, detail: { name: row.name } });
    return c.json({ ...toTokenObject(row, a.principal.username ?? ''), token }, 201);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    const userId = ownerId();
    // Your own token; an admin's request reaches anyone's (one lookup, so a non-admin learns nothing of others').
    const row = isAdmin() ? await auth.tokens.revoke(null, id) : userId ? await auth.tokens.revoke(userId, id) : undefined;
    if (!row) throw tokenNotFound(id);
    const a = requestAuth();
    auth.live.cutCredential(id, a.principal);
    const othersToken = row.userId !== userId;
    await auth.audit.record({
      action: 'token.revoke',
      target: `token ${id}`,
      actor: a.principal,
      ip: a.ip,
      requestId: a.requestId,
      detail: { name: row.name, ...(othersToken ? { owner_id: row.userId } : {}) },
    });
    return c.body(null, 204);
  });

  return app;
}
