import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../src/db/schema.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(dbKinds)('invocations: create, list, details, delete (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (path: string, body: string, contentType = 'application/json') =>
    server.api(path, { method: 'POST', headers: { 'content-type': contentType }, body });

  describe('create', () => {
    it('answers 201 with the invocation, every file kind null', async () => {
      const res = await post('/api/invocations/create/', JSON.stringify({ name: '  yolo-test  ', description: 'first run' }));
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await json(res);
      expect(body).toEqual({
        id: expect.any(Number),
        name: 'yolo-test',
        description: 'first run',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        files: { parameter: null, bitstream: null, weights: null, input_video: null, output_video: null },
      });
      expect(body.id).toBeGreaterThan(0);
    });

    it('accepts an empty description and a 200-character name', async () => {
      const res = await post('/api/invocations/create/', JSON.stringify({ name: 'n'.repeat(200), description: '' }));
      expect(res.status).toBe(201);
      expect((await json(res)).description).toBe('');
    });

    it.each([
      ['missing name', { description: '' }, 'name'],
      ['empty name', { name: '', description: '' }, 'name'],
      ['blank name', { name: '   ', description: '' }, 'name'],
      ['201-character name', { name: 'n'.repeat(201), description: '' }, 'name'],
      ['non-string name', { name: 42, description: '' }, 'name'],
      ['missing description', { name: 'x' }, 'description'],
      ['non-string description', { name: 'x', description: null }, 'description'],
    ])('rejects a %s with 400 validation_failed naming the field', async (_, body, field) => {
      const res = await post('/api/invocations/create/', JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const problem = await json(res);
      expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('rejects malformed JSON with 400 malformed_json', async () => {
      const res = await post('/api/invocations/create/', '{"name": "x",');
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect((await json(res)).code).toBe('malformed_json');
    });

    it('rejects a JSON array or scalar body with 400', async () => {
      expect((await post('/api/invocations/create/', '[]')).status).toBe(400);
      expect((await post('/api/invocations/create/', '"x"')).status).toBe(400);
    });

    it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['multipart/form-data; boundary=x']])(
      'rejects Content-Type %s with 415',
      async (type) => {
        const res = await post('/api/invocations/create/', JSON.stringify({ name: 'x', description: '' }), type);
        expect(res.status).toBe(415);
        expect((await json(res)).code).toBe('unsupported_media_type');
      },
    );

    it('rejects a body without Content-Type with 415', async () => {
      const res = await server.api('/api/invocations/create/', { method: 'POST', body: new Uint8Array(Buffer.from('{"name":"x","description":""}')) });
      expect(res.status).toBe(415);
    });

    it('works without the trailing slash (no redirect)', async () => {
      const res = await server.api('/api/invocations/create', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ name: 'no-slash', description: '' }),
        redirect: 'manual',
      });
      expect(res.status).toBe(201);
    });
  });

  describe('list', () => {
    let ids: number[];
    beforeAll(async () => {
      ids = [];
      for (const name of ['List Alpha', 'list beta', 'gamma 100%', 'gamma_x']) ids.push(await createInvocation(server, name));
    });

    it('answers { invocations, total }, newest first', async () => {
      const res = await server.api('/api/invocations/');
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.total).toBeGreaterThanOrEqual(4);
      expect(body.invocations).toHaveLength(body.total);
      const listed = body.invocations.map((i: { id: number }) => i.id);
      // The four made last, newest first, at the top.
      expect(listed.slice(0, 4)).toEqual([...ids].reverse());
      expect(body.invocations[0].files).toEqual({ parameter: null, bitstream: null, weights: null, input_video: null, output_video: null });
    });

    it('pages with limit and offset; total counts all matches', async () => {
      const all = await json(await server.api('/api/invocations/'));
      const page = await json(await server.api('/api/invocations/?limit=2&offset=1'));
      expect(page.total).toBe(all.total);
      expect(page.invocations.map((i: { id: number }) => i.id)).toEqual(all.invocations.slice(1, 3).map((i: { id: number }) => i.id));
      const beyond = await json(await server.api(`/api/invocations/?offset=${all.total + 5}`));
      expect(beyond).toEqual({ invocations: [], total: all.total });
    });

    it('filters by q: name contains, case-insensitive, wildcards literal', async () => {
      const list = await json(await server.api('/api/invocations/?q=LIST'));
      expect(list.invocations.map((i: { name: string }) => i.name).sort()).toEqual(['List Alpha', 'list beta']);
      expect(list.total).toBe(2);
      const percent = await json(await server.api(`/api/invocations/?q=${encodeURIComponent('0%')}`));
      expect(percent.invocations.map((i: { name: string }) => i.name)).toEqual(['gamma 100%']);
      const underscore = await json(await server.api('/api/invocations/?q=a_x'));
      expect(underscore.invocations.map((i: { name: string }) => i.name)).toEqual(['gamma_x']);
      expect(await json(await server.api('/api/invocations/?q=nothing-like-this'))).toEqual({ invocations: [], total: 0 });
    });

    it.each([['limit=0'], ['limit=1001'], ['limit=abc'], ['offset=-1'], ['limit=1.5']])('rejects ?%s with 400', async (query) => {
      const res = await server.api(`/api/invocations/?${query}`);
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('validation_failed');
    });

    it('works without the trailing slash', async () => {
      expect((await server.api('/api/invocations?limit=1')).status).toBe(200);
    });
  });

  describe('list: the latest run of each invocation', () => {
    it('is its newest execute (not a later transfer), null before the first run; one page in one query', async () => {
      const ran = await createInvocation(server, 'latest-run-ran', '');
      const never = await createInvocation(server, 'latest-run-never', '');
      const { db } = server.ctx.database;
      await db.insert(operations).values({ kind: 'execute', status: 'succeeded', invocationId: ran });
      const [latest] = await db
        .insert(operations)
        .values({ kind: 'execute', status: 'failed', invocationId: ran, error: { code: 'runner_failed', message: 'exit 3' } })
        .returning();
      await db.insert(operations).values({ kind: 'transfer', status: 'succeeded', invocationId: ran });
      const body = await json(await server.api('/api/invocations/?q=latest-run-'));
      const byId = new Map(body.invocations.map((i: { id: number }) => [i.id, i]));
      expect(byId.get(ran)).toMatchObject({ latest_run: { id: latest!.id, kind: 'execute', status: 'failed', error: { code: 'runner_failed' } } });
      expect(byId.get(never)).toMatchObject({ latest_run: null });
    });
  });

  describe('details', () => {
    it('answers the invocation with its operations, newest first, in the operation shape', async () => {
      const id = await createInvocation(server, 'with-ops', 'd');
      const { db } = server.ctx.database;
      await db.insert(operations).values({ kind: 'transfer', status: 'succeeded', invocationId: id, createdAt: new Date('2026-01-01T00:00:00.000Z') });
      await db.insert(operations).values({
        kind: 'execute',
        status: 'failed',
        invocationId: id,
        createdAt: new Date('2026-01-02T00:00:00.000Z'),
        error: { code: 'runner_failed', message: 'exit 3' },
      });
      const res = await server.api(`/api/invocations/${id}/`);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body).toMatchObject({ id, name: 'with-ops', description: 'd', files: { parameter: null } });
      expect(body.operations.map((o: { kind: string }) => o.kind)).toEqual(['execute', 'transfer']);
      expect(body.operations[0]).toEqual({
        id: expect.any(Number),
        kind: 'execute',
        status: 'failed',
        board_id: null,
        board_selector: null,
        priority: 0,
        invocation_id: id,
        created_at: '2026-01-02T00:00:00.000Z',
        started_at: null,
        finished_at: null,
        progress: { phase: 'queued', bytes_done: 0, bytes_total: 0 },
        result: null,
        error: { code: 'runner_failed', message: 'exit 3' },
        created_by: null,
        // Not waiting (it has ended), not a health check's run, never lost its board.
        waiting: null,
        health_check_id: null,
        board_offline_since: null,
      });
    });

    it('answers a fresh invocation with no operations, also without the trailing slash', async () => {
      const id = await createInvocation(server);
      const body = await json(await server.api(`/api/invocations/${id}`));
      expect(body.operations).toEqual([]);
    });

    it.each([['999999'], ['abc'], ['0'], ['-1'], ['1.5'], ['99999999999'], ['1e3']])('answers id %s with a 404 problem', async (id) => {
      const res = await server.api(`/api/invocations/${id}/`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await json(res)).toMatchObject({ status: 404, code: 'invocation_not_found', title: 'Not Found' });
    });
  });

  describe('delete', () => {
    it('answers 204, then the invocation is gone', async () => {
      const id = await createInvocation(server, 'doomed');
      const res = await server.api(`/api/invocations/${id}/`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect((await server.api(`/api/invocations/${id}/`)).status).toBe(404);
      const again = await server.api(`/api/invocations/${id}/`, { method: 'DELETE' });
      expect(again.status).toBe(404);
      expect((await json(again)).code).toBe('invocation_not_found');
    });

    it('works without the trailing slash', async () => {
      const id = await createInvocation(server);
      expect((await server.api(`/api/invocations/${id}`, { method: 'DELETE' })).status).toBe(204);
    });

    it('asks the operations module to cancel its operations first, and keeps their history', async () => {
      const id = await createInvocation(server);
      const { db } = server.ctx.database;
      const [op] = await db.insert(operations).values({ kind: 'execute', status: 'queued', invocationId: id }).returning();
      const seen: Array<{ id: number; existed: boolean }> = [];
      const operationsModuleHook = server.ctx.operations.cancelOperationsOf;
      server.ctx.operations.cancelOperationsOf = async (invocationId) => {
        // Called while the invocation still exists.
        const res = await server.api(`/api/invocations/${invocationId}/`);
        seen.push({ id: invocationId, existed: res.status === 200 });
      };
      try {
        expect((await server.api(`/api/invocations/${id}/`, { method: 'DELETE' })).status).toBe(204);
      } finally {
        server.ctx.operations.cancelOperationsOf = operationsModuleHook;
      }
      expect(seen).toEqual([{ id, existed: true }]);
      const rows = await db.select().from(operations);
      expect(rows.find((r) => r.id === op!.id)?.invocationId).toBeNull();
    });

    it('answers unknown and non-numeric ids with 404', async () => {
      expect((await server.api('/api/invocations/999999/', { method: 'DELETE' })).status).toBe(404);
      expect((await server.api('/api/invocations/abc/', { method: 'DELETE' })).status).toBe(404);
    });
  });

  it('documents the invocation routes in the OpenAPI document', async () => {
    const doc = await json(await server.api('/api/openapi.json'));
    for (const p of [
      '/api/invocations/',
      '/api/invocations/create/',
      '/api/invocations/{id}/',
      '/api/invocations/{id}/upload/',
      '/api/invocations/{id}/video/',
      '/api/invocations/{id}/download/',
      '/api/invocations/{id}/files/{kind}/',
      '/api/videos/',
      '/api/videos/results/{path}',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(doc.components.schemas.Invocation).toBeDefined();
    expect(doc.paths['/api/invocations/{id}/upload/'].post.requestBody.content['multipart/form-data']).toBeDefined();
  });
});
