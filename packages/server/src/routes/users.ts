import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { generatePassword } from '../auth/passwords.ts';
import { requestAuth } from '../auth/request-auth.ts';
import { ROLES } from '../auth/roles.ts';
import { isWeakPasswordFor, Password, problem, UserSchema, Username } from '../auth/schemas.ts';
import { IdParams, PageQuery } from '../http/params.ts';
import { toUserObject, userNotFound } from '../auth/users.ts';
import { ValidationError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { requireJson } from '../http/openapi.ts';

const TAG = 'people and access';

const CreateUserBody = z
  .object({
    username: Username,
    password: Password.optional().openapi({ description: 'Left out: the server generates one and answers it this once' }),
    role: z.enum(ROLES),
  })
  .strict()
  .openapi('CreateUser', { example: { username: 'alice', role: 'operator' } });

const UpdateUserBody = z
  .object({
    role: z.enum(ROLES).optional(),
    password: Password.optional(),
    revoke_tokens: z.boolean().optional().openapi({ description: "`true`: also revoke all the user's personal tokens (with a password reset: nothing the old holder kept works)" }),
  })
  .strict()
  .openapi('UpdateUser', { example: { role: 'viewer' } });

const NewUser = UserSchema.extend({
  password: z.string().optional().openapi({ description: 'The generated password, shown this once (only when none was sent)' }),
}).openapi('NewUser');

const UserList = z.object({ users: z.array(UserSchema), total: z.number().int() }).openapi('UserList');

const lastAdminProblem = problem('`last_admin`: the last admin cannot be deleted or demoted');

const listRoute = createRoute({
  method: 'get',
  path: '/api/users/',
  tags: [TAG],
  summary: 'List users (admin)',
  request: { query: PageQuery },
  responses: { 200: { description: 'A page of users, oldest first', content: { 'application/json': { schema: UserList } } }, 400: problem('Bad input') },
});

const createUserRoute = createRoute({
  method: 'post',
  path: '/api/users/',
  tags: [TAG],
  summary: 'Create a user (admin)',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: CreateUserBody } } } },
  responses: {
    201: { description: 'The user (and a generated password, once)', content: { 'application/json': { schema: NewUser } } },
    400: problem('Bad input'),
    409: problem('`username_taken`'),
    415: problem('Not application/json'),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/users/{id}/',
  tags: [TAG],
  summary: 'A user (admin)',
  request: { params: IdParams },
  responses: { 200: { description: 'The user', content: { 'application/json': { schema: UserSchema } } }, 404: problem('`user_not_found`') },
});

const updateRoute = createRoute({
  method: 'patch',
  path: '/api/users/{id}/',
  tags: [TAG],
  summary: "Change a user's role or password (admin)",
  description:
    "A new password ends the user's sessions; `revoke_tokens: true` also revokes their personal tokens; a new role cuts " +
    'their open streams (they reconnect with the new role).',
  middleware: [requireJson] as const,
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: UpdateUserBody } } } },
  responses: {
    200: { description: 'The user', content: { 'application/json': { schema: UserSchema } } },
    400: problem('Bad input'),
    404: problem('`user_not_found`'),
    409: lastAdminProblem,
    415: problem('Not application/json'),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/api/users/{id}/',
  tags: [TAG],
  summary: 'Delete a user (admin): their tokens and sessions stop working at once, open streams are cut',
  request: { params: IdParams },
  responses: { 204: { description: 'Deleted' }, 404: problem('`user_not_found`'), 409: lastAdminProblem },
});

/** The same rule as a user's own change (POST /api/auth/password/): not the user's own name. */
function refuseWeak(password: string, username: string): void {
  if (isWeakPasswordFor(password, username)) throw new ValidationError([{ field: 'password', message: 'must not be the user name' }]);
}

export function userRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(userNotFound) });

  const record = (action: string, target: string, detail?: Record<string, unknown>) => {
    const a = requestAuth();
    return auth.audit.record({ action, target, actor: a.authOn ? a.principal : null, ip: a.ip, requestId: a.requestId, detail });
  };

  app.openapi(listRoute, async (c) => {
    const { rows, total } = await auth.users.list(c.req.valid('query'));
    return c.json({ users: rows.map(toUserObject), total }, 200);
  });

  app.openapi(createUserRoute, async (c) => {
    const body = c.req.valid('json');
    if (body.password !== undefined) refuseWeak(body.password, body.username);
    const generated = body.password === undefined ? generatePassword() : undefined;
    const row = await auth.users.create(body.username, body.password ?? generated!, body.role);
    await record('user.create', `user ${row.id}`, { username: row.username, role: row.role });
    return c.json({ ...toUserObject(row), ...(generated ? { password: generated } : {}) }, 201);
  });

  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await auth.users.find(id);
    if (!row) throw userNotFound(id);
    return c.json(toUserObject(row), 200);
  });

  app.openapi(updateRoute, async (c) => {
    const { id } = c.req.valid('param');
    const change = c.req.valid('json');
    if (change.role === undefined && change.password === undefined && !change.revoke_tokens) {
      throw new ValidationError([{ field: '(body)', message: 'give role, password or revoke_tokens' }]);
    }
    const before = await auth.users.find(id);
    if (before && change.password !== undefined) refuseWeak(change.password, before.username);
    const row = await auth.users.update(id, change);
    if (change.password !== undefined) await auth.sessions.endAllOf(id);
    const revoked = change.revoke_tokens ? await auth.tokens.revokeAllOf(id) : [];
    if (change.password !== undefined || revoked.length || (before && before.role !== row.role)) auth.live.cutUser(id, requestAuth().principal);
    await record('user.update', `user ${id}`, {
      ...(change.role !== undefined ? { role: row.role, previous_role: before?.role } : {}),
      ...(change.password !== undefined ? { password_changed: true } : {}),
      ...(change.revoke_tokens ? { tokens_revoked: revoked.length } : {}),
    });
    return c.json(toUserObject(row), 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const { id } = c.req.valid('param');
    const row = await auth.users.delete(id);
    // The rows are gone (cascade), so no new request authenticates; cut the ones in flight.
    auth.live.cutUser(id, requestAuth().principal);
    await record('user.delete', `user ${id}`, { username: row.username });
    return c.body(null, 204);
  });

  return app;
}
