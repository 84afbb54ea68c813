import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import { documentedRoutes, normalisePath } from '../support/openapi-routes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

/**
 * docs/api.md is held to the server's OpenAPI document: every route it names exists there,
 * and every route there is named in it. A route is named as a code span
 * `METHOD /api/...`, where METHOD is an HTTP method, `ANY` (every method of the path) or
 * several joined by `/` (`GET/POST /api/boards/`), and `<name>` is a path parameter.
 */

const API_DOC = path.resolve(import.meta.dirname, '../../docs/api.md');

/** The document itself is served but is not a path of itself. */
const SELF = 'GET /api/openapi.json';

const ROUTE_SPAN = /`((?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|ANY)(?:\/(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS))*) (\/api\/[^`\s]*)`/g;

interface NamedRoute {
  method: string;
  path: string;
}

function routesNamedIn(markdown: string): NamedRoute[] {
  const named: NamedRoute[] = [];
  for (const m of markdown.matchAll(ROUTE_SPAN)) {
    for (const method of m[1]!.split('/')) named.push({ method, path: normalisePath(m[2]!) });
  }
  return named;
}

describe('docs/api.md', () => {
  let server: TestServer;
  let documented: Map<string, Set<string>>;
  let named: NamedRoute[];

  beforeAll(async () => {
    server = await startTestServer('embedded');
    const res = await server.api('/api/openapi.json');
    expect(res.status).toBe(200);
    documented = documentedRoutes(await json(res));
    named = routesNamedIn(await fs.readFile(API_DOC, 'utf8'));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reads the route syntax it documents', () => {
    expect(routesNamedIn('`GET /api/invocations/<id>/files/<kind>/` and `GET/POST /api/boards/`')).toEqual([
      { method: 'GET', path: '/api/invocations/{}/files/{}/' },
      { method: 'GET', path: '/api/boards/' },
      { method: 'POST', path: '/api/boards/' },
    ]);
    expect(routesNamedIn('`ANY /api/device-scripts/<id>/proxy/<path>` but not `GET /stream` or `GET`')).toEqual([
      { method: 'ANY', path: '/api/device-scripts/{}/proxy/{}' },
    ]);
  });

  it('names only routes the OpenAPI document has', () => {
    expect(named.length).toBeGreaterThan(20);
    const phantom = named
      .filter((r) => `${r.method} ${r.path}` !== SELF)
      .filter((r) => {
        const methods = documented.get(r.path);
        return !methods || (r.method === 'ANY' ? methods.size === 0 : !methods.has(r.method));
      })
      .map((r) => `${r.method} ${r.path}`);
    expect([...new Set(phantom)].sort()).toEqual([]);
  });

  it('names every route of the OpenAPI document', () => {
    const namedKeys = new Set(named.map((r) => `${r.method} ${r.path}`));
    const anyPaths = new Set(named.filter((r) => r.method === 'ANY').map((r) => r.path));
    const missing: string[] = [];
    for (const [p, methods] of documented) {
      for (const m of methods) if (!namedKeys.has(`${m} ${p}`) && !anyPaths.has(p)) missing.push(`${m} ${p}`);
    }
    expect(missing.sort()).toEqual([]);
  });
});
