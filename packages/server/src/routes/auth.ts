import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from '../auth/auth-service.ts';
import { ForbiddenError, InvalidCredentialsError, TooManyAttemptsError } from '../auth/errors.ts';
import { clientIp, requestProto } from '../auth/origin.ts';
import { checkPassword } from '../auth/password-check.ts';
import type { Principal } from '../auth/principal.ts';
import { requestAuth } from '../auth/request-auth.ts';
import { isWeakPasswordFor, MeSchema, Password, problem, UserSchema } from '../auth/schemas.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import { toUserObject } from '../auth/users.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { validationHook } from '../http/validation.ts';
import { requireJson } from '../http/openapi.ts';

const LoginBody = z
  .object({
    // Loose on purpose: a malformed username is just a wrong one (same 401), never a hint.
    username: z.string().min(1).max(200),
    password: z.string().min(1).max(1024),
  })
  .openapi('Login', { example: { username: 'alice', password: 'correct horse battery staple' } });

const loginRoute = createRoute({
  method: 'post',
  path: '/api/auth/login/',
  tags: ['people and access'],
  summary: 'Sign in: sets the session cookie mm_session',
  description:
    'Sets `mm_session` (HttpOnly, SameSite=Lax, Path=/, Secure when the request came over https — directly, through a ' +
    'trusted proxy saying `X-Forwarded-Proto: https` (MM_TRUST_PROXY=1), or when MM_PUBLIC_URL is https). The session ' +
    'ends after MM_SESSION_IDLE_S without requests or MM_SESSION_MAX_S after sign-in. Failed sign-ins are limited per ' +
    'username and per address (429 with Retry-After). An unknown user and a wrong password get the same 401.',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: LoginBody } } } },
  responses: {
    200: { description: 'Signed in', content: { 'application/json': { schema: z.object({ user: UserSchema }) } } },
    400: problem('Bad input'),
    401: problem('`invalid_credentials`'),
    403: problem('`cross_origin`: the request came from another site'),
    415: problem('Not application/json'),
    429: problem('`too_many_attempts`: wait Retry-After seconds'),
  },
});

const TokenLoginBody = z
  .object({ token: z.string().min(1).max(1024) })
  .openapi('TokenLogin', { example: { token: 'mmu_…' } });

const tokenLoginRoute = createRoute({
  method: 'post',
  path: '/api/auth/token-login/',
  tags: ['people and access'],
  summary: 'Sign in with a token: sets the session cookie mm_session',
  description:
    'For the dashboard\'s "sign in with a token": a personal token or MM_API_TOKEN is exchanged for a session cookie, ' +
    'so that plain links (videos, ZIPs, logs) work in the browser without the token ever being kept by the page. The ' +
    'session acts as the token does and ends with it: revoking a personal token, its expiry or a changed MM_API_TOKEN ' +
    'ends the session too. Same cookie, limits and 401/429 answers as `POST /api/auth/login/`.',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: TokenLoginBody } } } },
  responses: {
    200: { description: 'Signed in', content: { 'application/json': { schema: MeSchema } } },
    400: problem('Bad input'),
    401: problem('`invalid_credentials`'),
    403: problem('`cross_origin`: the request came from another site'),
    415: problem('Not application/json'),
    429: problem('`too_many_attempts`: wait Retry-After seconds'),
  },
});

const logoutRoute = createRoute({
  method: 'post',
  path: '/api/auth/logout/',
  tags: ['people and access'],
  summary: 'Sign out: ends the session server-side and clears the cookie',
  responses: { 204: { description: 'The session has ended' }, 401: problem('`unauthorized`') },
});

const meRoute = createRoute({
  method: 'get',
  path: '/api/auth/me/',
  tags: ['people and access'],
  summary: 'Who the request acts as',
  responses: { 200: { description: 'The caller', content: { 'application/json': { schema: MeSchema } } }, 401: problem('`unauthorized`') },
});

const ChangePasswordBody = z
  .object({ current_password: z.string().min(1, 'required').max(1024), new_password: Password })
  .strict()
  .openapi('ChangePassword', { example: { current_password: 'the old one', new_password: 'correct horse battery staple' } });

const changePasswordRoute = createRoute({
  method: 'post',
  path: '/api/auth/password/',
  tags: ['people and access'],
  summary: 'Change your own password',
  description:
    'Any signed-in user, for their own password: the current one must be given. Your other sessions end (their open ' +
    'streams are cut); the one making the request stays signed in; personal tokens keep working. A wrong current ' +
    'password counts as a failed sign-in (the same limits, 429 with Retry-After).',
  middleware: [requireJson] as const,
  request: { body: { required: true, content: { 'application/json': { schema: ChangePasswordBody } } } },
  responses: {
    204: { description: 'Changed' },
    400: problem('`validation_failed`: the new password is empty, too short (8 characters at least) or your user name'),
    401: problem('`invalid_credentials`: the current password is wrong (or `unauthorized`: not signed in)'),
    403: problem('`user_required`: MM_API_TOKEN (or a server with auth off) has no password to change'),
    415: problem('Not application/json'),
    429: problem('`too_many_attempts`: wait Retry-After seconds'),
  },
});

