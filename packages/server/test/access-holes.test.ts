/**
 * Holes of the second security review (issue 27) in people and access: the sign-in limit
 * dodged by spelling a name differently, framing and the security headers, two admins
 * demoting themselves at once, and an admin's hold on other users' tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../src/auth/login-limiter.ts';
import { dbKinds, skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, login, makeUser, type TestUser } from './support/accounts.ts';

describe.each(dbKinds)('access holes (%s database)', (kind) => {
  let server: TestServer;
  const admin = bearer(ADMIN_TOKEN);

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  describe('user names under one rule', () => {
    it('a locked user stays locked however the name is spelt (kİki, KIKI, full-width), and kİki is nobody', async () => {
      const kiki = await makeUser(server, 'kiki', 'viewer');
      for (let i = 0; i < LOGIN_LIMITS.perUsername; i++) expect((await login(server, 'kiki', `wrong-${i}-password`)).status).toBe(401);
      expect((await login(server, 'kiki', kiki.password)).status).toBe(429);
      // PostgreSQL's lower() folds İ to i; the rule's key (NFKC, then JavaScript's lower case) does not: no such user.
      expect((await login(server, 'kİki', kiki.password)).status).toBe(401);
      // Names that are kiki under the rule are kiki, and kiki is locked.
      expect((await login(server, 'KIKI', kiki.password)).status).toBe(429);
      expect((await login(server, 'ｋｉｋｉ', kiki.password)).status).toBe(429);
    });

    it('finds a user by a name that differs only in case or width, and counts its failures against that user', async () => {
      const u = await makeUser(server, 'Rosa', 'viewer');
      expect((await login(server, 'rosa', u.password)).status).toBe(200);
      expect((await login(server, 'ＲＯＳＡ', u.password)).status).toBe(200);
      // Failures under five spellings: one user, so the fifth locks it.
      for (const name of ['rosa', 'ROSA', 'Rosa', 'ｒｏｓａ', 'rOsA']) expect((await login(server, name, 'wrong-password')).status).toBe(401);
      expect((await login(server, 'Rosa', u.password)).status).toBe(429);
    });

    it('refuses to create names that change under the rule or are not plain, and a name taken in another spelling', async () => {
      for (const username of ['kİki', 'ｋｉｋｉ2', 'ﬁona', 'e\u0301lise']) {
        const res = await call(server, 'POST', '/api/users/', admin, { username, role: 'viewer' });
        expect(res.status, username).toBe(400);
        expect((await json(res)).code).toBe('validation_failed');
      }
      await makeUser(server, 'dora', 'viewer');
      const taken = await call(server, 'POST', '/api/users/', admin, { username: 'DORA', role: 'viewer' });
      expect(taken.status).toBe(409);
      expect((await json(taken)).code).toBe('username_taken');
    });
  });

  describe('security headers', () => {
    it('sends a Content-Security-Policy with frame-ancestors none, X-Frame-Options DENY, Referrer-Policy and nosniff everywhere', async () => {
      for (const [path, headers] of [
        ['/', {}],
        ['/invocations', { accept: 'text/html' }],
        ['/api/health/', {}],
        ['/api/invocations/', {}],
        ['/api/invocations/', admin],
        ['/api/docs/', admin],
      ] as const) {
        const res = await server.api(path, { headers });
        await res.body?.cancel();
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).toContain("script-src 'self'");
        expect(csp, path).not.toContain('unsafe-inline');
        expect(res.headers.get('x-frame-options'), path).toBe('DENY');
        expect(res.headers.get('referrer-policy'), path).toBe('same-origin');
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      }
    });

    it('serves the API docs page with no inline script (the policy would block it)', async () => {
      const page = await (await server.api('/api/docs/', { headers: admin })).text();
      expect(page).not.toMatch(/<script>(?!<\/script>)/);
      const init = await server.api('/api/docs/assets/init.js', { headers: admin });
      expect(init.status).toBe(200);
      expect(await init.text()).toContain('SwaggerUIBundle');
    });
  });

  describe("an admin and other users' tokens", () => {
    let owner: TestUser;
    let boss: TestUser;
    let peer: TestUser;
    beforeAll(async () => {
      owner = await makeUser(server, 'tina', 'operator');
      peer = await makeUser(server, 'theo', 'operator');
      boss = await makeUser(server, 'bianca', 'admin');
    });

    it("lists one user's tokens (?user_id) or everyone's (?all=1) for an admin only", async () => {
      const one = await json(await call(server, 'GET', `/api/tokens/?user_id=${owner.id}`, bearer(boss.token)));
      expect(one.total).toBe(1);
      expect(one.tokens[0]).toMatchObject({ user_id: owner.id, username: 'tina', name: 'tina-token' });
      expect(JSON.stringify(one)).not.toContain(owner.token);
      const all = await json(await call(server, 'GET', '/api/tokens/?all=1&limit=1000', bearer(boss.token)));
      expect(all.tokens.map((t: { username: string }) => t.username)).toEqual(expect.arrayContaining(['tina', 'theo', 'bianca']));
      expect(all.total).toBe(all.tokens.length);
      // Not for others: another user's tokens and everyone's need the admin role; one's own id is fine.
      for (const q of [`?user_id=${owner.id}`, '?all=1']) {
        const res = await call(server, 'GET', `/api/tokens/${q}`, bearer(peer.token));
        expect(res.status, q).toBe(403);
        expect((await json(res)).code).toBe('forbidden');
      }
      expect((await json(await call(server, 'GET', `/api/tokens/?user_id=${peer.id}`, bearer(peer.token)))).total).toBe(1);
    });

    it("revokes anyone's token as an admin (audited with its owner); another user gets 404", async () => {
      const { id } = (await json(await call(server, 'GET', `/api/tokens/?user_id=${owner.id}`, bearer(boss.token)))).tokens[0];
      const byPeer = await call(server, 'DELETE', `/api/tokens/${id}/`, bearer(peer.token));
      expect(byPeer.status).toBe(404);
      expect((await call(server, 'GET', '/api/auth/me/', bearer(owner.token))).status).toBe(200);
      expect((await call(server, 'DELETE', `/api/tokens/${id}/`, bearer(boss.token))).status).toBe(204);
      expect((await call(server, 'GET', '/api/auth/me/', bearer(owner.token))).status).toBe(401);
      const events = await json(await call(server, 'GET', '/api/audit/?action=token.revoke', bearer(boss.token)));
      expect(events.events[0]).toMatchObject({ user: 'bianca', target: `token ${id}`, detail: expect.objectContaining({ owner_id: owner.id }) });
    });

    it("resets a password and revokes the user's tokens in one request (revoke_tokens)", async () => {
      const u = await makeUser(server, 'ulla', 'viewer');
      const res = await call(server, 'PATCH', `/api/users/${u.id}/`, bearer(boss.token), { password: 'ulla-fresh-password', revoke_tokens: true });
      expect(res.status).toBe(200);
      expect((await call(server, 'GET', '/api/auth/me/', bearer(u.token))).status).toBe(401);
      expect((await call(server, 'GET', '/api/auth/me/', { cookie: u.cookie })).status).toBe(401);
      expect((await json(await call(server, 'GET', `/api/tokens/?user_id=${u.id}`, bearer(boss.token)))).total).toBe(0);
      const [event] = (await json(await call(server, 'GET', '/api/audit/?action=user.update', bearer(boss.token)))).events;
      expect(event).toMatchObject({ target: `user ${u.id}`, detail: expect.objectContaining({ password_changed: true, tokens_revoked: 1 }) });
      // Without the flag a reset keeps the tokens (as before).
      const v = await makeUser(server, 'vito', 'viewer');
      await call(server, 'PATCH', `/api/users/${v.id}/`, bearer(boss.token), { password: 'vito-fresh-password' });
      expect((await call(server, 'GET', '/api/auth/me/', bearer(v.token))).status).toBe(200);
    });
  });
});

describe.skipIf(skipWithoutRealDatabase('two admins demoting themselves at once'))('two admins demoting themselves at once (real PostgreSQL)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('postgres', { MM_API_TOKEN: ADMIN_TOKEN });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('one wins, the other gets 409 last_admin, never a 500 (a deadlock), round after round', async () => {
    const [a, b] = [await makeUser(server, 'admin-a', 'admin'), await makeUser(server, 'admin-b', 'admin')];
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(
        [a, b].map(async (u) => {
          const res = await call(server, 'PATCH', `/api/users/${u.id}/`, bearer(u.token), { role: 'viewer' });
          return { status: res.status, code: res.status === 200 ? null : (await json(res)).code };
        }),
      );
      expect(answers.map((x) => x.status).sort(), JSON.stringify(answers)).toEqual([200, 409]);
      expect(answers.find((x) => x.status === 409)!.code).toBe('last_admin');
      const users = await json(await call(server, 'GET', '/api/users/', bearer(ADMIN_TOKEN)));
      expect(users.users.filter((u: { role: string }) => u.role === 'admin')).toHaveLength(1);
      // The demoted one is an admin again for the next round.
      const demoted = answers[0]!.status === 200 ? a : b;
      expect((await call(server, 'PATCH', `/api/users/${demoted.id}/`, bearer(ADMIN_TOKEN), { role: 'admin' })).status).toBe(200);
    }
  }, 120_000);
});
