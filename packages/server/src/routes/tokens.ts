import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../app-context.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { ForbiddenError } from '../auth/errors.ts';
import { requestAuth } from '../auth/request-auth.ts';
import { PageQuery, problem, TokenSchema, UuidParams } from '../auth/schemas.ts';
import { createToken, listTokens, revokeToken, tokenNotFound, toTokenObject } from '../auth/tokens.ts';
import { ValidationError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { requireJson } from './invocations.ts';

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

const listRoute = createRoute({
  method: 'get',
  path: '/api/tokens/',
  tags: [TAG],
  summary: 'Your personal tokens (never the tokens themselves)',
  request: { query: PageQuery },
  responses: { 200: { description: 'A page of your tokens, newest first', content: { 'application/json': { schema: TokenList } } }, 400: problem('Bad input') },
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
  summary: 'Revoke one of your tokens: it stops working at once (open streams too)',
  request: { params: UuidParams },
  responses: { 204: { description: 'Revoked' }, 404: problem('`token_not_found`') },
});

export function tokenRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(tokenNotFound) });
  const { db } = auth;

  const ownerId = () => {
    const a = requestAuth();
    return a.principal.kind === 'user' ? a.principal.userId : null;
  };

  app.openapi(listRoute, async (c) => {
    const userId = ownerId();
    if (!userId) return c.json({ tokens: [], total: 0 }, 200);
    const { rows, total } = await listTokens(db, userId, c.req.valid('query'));
    return c.json({ tokens: rows.map(toTokenObject), total }, 200);
  });

  app.openapi(createTokenRoute, async (c) => {
    const userId = ownerId();
    if (!userId) throw new ForbiddenError('Tokens belong to users: sign in as a user to make one.', 'user_required');
    const body = c.req.valid('json');
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw new ValidationError([{ field: 'expires_at', message: 'must be in the future' }]);
    const { row, token } = await createToken(db, userId, body.name, expiresAt);
    const a = requestAuth();
    await auth.audit.record({ action: 'token.create', target: `token ${row.id}`, actor: a.principal, ip: a.ip, requestId: a.requestId, detail: { name: row.name } });
    return c.json({ ...toTokenObject(row), token }, 201);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    const userId = ownerId();
    const row = userId ? await revokeToken(db, userId, id) : undefined;
    if (!row) throw tokenNotFound(id);
    const a = requestAuth();
    auth.live.cutCredential(id, a.principal);
    await auth.audit.record({ action: 'token.revoke', target: `token ${id}`, actor: a.principal, ip: a.ip, requestId: a.requestId, detail: { name: row.name } });
    return c.body(null, 204);
  });

  return app;
}
