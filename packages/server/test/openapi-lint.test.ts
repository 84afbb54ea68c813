/**
 * The served OpenAPI document against independent tools (issue 27): Redocly's linter
 * (`recommended` rules; errors fail), patterns any validator can use, and real answers of
 * the running server validated with Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses) against
 * the document's own schemas, problem+json errors included.
 */
import ajv2020 from '@redocly/ajv/dist/2020.js';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';

// A CommonJS module: its class is the `default` of module.exports.
const Ajv2020 = ajv2020.default;

type Doc = { paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }> }>> };
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
