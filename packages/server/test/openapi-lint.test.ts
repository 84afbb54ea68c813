/**
 * The served OpenAPI document against independent tools (issue 27): Redocly's linter
 * (`recommended` rules; errors fail), patterns any validator can use, and real answers of
 * the running server validated with Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses) against
 * the document's own schemas, problem+json errors included. Every operation the document
 * holds is called (read from the document, so a route added later is covered without a
 * change here); openapi.test.ts holds the document to the routes the app serves.
 */
import ajv2020 from '@redocly/ajv/dist/2020.js';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';

// A CommonJS module: its class is the `default` of module.exports.
const Ajv2020 = ajv2020.default;

type Param = { name: string; in: string; required?: boolean; schema?: { type?: string; format?: string; pattern?: string; enum?: unknown[] } };
type Doc = {
  paths: Record<
    string,
    Record<string, { operationId?: string; security?: unknown[]; parameters?: Param[]; responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }> }>
  >;
};
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

describe('the served OpenAPI document, linted and held against real answers', () => {
  let server: TestServer;
  let doc: Doc;
  let ajv: InstanceType<typeof Ajv2020>;
  beforeAll(async () => {
    server = await startTestServer('embedded');
    doc = (await json(await server.api('/api/openapi.json'))) as Doc;
    // OpenAPI's own keywords (example, …) are not JSON Schema's: not strict.
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ ...doc, $id: 'openapi.json' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('has no errors under Redocly’s recommended rules (trailing slashes are the contract)', async () => {
    const config = await createConfig({
      extends: ['recommended'],
      // API.md: every path ends with a slash.
      rules: { 'no-path-trailing-slash': 'off', 'operation-operationId': 'error', 'operation-operationId-unique': 'error' },
    });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('carries only patterns a validator can use (no leaked JavaScript flags), and ids match them', async () => {
    const text = JSON.stringify(doc);
    const patterns = [...text.matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(patterns.length).toBeGreaterThan(0);
    for (const p of patterns) {
      expect(p, p).not.toMatch(/\$\/[a-z]+$/);
      expect(() => new RegExp(p, 'u'), p).not.toThrow();
    }
    const scripts = await json(await server.api('/api/device-scripts/'));
    const id = scripts.scripts[0].id as string;
    const idParam = (doc.paths['/api/device-scripts/{id}/']!.get as unknown as { parameters: Array<{ name: string; schema: { pattern?: string } }> }).parameters.find((p) => p.name === 'id')!;
    if (idParam.schema.pattern) expect(new RegExp(idParam.schema.pattern, 'u').test(id)).toBe(true);
    expect((await server.api(`/api/device-scripts/${id}/`)).status).toBe(200);
  });

  it('documents an operationId, error bodies as problem+json and 401 on every authenticated operation', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (typeof op !== 'object' || !op || !('responses' in op)) continue;
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        if (!(Array.isArray(op.security) && op.security.length === 0)) expect(op.responses['401'], `401 of ${method} ${path}`).toBeDefined();
        for (const [status, r] of Object.entries(op.responses)) {
          // The health check's 503 is its own JSON (what is down), as probes read it.
          if (Number(status) >= 400 && `${status} ${method} ${path}` !== '503 get /api/health/') {
            expect(r.content?.['application/problem+json'], `${status} of ${method} ${path}`).toBeDefined();
          }
        }
      }
    }
    expect(doc.paths['/api/uploads/']!.post!.responses['201']!.headers).toHaveProperty('Location');
    expect(doc.paths['/api/uploads/{id}/']!.patch!.responses['204']!.headers).toHaveProperty('Upload-Offset');
    expect(doc.paths['/api/invocations/{id}/files/{kind}/']!.get!.responses['206']!.headers).toHaveProperty('Content-Range');
    expect(doc.paths['/api/invocations/{id}/files/{kind}/']!.get!.responses['206']!.content).toBeDefined();
  });

  /** Validates a real answer's body against the schema the document gives for its path, method and status. */
  async function check(res: Response, path: string, method: string) {
    const status = String(res.status);
    const response = doc.paths[path]?.[method]?.responses[status];
    expect(response, `${method} ${path} documents ${status}`).toBeDefined();
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!;
    expect(Object.keys(response!.content ?? {}), `${method} ${path} ${status} documents ${type}`).toContain(type);
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}` });
    const body = await res.json();
    expect(validate(body), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  /** A value of the parameter's type that names nothing: a GET with it answers an error the document must describe. */
  function madeUp(param: Param): string {
    const schema = param.schema ?? {};
    if (schema.enum?.length) return String(schema.enum[0]);
    if (schema.type === 'integer' || schema.type === 'number') return '2147483000';
    if (schema.format === 'uuid' || schema.pattern?.includes('[0-9a-f]{8}')) return '00000000-0000-4000-8000-000000000000';
    return 'no-such-thing';
  }

  /** The `id` of the first item of the first list in a JSON answer (`{ boards: [{ id }] }` → that id). */
  function firstId(body: unknown): string | undefined {
    if (!body || typeof body !== 'object') return undefined;
    for (const value of Array.isArray(body) ? [body] : Object.values(body)) {
      const item = Array.isArray(value) ? (value[0] as { id?: unknown } | undefined) : undefined;
      if (item && (typeof item.id === 'string' || typeof item.id === 'number')) return String(item.id);
    }
    return undefined;
  }

  it('every GET route of the document, with real ids where its list has one and made-up ones elsewhere, answers as documented', async () => {
    // Something in the lists, so detail routes answer 200 with a body to check.
    await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'every route', description: '' }) });
    await registerBoard(server, 'every-route-board');
    const listIds = new Map<string, string | undefined>();
    const idFromList = async (listPath: string) => {
      if (!listIds.has(listPath)) {
        const res = doc.paths[listPath]?.get ? await server.api(listPath) : undefined;
        listIds.set(listPath, res?.headers.get('content-type')?.startsWith('application/json') ? firstId(await res.json()) : undefined);
      }
      return listIds.get(listPath);
    };

    const routes = Object.entries(doc.paths).filter(([, item]) => item.get);
    expect(routes.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const [template, item] of routes) {
      const op = item.get!;
      const params = op.parameters ?? [];
      let url = '';
      for (const [i, part] of template.split(/(\{[^}]+\})/).entries()) {
        const name = /^\{(.+)\}$/.exec(part)?.[1];
        if (!name) url += part;
        else {
          const param = params.find((p) => p.in === 'path' && p.name === name) ?? { name, in: 'path' };
          // The first parameter after a listed collection is one of its items when there are any.
          const real = i === 1 ? await idFromList(url) : undefined;
          url += encodeURIComponent(real ?? madeUp(param));
        }
      }
      const query = new URLSearchParams(params.filter((p) => p.in === 'query' && p.required).map((p): [string, string] => [p.name, madeUp(p)]));
      if (query.size) url += `?${query}`;
      const res = await server.api(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
      const problem = await answerProblem(res, template, 'get', `GET ${url}`);
      if (problem) wrong.push(problem);
    }
    expect(wrong).toEqual([]);
  });

  it('every other operation of the document, with made-up ids and an empty JSON body, answers as documented', async () => {
    const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
      (['post', 'put', 'patch', 'delete'] as const).filter((m) => item[m]).map((method) => ({ template, method, op: item[method]! })),
    );
    expect(operations.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const { template, method, op } of operations) {
      const params = op.parameters ?? [];
      // Made-up ids only: nothing that exists is changed or removed.
      const url = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(madeUp(params.find((p) => p.in === 'path' && p.name === name) ?? { name, in: 'path' })));
      const res = await server.api(url, {
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json' },
        body: method === 'delete' ? undefined : '{}',
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
      const problem = await answerProblem(res, template, method, `${method.toUpperCase()} ${url}`);
      if (problem) wrong.push(problem);
    }
    expect(wrong).toEqual([]);
  });

  /**
   * What is wrong with an answer by the document (undefined when nothing): its status and
   * type must be documented for the operation, and a JSON body must fit the schema given there.
   * Streams, files and pages are held to their type only (their bodies are not read).
   */
  async function answerProblem(res: Response, template: string, method: string, request: string): Promise<string | undefined> {
    const where = `${request} (${template}) answered ${res.status}`;
    const response = doc.paths[template]![method]!.responses[String(res.status)];
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const documentedTypes = Object.keys(response?.content ?? {});
    const schema = response?.content?.[type]?.schema;
    if (!response || documentedTypes.length === 0 || !documentedTypes.includes(type) || !/json$/.test(type) || !schema) {
      await res.body?.cancel();
      if (!response) return `${where}: not documented`;
      if (documentedTypes.length > 0 && !documentedTypes.includes(type)) return `${where} as ${type}: documents ${documentedTypes.join(', ')}`;
      return undefined;
    }
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer('paths', template, method, 'responses', String(res.status), 'content', type, 'schema')}` });
    return validate(await res.json()) ? undefined : `${where}: ${JSON.stringify(validate.errors)}`;
  }

  it('real answers match the document’s schemas, errors included', async () => {
    const post = (p: string, body: unknown) => server.api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const created = await post('/api/invocations/create/', { name: 'schema check', description: '' });
    const invocation = await json(created.clone());
    await check(created, '/api/invocations/create/', 'post');
    await check(await server.api('/api/invocations/'), '/api/invocations/', 'get');
    await check(await server.api(`/api/invocations/${invocation.id}/`), '/api/invocations/{id}/', 'get');
    await check(await server.api('/api/invocations/999999/'), '/api/invocations/{id}/', 'get');
    await check(await post('/api/invocations/create/', { name: '' }), '/api/invocations/create/', 'post');
    await registerBoard(server, 'schema-board');
    await check(await server.api('/api/boards/'), '/api/boards/', 'get');
    await check(await server.api('/api/device-scripts/'), '/api/device-scripts/', 'get');
    await check(await server.api('/api/operations/'), '/api/operations/', 'get');
    await check(await server.api('/api/health/'), '/api/health/', 'get');
    await check(await server.api('/api/videos/'), '/api/videos/', 'get');
  });
});
