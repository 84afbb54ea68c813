/**
 * Self-service accounts: changing one's own password (the other sessions end, this one
 * stays, tokens keep working) and an admin making a user with a generated password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../src/auth/login-limiter.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, login, makeUser, sessionCookie } from './support/accounts.ts';

describe.each(dbKinds)('self-service accounts (%s database)', (kind) => {
  let server: TestServer;
  const admin = bearer(ADMIN_TOKEN);
  const changePassword = (auth: Record<string, string>, body: unknown) => call(server, 'POST', '/api/auth/password/', auth, body);
  const me = async (auth: Record<string, string>) => (await call(server, 'GET', '/api/auth/me/', auth)).status;

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('changes my own password: 204, my other sessions end, this one stays, my tokens keep working', async () => {
    const u = await makeUser(server, 'paula', 'viewer');
    const second = sessionCookie(await login(server, 'paula', u.password))!;
    const res = await changePassword({ cookie: u.cookie }, { current_password: u.password, new_password: 'a-much-better-secret' });
    expect(res.status).toBe(204);
    expect(await me({ cookie: u.cookie })).toBe(200);
    expect(await me({ cookie: second })).toBe(401);
    expect(await me(bearer(u.token))).toBe(200);
    expect((await login(server, 'paula', u.password)).status).toBe(401);
    expect((await login(server, 'paula', 'a-much-better-secret')).status).toBe(200);
    const events = await json(await call(server, 'GET', '/api/audit/?action=user.password_change', admin));
    expect(events.events[0]).toMatchObject({ user: 'paula', target: `user ${u.id}` });
  });

  it('with a token, ends every session of mine', async () => {
    const u = await makeUser(server, 'tobias', 'operator');
    expect((await changePassword(bearer(u.token), { current_password: u.password, new_password: 'tobias-new-password' })).status).toBe(204);
    expect(await me({ cookie: u.cookie })).toBe(401);
    expect(await me(bearer(u.token))).toBe(200);
  });

  it('refuses a wrong current password (401 invalid_credentials) and a weak or empty new one (400 validation_failed), changing nothing', async () => {
    const u = await makeUser(server, 'wanda', 'viewer');
    const wrong = await changePassword({ cookie: u.cookie }, { current_password: 'not-my-password', new_password: 'another-fine-secret' });
    expect(wrong.status).toBe(401);
    expect(await json(wrong)).toMatchObject({ code: 'invalid_credentials' });
    for (const weak of ['', 'short', 'WANDA', 'wanda']) {
      const res = await changePassword({ cookie: u.cookie }, { current_password: u.password, new_password: weak });
      expect(res.status, weak).toBe(400);
      expect((await json(res)).code).toBe('validation_failed');
    }
    expect((await changePassword({ cookie: u.cookie }, { new_password: 'another-fine-secret' })).status).toBe(400);
    expect((await login(server, 'wanda', u.password)).status).toBe(200);
    expect(await me({ cookie: u.cookie })).toBe(200);
  });

  it('counts wrong current passwords as failed sign-ins (429 once the limit is reached)', async () => {
    const u = await makeUser(server, 'gus', 'viewer');
    for (let i = 0; i < LOGIN_LIMITS.perUsername; i++) {
      expect((await changePassword(bearer(u.token), { current_password: `guess-${i}-password`, new_password: 'whatever-new-one' })).status).toBe(401);
    }
    const limited = await changePassword(bearer(u.token), { current_password: u.password, new_password: 'whatever-new-one' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await login(server, 'gus', u.password)).status).toBe(429);
  });

  it('applies the same rule when an admin sets a password: not the user name', async () => {
    const made = await call(server, 'POST', '/api/users/', admin, { username: 'samesame', password: 'SameSame', role: 'viewer' });
    expect(made.status).toBe(400);
    expect((await json(made)).errors).toEqual([{ field: 'password', message: 'must not be the user name' }]);
    const u = await makeUser(server, 'carla1234', 'viewer');
    expect((await call(server, 'PATCH', `/api/users/${u.id}/`, admin, { password: 'CARLA1234' })).status).toBe(400);
    expect((await login(server, 'carla1234', u.password)).status).toBe(200);
  });

  it('refuses MM_API_TOKEN (no user, no password) with 403 user_required, and nobody with 401', async () => {
    const res = await changePassword(admin, { current_password: 'x', new_password: 'another-fine-secret' });
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('user_required');
    expect((await changePassword({}, { current_password: 'x', new_password: 'another-fine-secret' })).status).toBe(401);
  });

  it('lets an admin make a user without a password: the server generates one and answers it once', async () => {
    const res = await call(server, 'POST', '/api/users/', admin, { username: 'newbie', role: 'operator' });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({ username: 'newbie', role: 'operator' });
    expect(body.password).toMatch(/^[\w-]{20,}$/);
    expect((await login(server, 'newbie', body.password)).status).toBe(200);
    const again = await json(await call(server, 'GET', `/api/users/${body.id}/`, admin));
    expect(again).not.toHaveProperty('password');
  });
});