export function authRoutes(auth: AuthService) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook(() => new NotFoundError('route_not_found', 'No such route.')) });
  const { config } = auth;

  /** Who a principal is, as `/api/auth/me/` says it (MM_API_TOKEN and auth off have no user row). */
  const userOf = async (p: Principal) => {
    const row = p.kind === 'user' && p.userId ? await auth.users.find(p.userId) : undefined;
    return row ? toUserObject(row) : { id: p.userId, username: p.username, role: p.role, created_at: null };
  };
  const secure = (c: Context<AppEnv>) => requestProto(c, config) === 'https' || Boolean(config.publicUrl?.startsWith('https://'));
  const setSessionCookie = (c: Context<AppEnv>, cookie: string, expiresAt: Date) =>
    setCookie(c, SESSION_COOKIE, cookie, {
      httpOnly: true,
      sameSite: 'Lax',
      secure: secure(c),
      path: '/',
      // The browser forgets it when the server would (absolute expiry); idle expiry is the server's.
      maxAge: Math.max(1, Math.floor((expiresAt.getTime() - auth.clock.now()) / 1000)),
    });

  app.openapi(loginRoute, async (c) => {
    const { username, password } = c.req.valid('json');
    const ip = clientIp(c, config) ?? 'unknown';
    const requestId = c.get('requestId') ?? null;
    const found = await auth.users.findByName(username);
    const user = await checkPassword(auth, { user: found, typed: username, password, ip, requestId, failedAction: 'auth.login_failed' });
    const { row, cookie } = await auth.sessions.open({ userId: user.id }, ip);
    setSessionCookie(c, cookie, row.expiresAt);
    await auth.audit.record({ action: 'auth.login', target: `user ${user.id}`, actor: { userId: user.id, username: user.username }, ip, requestId, detail: { session: row.id } });
    return c.json({ user: toUserObject(user) }, 200);
  });

  app.openapi(tokenLoginRoute, async (c) => {
    const { token } = c.req.valid('json');
    const ip = clientIp(c, config) ?? 'unknown';
    const requestId = c.get('requestId') ?? null;
    // Counted per address only (a token names no one until it is valid).
    const limitKey = `(token sign-in from ${ip})`;
    const retryAfter = await auth.signIns.retryAfterS(limitKey, ip);
    if (retryAfter > 0) {
      await auth.audit.record({ action: 'auth.login_throttled', target: 'token', actor: null, ip, requestId });
      throw new TooManyAttemptsError(retryAfter);
    }
    const found = await auth.ownerForToken(token.trim());
    if (!found) {
      await auth.signIns.failed(limitKey, ip);
      await auth.audit.record({ action: 'auth.login_failed', target: 'token', actor: null, ip, requestId });
      throw new InvalidCredentialsError();
    }
    await auth.signIns.succeeded(limitKey);
    const { principal: p, owner } = found;
    const { row, cookie } = await auth.sessions.open(owner, ip);
    setSessionCookie(c, cookie, row.expiresAt);
    const via = 'apiTokenId' in owner ? { token: owner.apiTokenId } : { token: 'MM_API_TOKEN' };
    await auth.audit.record({ action: 'auth.login', target: p.userId ? `user ${p.userId}` : 'MM_API_TOKEN', actor: p, ip, requestId, detail: { session: row.id, ...via } });
    return c.json({ user: await userOf(p), auth: 'on' as const, via: 'session' as const }, 200);
  });

  app.openapi(logoutRoute, async (c) => {
    const a = requestAuth();
    if (a.principal.via === 'session' && a.principal.credentialId) {
      await auth.sessions.end(a.principal.credentialId);
      auth.live.cutCredential(a.principal.credentialId, a.principal);
      await auth.audit.record({ action: 'auth.logout', target: `user ${a.principal.userId}`, actor: a.principal, ip: a.ip, requestId: a.requestId });
    }
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: secure(c) });
    return c.body(null, 204);
  });

  app.openapi(changePasswordRoute, async (c) => {
    const { current_password, new_password } = c.req.valid('json');
    const a = requestAuth();
    const p = a.principal;
    const current = p.kind === 'user' && p.userId ? await auth.users.find(p.userId) : undefined;
    if (!current) throw new ForbiddenError('Only users have passwords: sign in as a user to change yours.', 'user_required');
    if (isWeakPasswordFor(new_password, current.username)) {
      throw new ValidationError([{ field: 'new_password', message: 'must not be your user name' }]);
    }
    const ip = a.ip ?? 'unknown';
    await checkPassword(auth, { user: current, typed: current.username, password: current_password, ip, requestId: a.requestId, failedAction: 'auth.password_change_failed' });
    await auth.users.update(current.id, { password: new_password });
    // Every other session of this user ends; the one asking (if it is a session) stays.
    const keep = p.via === 'session' ? (p.credentialId ?? undefined) : undefined;
    await auth.sessions.endAllOf(current.id, keep);
    auth.live.cutWhere((q) => q.userId === current.id && q.via === 'session' && q.credentialId !== keep);
    await auth.audit.record({ action: 'user.password_change', target: `user ${current.id}`, actor: p, ip: a.ip, requestId: a.requestId, detail: { sessions_ended: 'others' } });
    return c.body(null, 204);
  });

  app.openapi(meRoute, async (c) => {
    const { principal: p, authOn } = requestAuth();
    return c.json({ user: await userOf(p), auth: authOn ? ('on' as const) : ('off' as const), via: p.via }, 200);
  });

  return app;
}
