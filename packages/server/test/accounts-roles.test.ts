import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute, ROUTE_ROLES, type Access } from '../src/auth/route-roles.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, makeUser, type TestUser } from './support/accounts.ts';

/**
 * Every route of the OpenAPI document has a role in the one route-role map, and a user one
 * role lower gets 403 `forbidden` on it (viewer routes: no credentials → 401).
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/**
 * Map entries for routes not served yet (none today: the uploads, attach-by-digest and
 * metrics routes are all in). Any other map entry with no documented route is stale and
 * fails the test.
 */
const PENDING = new Set<string>([]);
/** Served but not in the document (the document itself, the docs page's files). */
const UNDOCUMENTED = new Set(['GET /api/openapi.json', 'GET /api/docs/assets/{file}']);
/** Methods the proxy route serves beyond the documented five. */
const PROXY_EXTRA = new Set(['HEAD /api/device-scripts/{id}/proxy/{path}', 'OPTIONS /api/device-scripts/{id}/proxy/{path}']);

/** A concrete path for a documented one: each parameter replaced by a value of its kind. */
function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'kind') return 'parameter';
    if (name === 'path') return 'some/where';
    if (name === 'file') return 'x.js';
    return path.startsWith('/api/invocations/') || path.startsWith('/api/operations/') ? '1' : '00000000-0000-4000-8000-000000000000';
  });
}

/**
 * The contract's role list, written as its rules (independently of the map): viewers read
 * everything but users and the audit log; operators also change invocations and their files,
 * start and cancel work, query PACs and drive scripts; admins the rest.
 */
function contractRole(method: string, path: string): Access {
  // Signing in is for anyone: with a password, or with a token (the dashboard's token sign-in).
  // Enrolling: the provisioning key in the body is the credential.
  if (path.startsWith('/api/downloads/')) return 'public';
  if (['/api/health/', '/api/agent/connect/', '/api/agent/enroll/', '/api/auth/login/', '/api/auth/token-login/'].includes(path)) return 'public';
  if (path.startsWith('/api/users/') || path.startsWith('/api/audit/') || path.startsWith('/api/provisioning-keys/')) return 'admin';
  // Fleets: health checks are admin's (reading them too); running a board's checks now is an operator's.
  if (path.startsWith('/api/health-checks/')) return 'admin';
  // Webhooks send fleet data where their subscription says and hold signing secrets: admin's, reading too.
  if (path.startsWith('/api/webhooks/')) return 'admin';
  if (path === '/api/boards/{id}/health-check/') return 'operator';
  // Terminals: an operator holding the board's reservation (or an admin, checked by the
  // terminal service); the sessions and their recordings are admin's.
  if (path === '/api/boards/{id}/terminal/') return 'operator';
  if (path.startsWith('/api/terminal-sessions/')) return 'admin';
  // Power: an admin, or the reservation holder (an operator; the power service checks the lease).
  if (path === '/api/boards/{id}/power/') return 'operator';
  // Accelerated apps: operators load and unload them; installing one is an admin's.
  if (path === '/api/apps/load/' || path === '/api/apps/unload/') return 'operator';
  // Reservations: operators reserve, renew and release (the holder's own, which the service checks).
  if (path.startsWith('/api/reservations/') && method !== 'GET') return 'operator';
  // Results: operators keep and delete baselines; anyone who reads may compare.
  if (path.startsWith('/api/baselines/') && method !== 'GET') return 'operator';
  if (path === '/api/comparisons/') return 'viewer';
  if (path.startsWith('/api/auth/') || path.startsWith('/api/tokens/')) return 'viewer';
  // Every call of the proxy and of the tus upload protocol (HEAD asks for an upload's offset).
  if (path.startsWith('/api/device-scripts/{id}/proxy/') || path.startsWith('/api/uploads/')) return 'operator';
  if (method === 'GET' || method === 'HEAD') return 'viewer';
  if (path.startsWith('/api/invocations/')) return 'operator';
  if (path === '/api/operations/{id}/cancel/' || path === '/api/pacs/query/') return 'operator';
  // Rollouts: an operator may run an invocation on many boards; the kinds that change boards
  // need an admin, which the service checks (it depends on the body or the rollout).
  if (path.startsWith('/api/rollouts/')) return 'operator';
  // Device scripts on the board: operators start, stop and restart them (admins deploy).
  if (/^\/api\/device-scripts\/\{id\}\/(start|stop|restart)\/$/.test(path)) return 'operator';
  return 'admin';
}

