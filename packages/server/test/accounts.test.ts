import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokens, loginFailures, sessions } from '../src/db/schema.ts';
import { LOGIN_LIMITS } from '../src/auth/login-limiter.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, login, makeUser, sessionCookie, type TestUser } from './support/accounts.ts';
import { FakeAgent } from './support/fake-agent.ts';

/** Rows of a raw query on either driver (postgres-js answers an array, PGlite `{ rows }`). */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** Reads from an event stream until it ends; resolves with what arrived, or 'still open' after the timeout. */
async function readUntilEnd(res: Response, timeoutMs: number): Promise<'ended' | 'still open'> {
  const reader = res.body!.getReader();
  const timeout = new Promise<'still open'>((r) => setTimeout(() => r('still open'), timeoutMs));
  const ended = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return 'ended' as const;
    } catch {
      return 'ended' as const;
    }
  })();
  const outcome = await Promise.race([ended, timeout]);
  if (outcome === 'still open') await reader.cancel().catch(() => {});
  return outcome;
}

describe.each(dbKinds)('people and access (%s database)', (kind) => {
  let server: TestServer;
  const admin = bearer(ADMIN_TOKEN);
  /** Every secret handed out, for the look into the tables at the end. */
  const secrets: string[] = [ADMIN_TOKEN];
  let viewer: TestUser;
  let operator: TestUser;
  let boss: TestUser;

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN, MM_TRUST_PROXY: '1' });
    viewer = await makeUser(server, 'vera', 'viewer');
    operator = await makeUser(server, 'otto', 'operator');
    boss = await makeUser(server, 'ada', 'admin');
    for (const u of [viewer, operator, boss]) secrets.push(u.password, u.token, u.cookie.split('=')[1]!);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  const db = () => server.ctx.database.db;

  describe('sign-in and sessions', () => {
    it('sets an HttpOnly, SameSite=Lax session cookie; Secure only over https (X-Forwarded-Proto from a trusted proxy)', async () => {
      const plain = await login(server, 'vera', viewer.password);
      expect(plain.status).toBe(200);
      expect((await json(plain)).user).toMatchObject({ username: 'vera', role: 'viewer', id: viewer.id });
      const set = plain.headers.getSetCookie().find((c) => c.startsWith('mm_session='))!;
      expect(set).toMatch(/HttpOnly/i);
      expect(set).toMatch(/SameSite=Lax/i);
      expect(set).toMatch(/Path=\//);
      expect(set).not.toMatch(/Secure/i);
      secrets.push(sessionCookie(plain)!.split('=')[1]!);
      const https = await login(server, 'vera', viewer.password, { 'x-forwarded-proto': 'https' });
      expect(https.headers.getSetCookie().find((c) => c.startsWith('mm_session='))).toMatch(/;\s*Secure/i);
      secrets.push(sessionCookie(https)!.split('=')[1]!);
    });

    it('answers /api/auth/me/ for a session, a personal token and MM_API_TOKEN', async () => {
      const bySession = await json(await call(server, 'GET', '/api/auth/me/', { cookie: operator.cookie }));
      expect(bySession).toMatchObject({ user: { id: operator.id, username: 'otto', role: 'operator' }, auth: 'on', via: 'session' });
      expect(typeof bySession.user.created_at).toBe('string');
      expect(await json(await call(server, 'GET', '/api/auth/me/', bearer(operator.token)))).toMatchObject({ user: { username: 'otto' }, via: 'token' });
      expect(await json(await call(server, 'GET', '/api/auth/me/', admin))).toMatchObject({ user: { username: 'MM_API_TOKEN', role: 'admin' }, via: 'api_token' });
      const none = await server.api('/api/auth/me/');
      expect(none.status).toBe(401);
    });

    it('gives the same 401 invalid_credentials for an unknown user and a wrong password', async () => {
      const unknown = await login(server, 'nobody-here', 'whatever-password');
      const wrong = await login(server, 'vera', 'not-her-password');
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      const [a, b] = [await json(unknown), await json(wrong)];
      expect(a).toEqual(b);
      expect(a.code).toBe('invalid_credentials');
      expect(sessionCookie(unknown)).toBeUndefined();
      await db().delete(loginFailures);
    });

    it('logout ends the session on the server: the old cookie no longer works', async () => {
      const res = await login(server, 'otto', operator.password);
      const cookie = sessionCookie(res)!;
      expect((await call(server, 'GET', '/api/invocations/', { cookie })).status).toBe(200);
      const out = await call(server, 'POST', '/api/auth/logout/', { cookie });
      expect(out.status).toBe(204);
      expect(out.headers.getSetCookie().join()).toMatch(/mm_session=;/);
      const after = await call(server, 'GET', '/api/invocations/', { cookie });
      expect(after.status).toBe(401);
      const { secretHash } = await import('../src/auth/secrets.ts');
      expect(await db().select().from(sessions).where(eq(sessions.tokenHash, secretHash(cookie.split('=')[1]!)))).toEqual([]);
    });

    it('ends a session after the idle time and after the absolute time', async () => {
      const idle = sessionCookie(await login(server, 'otto', operator.password))!;
      const absolute = sessionCookie(await login(server, 'otto', operator.password))!;
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: idle })).status).toBe(200);
      // Move the clocks in the database instead of waiting: idle = last use older than MM_SESSION_IDLE_S.
      const idleMs = server.ctx.config.sessionIdleMs;
      const rows = await db().select().from(sessions).where(eq(sessions.userId, operator.id));
      const { secretHash } = await import('../src/auth/secrets.ts');
      const idleRow = rows.find((r) => r.tokenHash === secretHash(idle.split('=')[1]!))!;
      const absRow = rows.find((r) => r.tokenHash === secretHash(absolute.split('=')[1]!))!;
      await db().update(sessions).set({ lastSeenAt: new Date(Date.now() - idleMs - 1000) }).where(eq(sessions.id, idleRow.id));
      await db().update(sessions).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(sessions.id, absRow.id));
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: idle })).status).toBe(401);
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: absolute })).status).toBe(401);
      // The operator's other session is untouched.
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: operator.cookie })).status).toBe(200);
    });

    it(`rate-limits failed sign-ins per username (${LOGIN_LIMITS.perUsername}) with 429 too_many_attempts and Retry-After`, async () => {
      await db().delete(loginFailures);
      const u = await makeUser(server, 'rita', 'viewer', admin);
      secrets.push(u.password, u.token, u.cookie.split('=')[1]!);
      for (let i = 0; i < LOGIN_LIMITS.perUsername; i++) expect((await login(server, 'rita', 'wrong-password')).status).toBe(401);
      const limited = await login(server, 'rita', u.password);
      expect(limited.status).toBe(429);
      expect((await json(limited)).code).toBe('too_many_attempts');
      const retry = Number(limited.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(LOGIN_LIMITS.windowMs / 1000);
      // An unknown name is limited the same way (no hint which names exist).
      for (let i = 0; i < LOGIN_LIMITS.perUsername; i++) await login(server, 'ghost', 'x-password');
      expect((await login(server, 'ghost', 'x-password')).status).toBe(429);
      // Others still sign in.
      expect((await login(server, 'vera', viewer.password)).status).toBe(200);
      await db().delete(loginFailures);
      expect((await login(server, 'rita', u.password)).status).toBe(200);
    });

    it(`rate-limits failed sign-ins per address (${LOGIN_LIMITS.perAddress})`, async () => {
      await db().delete(loginFailures);
      const from = { 'x-forwarded-for': '203.0.113.9' };
      for (let i = 0; i < LOGIN_LIMITS.perAddress; i++) expect((await login(server, `name-${i}`, 'wrong-password', from)).status).toBe(401);
      const limited = await login(server, 'vera', viewer.password, from);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await login(server, 'vera', viewer.password, { 'x-forwarded-for': '203.0.113.10' })).status).toBe(200);
      await db().delete(loginFailures);
    }, 60_000);

    it('refuses a cookie-authenticated change from another origin (403 cross_origin), not a bearer one', async () => {
      const body = { name: 'x', description: '' };
      const foreign = await call(server, 'POST', '/api/invocations/create/', { cookie: operator.cookie }, body, { origin: 'https://evil.example' });
      expect(foreign.status).toBe(403);
      expect((await json(foreign)).code).toBe('cross_origin');
      const site = await call(server, 'POST', '/api/invocations/create/', { cookie: operator.cookie }, body, { 'sec-fetch-site': 'cross-site' });
      expect(site.status).toBe(403);
      const own = await call(server, 'POST', '/api/invocations/create/', { cookie: operator.cookie }, body, { origin: server.url, 'sec-fetch-site': 'same-origin' });
      expect(own.status).toBe(201);
      const tokenCall = await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), body, { origin: 'https://evil.example' });
      expect(tokenCall.status).toBe(201);
      // Reads from anywhere are fine (SameSite=Lax keeps the cookie off cross-site subrequests anyway).
      expect((await call(server, 'GET', '/api/invocations/', { cookie: operator.cookie }, undefined, { origin: 'https://evil.example' })).status).toBe(200);
    });
  });

  describe('signing in with a token (the dashboard\'s token sign-in)', () => {
    const tokenLogin = (token: string, headers: Record<string, string> = {}) => call(server, 'POST', '/api/auth/token-login/', headers, { token });

    it('exchanges a personal token for a session cookie that acts as the token\'s user and ends when the token is revoked', async () => {
      const t = await json(await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'dashboard' }));
      secrets.push(t.token);
      const res = await tokenLogin(t.token);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await json(res)).toMatchObject({ user: { id: viewer.id, username: 'vera', role: 'viewer' }, auth: 'on', via: 'session' });
      const cookie = sessionCookie(res)!;
      expect(res.headers.getSetCookie().find((c) => c.startsWith('mm_session='))).toMatch(/HttpOnly/i);
      secrets.push(cookie.split('=')[1]!);
      // The cookie alone opens plain GETs (what a video, ZIP or log link sends) with the token's role.
      expect((await call(server, 'GET', '/api/invocations/', { cookie })).status).toBe(200);
      expect(await json(await call(server, 'GET', '/api/auth/me/', { cookie }))).toMatchObject({ user: { username: 'vera' }, via: 'session' });
      expect((await call(server, 'GET', '/api/audit/', { cookie })).status).toBe(403);
      // Revoking the token ends the session made from it.
      expect((await call(server, 'DELETE', `/api/tokens/${t.id}/`, bearer(viewer.token))).status).toBe(204);
      expect((await call(server, 'GET', '/api/invocations/', { cookie })).status).toBe(401);
    });

    it('ends the session when the token expires, and never outlives it', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000);
      const t = await json(await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'hour', expires_at: expiresAt.toISOString() }));
      secrets.push(t.token);
      const res = await tokenLogin(t.token);
      const cookie = sessionCookie(res)!;
      secrets.push(cookie.split('=')[1]!);
      const { secretHash } = await import('../src/auth/secrets.ts');
      const [row] = await db().select().from(sessions).where(eq(sessions.tokenHash, secretHash(cookie.split('=')[1]!)));
      expect(row!.expiresAt.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
      expect(row!.apiTokenId).toBe(t.id);
      const maxAge = Number(/Max-Age=(\d+)/i.exec(res.headers.getSetCookie().find((c) => c.startsWith('mm_session='))!)![1]);
      expect(maxAge).toBeLessThanOrEqual(3600);
      expect((await call(server, 'GET', '/api/boards/', { cookie })).status).toBe(200);
      await db().update(apiTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(apiTokens.id, t.id));
      expect((await call(server, 'GET', '/api/boards/', { cookie })).status).toBe(401);
      await db().delete(apiTokens).where(eq(apiTokens.id, t.id));
    });

    it('exchanges MM_API_TOKEN for an admin session; logout ends it', async () => {
      const res = await tokenLogin(ADMIN_TOKEN);
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({ user: { username: 'MM_API_TOKEN', role: 'admin', id: null }, via: 'session' });
      const cookie = sessionCookie(res)!;
      secrets.push(cookie.split('=')[1]!);
      expect((await call(server, 'GET', '/api/audit/', { cookie })).status).toBe(200);
      const { secretHash } = await import('../src/auth/secrets.ts');
      const [row] = await db().select().from(sessions).where(eq(sessions.tokenHash, secretHash(cookie.split('=')[1]!)));
      expect(row).toMatchObject({ userId: null, envTokenHash: secretHash(ADMIN_TOKEN) });
      // A session of a different MM_API_TOKEN (the setting changed since) no longer works.
      await db().update(sessions).set({ envTokenHash: secretHash('an-older-api-token') }).where(eq(sessions.id, row!.id));
      expect((await call(server, 'GET', '/api/audit/', { cookie })).status).toBe(401);
      await db().update(sessions).set({ envTokenHash: secretHash(ADMIN_TOKEN) }).where(eq(sessions.id, row!.id));
      expect((await call(server, 'GET', '/api/audit/', { cookie })).status).toBe(200);
      expect((await call(server, 'POST', '/api/auth/logout/', { cookie })).status).toBe(204);
      expect((await call(server, 'GET', '/api/audit/', { cookie })).status).toBe(401);
    });

    it('refuses a wrong token with 401 invalid_credentials, sets no cookie, then limits the address (429)', async () => {
      const ip = { 'x-forwarded-for': '203.0.113.77' };
      const wrong = await tokenLogin('mmu_not-a-real-token', ip);
      expect(wrong.status).toBe(401);
      expect((await json(wrong)).code).toBe('invalid_credentials');
      expect(sessionCookie(wrong)).toBeUndefined();
      expect((await tokenLogin('', ip)).status).toBe(400);
      let last: Response = wrong;
      for (let i = 0; i < LOGIN_LIMITS.perAddress + 1 && last.status !== 429; i++) last = await tokenLogin(`mmu_guess-${i}`, ip);
      expect(last.status).toBe(429);
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another address is not held back.
      expect((await tokenLogin(viewer.token, { 'x-forwarded-for': '203.0.113.78' })).status).toBe(200);
      await db().delete(loginFailures);
    });
  });

  describe('personal tokens', () => {
    it('shows a token once, lists it without the secret, keeps last_used_at and revokes it', async () => {
      const made = await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'laptop', expires_at: new Date(Date.now() + 86_400_000).toISOString() });
      expect(made.status).toBe(201);
      const t = await json(made);
      secrets.push(t.token);
      expect(t).toMatchObject({ name: 'laptop', last_used_at: null });
      expect(t.token).toMatch(/^mmu_/);
      const listed = await json(await call(server, 'GET', '/api/tokens/', bearer(viewer.token)));
      expect(listed.total).toBe(2);
      expect(JSON.stringify(listed)).not.toContain(t.token);
      expect(listed.tokens.map((x: { name: string }) => x.name).sort()).toEqual(['laptop', 'vera-token']);
      expect((await call(server, 'GET', '/api/invocations/', bearer(t.token))).status).toBe(200);
      const used = (await json(await call(server, 'GET', '/api/tokens/', bearer(viewer.token)))).tokens.find((x: { id: string }) => x.id === t.id);
      expect(Date.parse(used.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
      // Another user's token is not theirs to see or revoke.
      expect((await json(await call(server, 'GET', '/api/tokens/', bearer(operator.token)))).tokens.some((x: { id: string }) => x.id === t.id)).toBe(false);
      expect((await call(server, 'DELETE', `/api/tokens/${t.id}/`, bearer(operator.token))).status).toBe(404);
      expect((await call(server, 'DELETE', `/api/tokens/${t.id}/`, bearer(viewer.token))).status).toBe(204);
      expect((await call(server, 'GET', '/api/invocations/', bearer(t.token))).status).toBe(401);
    });

    it('stops an expired token; refuses an expiry in the past and tokens for MM_API_TOKEN', async () => {
      const t = await json(await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'short' }));
      secrets.push(t.token);
      expect(t.expires_at).toBeNull();
      expect((await call(server, 'GET', '/api/boards/', bearer(t.token))).status).toBe(200);
      await db().update(apiTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(apiTokens.id, t.id));
      expect((await call(server, 'GET', '/api/boards/', bearer(t.token))).status).toBe(401);
      const past = await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'old', expires_at: '2020-01-01T00:00:00.000Z' });
      expect(past.status).toBe(400);
      expect((await json(past)).errors[0].field).toBe('expires_at');
      const shared = await call(server, 'POST', '/api/tokens/', admin, { name: 'x' });
      expect(shared.status).toBe(403);
      expect((await json(shared)).code).toBe('user_required');
    });
  });

  describe('users', () => {
    it('creates users with a generated password shown once; refuses a taken name and bad input', async () => {
      const res = await call(server, 'POST', '/api/users/', bearer(boss.token), { username: 'gen', role: 'viewer' });
      expect(res.status).toBe(201);
      const u = await json(res);
      secrets.push(u.password);
      expect(u.password).toMatch(/^[\w-]{20,}$/);
      expect((await login(server, 'gen', u.password)).status).toBe(200);
      const again = await json(await call(server, 'GET', `/api/users/${u.id}/`, bearer(boss.token)));
      expect(again).toEqual({ id: u.id, username: 'gen', role: 'viewer', created_at: u.created_at });
      const taken = await call(server, 'POST', '/api/users/', bearer(boss.token), { username: 'GEN', role: 'viewer' });
      expect(taken.status).toBe(409);
      expect((await json(taken)).code).toBe('username_taken');
      for (const bad of [{ username: 'x', role: 'root' }, { username: '../x', role: 'viewer' }, { username: 'y', role: 'viewer', password: 'short' }]) {
        expect((await call(server, 'POST', '/api/users/', bearer(boss.token), bad)).status).toBe(400);
      }
      const list = await json(await call(server, 'GET', '/api/users/', bearer(boss.token)));
      expect(list.users.map((x: { username: string }) => x.username)).toContain('gen');
      expect(JSON.stringify(list)).not.toMatch(/password/);
    });

    it('never lets the last admin be deleted or demoted (409 last_admin)', async () => {
      // ada is the only admin user (MM_API_TOKEN is not a user).
      const demote = await call(server, 'PATCH', `/api/users/${boss.id}/`, admin, { role: 'operator' });
      expect(demote.status).toBe(409);
      expect((await json(demote)).code).toBe('last_admin');
      const del = await call(server, 'DELETE', `/api/users/${boss.id}/`, bearer(boss.token));
      expect(del.status).toBe(409);
      expect((await json(del)).code).toBe('last_admin');
      // With a second admin, the first may go down.
      const second = await makeUser(server, 'grace', 'admin', admin);
      secrets.push(second.password, second.token, second.cookie.split('=')[1]!);
      expect((await call(server, 'PATCH', `/api/users/${boss.id}/`, bearer(second.token), { role: 'operator' })).status).toBe(200);
      expect((await call(server, 'DELETE', `/api/users/${second.id}/`, bearer(second.token))).status).toBe(409);
      expect((await call(server, 'PATCH', `/api/users/${boss.id}/`, bearer(second.token), { role: 'admin' })).status).toBe(200);
      expect((await call(server, 'DELETE', `/api/users/${second.id}/`, bearer(boss.token))).status).toBe(204);
    });

    it('a new password ends the user’s sessions', async () => {
      const u = await makeUser(server, 'pat', 'viewer', admin);
      const res = await call(server, 'PATCH', `/api/users/${u.id}/`, admin, { password: 'a-brand-new-password' });
      expect(res.status).toBe(200);
      secrets.push(u.password, u.token, u.cookie.split('=')[1]!, 'a-brand-new-password');
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: u.cookie })).status).toBe(401);
      expect((await login(server, 'pat', 'a-brand-new-password')).status).toBe(200);
    });
  });

  describe('operations and a deleted user', () => {
    let agent: FakeAgent;
    let boardId: string;
    let invocationId: number;
    let opId: number;

    beforeAll(async () => {
      const b = await json(await call(server, 'POST', '/api/boards/', bearer(boss.token), { name: 'lab-1' }));
      secrets.push(b.token);
      boardId = b.id;
      agent = await FakeAgent.online(server.url, b.token);
      invocationId = (await json(await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), { name: 'run-me', description: '' }))).id;
      const op = await call(server, 'POST', `/api/invocations/${invocationId}/execute/`, bearer(operator.token), undefined, { prefer: 'respond-async' });
      expect(op.status).toBe(202);
      opId = (await json(op)).id;
    }, 60_000);
    afterAll(() => agent?.ws.terminate());

    it('records created_by on the operation', async () => {
      const op = await json(await call(server, 'GET', `/api/operations/${opId}/`, bearer(viewer.token)));
      expect(op.created_by).toBe('otto');
      // (Queued behind the run the fake agent never finishes: answered 202 at once.)
      const pac = await call(server, 'POST', '/api/pacs/query/', admin, { board_id: boardId }, { prefer: 'respond-async' });
      expect(pac.status).toBe(202);
      expect((await json(pac)).created_by).toBe('MM_API_TOKEN');
    });

    it('locks a deleted user out at once: tokens, sessions and open event streams', async () => {
      const doomed = await makeUser(server, 'dora', 'viewer', admin);
      secrets.push(doomed.password, doomed.token, doomed.cookie.split('=')[1]!);
      const byToken = await call(server, 'GET', `/api/operations/${opId}/events/`, bearer(doomed.token));
      const byCookie = await call(server, 'GET', `/api/operations/${opId}/events/`, { cookie: doomed.cookie });
      const bystander = await call(server, 'GET', `/api/operations/${opId}/events/`, bearer(viewer.token));
      for (const r of [byToken, byCookie, bystander]) expect(r.status).toBe(200);
      // Both streams are open and delivering (the replay of the operation's first events).
      const tokenReader = byToken.body!.getReader();
      expect((await tokenReader.read()).done).toBe(false);

      expect((await call(server, 'DELETE', `/api/users/${doomed.id}/`, bearer(boss.token))).status).toBe(204);
      expect(await readUntilEnd(byCookie, 5000)).toBe('ended');
      const tokenStreamEnded = await Promise.race([
        (async () => {
          try {
            while (!(await tokenReader.read()).done);
          } catch {
            /* cut */
          }
          return true;
        })(),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
      ]);
      expect(tokenStreamEnded).toBe(true);
      expect(await readUntilEnd(bystander, 500)).toBe('still open');
      expect((await call(server, 'GET', '/api/invocations/', bearer(doomed.token))).status).toBe(401);
      expect((await call(server, 'GET', '/api/invocations/', { cookie: doomed.cookie })).status).toBe(401);
      expect((await login(server, 'dora', doomed.password)).status).toBe(401);
      await db().delete(loginFailures);
    });

    it('cuts a stream whose token is revoked', async () => {
      const t = await json(await call(server, 'POST', '/api/tokens/', bearer(viewer.token), { name: 'stream' }));
      secrets.push(t.token);
      const stream = await call(server, 'GET', `/api/operations/${opId}/events/`, bearer(t.token));
      expect(stream.status).toBe(200);
      expect((await call(server, 'DELETE', `/api/tokens/${t.id}/`, bearer(viewer.token))).status).toBe(204);
      expect(await readUntilEnd(stream, 5000)).toBe('ended');
    });

    it('cuts a stream whose session was deleted elsewhere (another replica) within the re-check interval', async () => {
      const cookie = sessionCookie(await login(server, 'vera', viewer.password))!;
      secrets.push(cookie.split('=')[1]!);
      const stream = await call(server, 'GET', `/api/operations/${opId}/events/`, { cookie });
      expect(stream.status).toBe(200);
      const { secretHash } = await import('../src/auth/secrets.ts');
      // Straight in the database, as another replica's logout would: no local cut.
      await db().delete(sessions).where(eq(sessions.tokenHash, secretHash(cookie.split('=')[1]!)));
      expect(await readUntilEnd(stream, 15_000)).toBe('ended');
    }, 30_000);
  });

  describe('the audit log', () => {
    it('records every kind of change with user, action, target, address and request id', async () => {
      const inv = await json(await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), { name: 'audited', description: '' }, { 'x-request-id': 'req-audit-1' }));
      const boundary = 'mm-audit';
      const form = `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\nparameter\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.json"\r\nContent-Type: application/json\r\n\r\n{}\r\n--${boundary}--\r\n`;
      const up = await server.api(`/api/invocations/${inv.id}/upload/`, { method: 'POST', headers: { ...bearer(operator.token), 'content-type': `multipart/form-data; boundary=${boundary}` }, body: form });
      expect(up.status).toBe(201);
      expect((await call(server, 'DELETE', `/api/invocations/${inv.id}/files/parameter/`, bearer(operator.token))).status).toBe(204);
      expect((await call(server, 'DELETE', `/api/invocations/${inv.id}/`, bearer(operator.token))).status).toBe(204);
      const script = await json(await call(server, 'POST', '/api/device-scripts/', bearer(boss.token), { name: 'cam', device_type: 'webcam', description: '', script_filename: 'cam.py', remote_dir: '/opt/cam', port: 9000, version: '1.0.0' }));
      expect((await call(server, 'PATCH', `/api/device-scripts/${script.id}/`, bearer(boss.token), { version: '1.0.1' })).status).toBe(200);
      expect((await call(server, 'DELETE', `/api/device-scripts/${script.id}/`, bearer(boss.token))).status).toBe(204);
      const b = await json(await call(server, 'POST', '/api/boards/', bearer(boss.token), { name: 'short-lived' }));
      secrets.push(b.token);
      expect((await call(server, 'DELETE', `/api/boards/${b.id}/`, bearer(boss.token))).status).toBe(204);
      await login(server, 'vera', 'wrong-password', { 'x-forwarded-for': '198.51.100.7' });
      await db().delete(loginFailures);

      const all = await json(await call(server, 'GET', '/api/audit/?limit=1000', bearer(boss.token)));
      const actions = new Set(all.events.map((e: { action: string }) => e.action));
      for (const a of [
        'invocation.create',
        'invocation.file.upload',
        'invocation.file.delete',
        'invocation.delete',
        'invocation.execute',
        'pac.query',
        'device_script.create',
        'device_script.update',
        'device_script.delete',
        'board.create',
        'board.delete',
        'user.create',
        'user.update',
        'user.delete',
        'token.create',
        'token.revoke',
        'auth.login',
        'auth.logout',
        'auth.login_failed',
        'auth.login_throttled',
      ]) {
        expect(actions, a).toContain(a);
      }
      expect(all.total).toBe(all.events.length);
      const created = all.events.find((e: { request_id: string }) => e.request_id === 'req-audit-1');
      expect(created).toMatchObject({ user: 'otto', user_id: operator.id, action: 'invocation.create', target: `invocation ${inv.id}` });
      expect(created.ip).toMatch(/127\.0\.0\.1|::1/);
      const failed = all.events.find((e: { action: string; ip: string }) => e.action === 'auth.login_failed' && e.ip === '198.51.100.7');
      expect(failed).toMatchObject({ user: null, target: 'vera' });
      // Reads are not changes.
      expect(actions).not.toContain('invocation.list');
    });

    it('filters by user, action and since, and pages', async () => {
      const byUser = await json(await call(server, 'GET', '/api/audit/?user=ada', bearer(boss.token)));
      expect(byUser.total).toBeGreaterThan(0);
      expect(byUser.events.every((e: { user: string }) => e.user === 'ada')).toBe(true);
      const byAction = await json(await call(server, 'GET', '/api/audit/?action=board.create', bearer(boss.token)));
      expect(byAction.total).toBe(2);
      const page = await json(await call(server, 'GET', '/api/audit/?limit=2&offset=1', bearer(boss.token)));
      const full = await json(await call(server, 'GET', '/api/audit/?limit=3', bearer(boss.token)));
      expect(page.events.map((e: { id: number }) => e.id)).toEqual(full.events.slice(1, 3).map((e: { id: number }) => e.id));
      const future = await json(await call(server, 'GET', `/api/audit/?since=${new Date(Date.now() + 60_000).toISOString()}`, bearer(boss.token)));
      expect(future).toEqual({ events: [], total: 0 });
      expect((await call(server, 'GET', '/api/audit/?since=yesterday', bearer(boss.token))).status).toBe(400);
      expect((await call(server, 'GET', '/api/audit/', bearer(operator.token))).status).toBe(403);
    });
  });

  it('holds no password, token or session cookie in clear in any table', async () => {
    const tables = rowsOf<{ table_name: string }>(
      await db().execute(sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`),
    ).map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(['users', 'api_tokens', 'sessions', 'audit_events', 'boards']));
    expect(secrets.length).toBeGreaterThan(20);
    const leaks: string[] = [];
    for (const table of tables) {
      const rows = rowsOf<{ j: string }>(await db().execute(sql.raw(`select row_to_json(t)::text as j from "${table}" t`)));
      const text = rows.map((r) => r.j).join('\n');
      for (const s of secrets) if (text.includes(s)) leaks.push(`${table}: ${s.slice(0, 6)}…`);
    }
    expect(leaks).toEqual([]);
    // And the passwords are scrypt hashes with their parameters.
    const hashes = rowsOf<{ password_hash: string }>(await db().execute(sql`select password_hash from users`));
    for (const h of hashes) expect(h.password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  });
});
