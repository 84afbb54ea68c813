import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { documentedRoutes, HTTP_METHODS as METHODS, normalisePath } from '../../../test/support/openapi-routes.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

/**
 * The OpenAPI document must describe exactly the routes the app serves under /api/:
 * every served route documented, every documented route served. Routes are compared as
 * method + path with every path parameter (`:id`, `:id{[0-9]+}`, `{id}`, a trailing `*`)
 * reduced to `{}`.
 */

/** Served but deliberately not documented: the document itself and the docs page's static files. */
const UNDOCUMENTED = new Set(['GET /api/openapi.json', 'GET /api/docs/assets/{}']);

/** Middleware mounts (`app.use`) appear in `app.routes` as ALL routes; they are not endpoints. */
const MIDDLEWARE_PATHS = new Set(['*', '/*', '/api/*', '/api/uploads/*']);

describe('the OpenAPI document', () => {
  let server: TestServer;
  let served: Array<{ method: string; path: string }>;
  let documented: Map<string, Set<string>>;

  beforeAll(async () => {
    server = await startTestServer('embedded');
    served = server.app.routes
      .filter((r) => r.path.startsWith('/api/') && !(r.method === 'ALL' && MIDDLEWARE_PATHS.has(r.path)))
      .map((r) => ({ method: r.method.toUpperCase(), path: normalisePath(r.path) }))
      .filter((r) => !UNDOCUMENTED.has(`${r.method} ${r.path}`));
    const doc = await json(await server.api('/api/openapi.json'));
    documented = documentedRoutes(doc);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('normalises both spellings of a path the same way', () => {
    expect(normalisePath('/api/invocations/:id/files/:kind/')).toBe('/api/invocations/{}/files/{}/');
    expect(normalisePath('/api/invocations/{id}/files/{kind}/')).toBe('/api/invocations/{}/files/{}/');
    expect(normalisePath('/api/operations/:id{[0-9]+}/')).toBe('/api/operations/{}/');
    expect(normalisePath('/api/device-scripts/:id/proxy/*')).toBe('/api/device-scripts/{}/proxy/{}');
  });

  it('documents every route the app serves under /api/', () => {
    expect(served.length).toBeGreaterThan(0);
    const missing = served
      .filter((r) => {
        const methods = documented.get(r.path);
        // An ALL route (e.g. a proxy) is documented when its path is, with any method.
        return !methods || (r.method === 'ALL' ? methods.size === 0 : !methods.has(r.method));
      })
      .map((r) => `${r.method} ${r.path}`);
    expect([...new Set(missing)].sort()).toEqual([]);
  });

  it('serves every route the document describes', () => {
    const servedKeys = new Set(served.map((r) => `${r.method} ${r.path}`));
    const allPaths = new Set(served.filter((r) => r.method === 'ALL').map((r) => r.path));
    const phantom: string[] = [];
    for (const [p, methods] of documented) {
      for (const m of methods) {
        // Hono answers HEAD with the GET handler.
        const ok = servedKeys.has(`${m} ${p}`) || allPaths.has(p) || (m === 'HEAD' && servedKeys.has(`GET ${p}`));
        if (!ok) phantom.push(`${m} ${p}`);
      }
    }
    expect(phantom.sort()).toEqual([]);
  });

  it('describes every documented operation with at least one response', async () => {
    const doc = await json(await server.api('/api/openapi.json'));
    expect(doc.openapi).toBe('3.1.0');
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, { responses?: object }>>)) {
      for (const m of METHODS) {
        if (item[m]) expect(Object.keys(item[m]!.responses ?? {}), `${m} ${p}`).not.toHaveLength(0);
      }
    }
  });

  it('serves the agent link as an AsyncAPI document, itself documented', async () => {
    const res = await server.api('/api/agent/asyncapi/');
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.channels.link.address).toBe('/api/agent/connect/');
    expect(documented.get('/api/agent/asyncapi/')?.has('GET')).toBe(true);
  });
});