const LOWER: Record<Access, string | null> = { public: null, viewer: null, operator: 'viewer', admin: 'operator' };

describe('the route-role map', () => {
  it('matches literal paths before templated ones and covers HEAD by GET', () => {
    expect(matchRoute('POST', '/api/invocations/create/')?.route.path).toBe('/api/invocations/create/');
    expect(matchRoute('DELETE', '/api/invocations/7/')?.route.access).toBe('operator');
    expect(matchRoute('HEAD', '/api/invocations/7/video/')?.route.access).toBe('viewer');
    expect(matchRoute('POST', '/api/device-scripts/x/proxy/motor/forward')?.route.access).toBe('operator');
    expect(matchRoute('GET', '/api/videos/results/a/b/c.mp4')?.route.access).toBe('viewer');
    expect(matchRoute('POST', '/api/nothing/')).toBeUndefined();
  });
});

describe.each(dbKinds)('roles on every route of the OpenAPI document (%s database)', (kind) => {
  let server: TestServer;
  let documented: Array<{ method: string; path: string }>;
  const users: Record<string, TestUser> = {};

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN });
    const doc = await json(await server.api('/api/openapi.json', { headers: bearer(ADMIN_TOKEN) }));
    documented = [];
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const m of METHODS) if (item[m]) documented.push({ method: m.toUpperCase(), path: p });
    }
    for (const role of ['viewer', 'operator', 'admin']) users[role] = await makeUser(server, `${role}-user`, role);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('gives every documented route exactly its own map entry', () => {
    expect(documented.length).toBeGreaterThan(30);
    const missing = documented.filter((r) => matchRoute(r.method, concrete(r.path))?.route.path !== r.path).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it("gives each route the role the contract's role list says", () => {
    const wrong = documented
      .map((r) => ({ ...r, have: matchRoute(r.method, concrete(r.path))?.route.access, want: contractRole(r.method, r.path) }))
      .filter((r) => r.have !== r.want)
      .map((r) => `${r.method} ${r.path}: ${r.have} (contract: ${r.want})`);
    expect(wrong).toEqual([]);
    // The entries ahead of their routes too.
    for (const k of PENDING) {
      const [method, path] = k.split(' ') as [string, string];
      expect(matchRoute(method, concrete(path))?.route.access, k).toBe(contractRole(method, path));
    }
  });

  it('has no map entry without a route', () => {
    const doc = new Set(documented.map((r) => `${r.method} ${r.path}`));
    const stale = ROUTE_ROLES.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).filter(
      (k) => !doc.has(k) && !PENDING.has(k) && !UNDOCUMENTED.has(k) && !PROXY_EXTRA.has(k) && !(k.startsWith('HEAD ') && doc.has(k.replace('HEAD', 'GET'))),
    );
    expect(stale).toEqual([]);
  });

  it('refuses a user one role lower with 403 forbidden, and anonymous callers with 401', async () => {
    const wrong: string[] = [];
    for (const r of documented) {
      const access = matchRoute(r.method, concrete(r.path))!.route.access;
      if (access === 'public') continue;
      const lower = LOWER[access];
      const res = await server.api(concrete(r.path), { method: r.method, headers: lower ? bearer(users[lower]!.token) : {} });
      const body = res.status >= 400 && r.method !== 'HEAD' ? await json(res) : {};
      const want = lower ? [403, 'forbidden'] : [401, 'unauthorized'];
      if (res.status !== want[0] || (r.method !== 'HEAD' && body.code !== want[1])) wrong.push(`${r.method} ${r.path} as ${lower ?? 'nobody'}: ${res.status} ${body.code}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it('lets the role itself (and the ones above it) through', async () => {
    const wrong: string[] = [];
    for (const r of documented) {
      const access = matchRoute(r.method, concrete(r.path))!.route.access;
      if (access === 'public') continue;
      for (const role of ['viewer', 'operator', 'admin'].slice(['viewer', 'operator', 'admin'].indexOf(access))) {
        const res = await server.api(concrete(r.path), { method: r.method, headers: bearer(users[role]!.token), signal: AbortSignal.timeout(20_000) });
        // Past auth the dummy ids name nothing (404) or the empty body is refused (4xx): anything but 401/403.
        if (res.status === 401 || res.status === 403) wrong.push(`${r.method} ${r.path} as ${role}: ${res.status}`);
        await res.body?.cancel();
      }
    }
    expect(wrong).toEqual([]);
  }, 180_000);
});
