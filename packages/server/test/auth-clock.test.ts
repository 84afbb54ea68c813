/**
 * Expiries and limits on the server's injected Clock (a ManualClock), not the wall clock:
 * the sign-in limit's window, a session's idle time, a personal token's expiry, and a
 * resumable upload's expiry all pass when the clock is moved on, without waiting.
 */
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../src/auth/login-limiter.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, login, makeUser, sessionCookie, type TestUser } from './support/accounts.ts';

const IDLE_S = 3600;
const UPLOAD_EXPIRY_S = 600;
const TUS = { 'tus-resumable': '1.0.0' };

describe.each(dbKinds)('expiries and limits on the server clock (%s database)', (kind) => {
  let server: TestServer;
  let clock: ManualClock;
  let user: TestUser;

  beforeAll(async () => {
    // The hours this test moves on are jumps: each periodic job runs once per jump, not once per period lived through.
    clock = new ManualClock(Date.now(), { jumps: true });
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN, MM_SESSION_IDLE_S: String(IDLE_S), MM_UPLOAD_EXPIRY_S: String(UPLOAD_EXPIRY_S) }, { clock });
    user = await makeUser(server, 'clocky', 'operator');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('lifts the sign-in limit once its window has passed on the clock', async () => {
    for (let i = 0; i < LOGIN_LIMITS.perUsername; i++) expect((await login(server, 'clocky', 'wrong-password')).status).toBe(401);
    const limited = await login(server, 'clocky', user.password);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(LOGIN_LIMITS.windowMs / 1000 - 60);
    expect(retryAfter).toBeLessThanOrEqual(LOGIN_LIMITS.windowMs / 1000);
    // Half the window on: still limited, and the wait counts down with the clock.
    await clock.advanceAsync(LOGIN_LIMITS.windowMs / 2);
    const still = await login(server, 'clocky', user.password);
    expect(still.status).toBe(429);
    expect(Number(still.headers.get('retry-after'))).toBeLessThanOrEqual(retryAfter - LOGIN_LIMITS.windowMs / 2000 + 1);
    await clock.advanceAsync(LOGIN_LIMITS.windowMs / 2 + 1000);
    const res = await login(server, 'clocky', user.password);
    expect(res.status).toBe(200);
    user.cookie = sessionCookie(res)!;
  });

  it('ends a session idle for MM_SESSION_IDLE_S of the clock; use keeps it alive', async () => {
    const me = () => call(server, 'GET', '/api/auth/me/', { cookie: user.cookie });
    expect((await me()).status).toBe(200);
    await clock.advanceAsync((IDLE_S - 120) * 1000);
    // Used before its idle time is up: the idle time starts again.
    expect((await me()).status).toBe(200);
    await clock.advanceAsync((IDLE_S - 120) * 1000);
    expect((await me()).status).toBe(200);
    await clock.advanceAsync((IDLE_S + 1) * 1000);
    const gone = await me();
    expect(gone.status).toBe(401);
  });

  it("checks a personal token's expiry against the clock, at creation and at use", async () => {
    // An hour from the wall clock's now is in the past once the server's clock is two hours on.
    await clock.advanceAsync(2 * 3600_000);
    const cookie = sessionCookie(await login(server, 'clocky', user.password))!;
    const past = await call(server, 'POST', '/api/tokens/', { cookie }, { name: 'late', expires_at: new Date(Date.now() + 3600_000).toISOString() });
    expect(past.status).toBe(400);
    expect(JSON.stringify(await json(past))).toContain('must be in the future');
    const made = await call(server, 'POST', '/api/tokens/', { cookie }, { name: 'hour', expires_at: new Date(clock.now() + 3600_000).toISOString() });
    expect(made.status).toBe(201);
    const { token } = await json(made);
    expect((await call(server, 'GET', '/api/auth/me/', bearer(token))).status).toBe(200);
    await clock.advanceAsync(3600_000 + 1000);
    expect((await call(server, 'GET', '/api/auth/me/', bearer(token))).status).toBe(401);
  });

  it('lets a resumable upload expire after MM_UPLOAD_EXPIRY_S of the clock', async () => {
    const admin = bearer(ADMIN_TOKEN);
    const inv = await json(await call(server, 'POST', '/api/invocations/create/', admin, { name: 'expiring', description: '' }));
    const meta = `invocation_id ${Buffer.from(String(inv.id)).toString('base64')},file_type ${Buffer.from('weights').toString('base64')},filename ${Buffer.from('w.bin').toString('base64')}`;
    const created = await server.api('/api/uploads/', { method: 'POST', headers: { ...admin, ...TUS, 'upload-length': '10', 'upload-metadata': meta } });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    const head = () => server.api(location, { method: 'HEAD', headers: { ...admin, ...TUS } });
    expect((await head()).status).toBe(200);
    expect(Date.parse(created.headers.get('upload-expires') ?? '')).toBe(Math.floor((clock.now() + UPLOAD_EXPIRY_S * 1000) / 1000) * 1000);
    await clock.advanceAsync((UPLOAD_EXPIRY_S - 1) * 1000);
    expect((await head()).status).toBe(200);
    await clock.advanceAsync(2000);
    expect((await head()).status).toBe(404);
  });
});
