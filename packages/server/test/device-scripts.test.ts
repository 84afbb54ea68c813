import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPIO_MOTOR_SCRIPT } from '@mm/gpio-motor';
import { WEBCAM_SCRIPT } from '@mm/webcam';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_ID = '6f1d2d9e-8a10-4a27-9b4c-0b6e1c524a59';

const webcam = {
  name: 'USB webcam',
  device_type: 'webcam',
  description: 'Streams the camera as MJPEG.',
  script_filename: 'webcam.py',
  remote_dir: '/opt/scripts/webcam',
  port: 8080,
  version: '0.3.1',
};

describe.each(dbKinds)('device-script catalogue (%s database)', (kind) => {
  let server: TestServer;
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    server.api(path, { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const create = async (fields: Record<string, unknown>) => {
    const res = await send('POST', '/api/device-scripts/', fields);
    expect(res.status).toBe(201);
    return json(res);
  };

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('starts with the GPIO motor script, described by its routes and pins', async () => {
    const res = await server.api('/api/device-scripts/?device_type=gpio');
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.total).toBe(1);
    const [seeded] = body.scripts;
    expect(seeded).toEqual({ id: expect.stringMatching(UUID), updated_at: expect.stringMatching(ISO_MS_UTC), ...GPIO_MOTOR_SCRIPT });
    expect(seeded.device_type).toBe('gpio');
    for (const part of ['/motor/forward', '/motor/stop', '/servo', '/stream', '516', '517', '524', '531']) {
      expect(seeded.description).toContain(part);
    }
  });

  it('starts with the webcam script too (device_type webcam), described by its routes', async () => {
    const body = await json(await server.api('/api/device-scripts/?device_type=webcam'));
    const seeded = body.scripts.find((s: { name: string }) => s.name === WEBCAM_SCRIPT.name);
    expect(seeded).toEqual({ id: expect.stringMatching(UUID), updated_at: expect.stringMatching(ISO_MS_UTC), ...WEBCAM_SCRIPT });
    for (const part of ['/stream.mjpg', '/snapshot.jpg', '/state', 'ffmpeg', 'gst-launch-1.0']) expect(seeded.description).toContain(part);
  });

  it('creates an entry: server-set id and updated_at, 201', async () => {
    const before = Date.now();
    const res = await send('POST', '/api/device-scripts/', webcam);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const created = await json(res);
    expect(created).toEqual({ id: expect.stringMatching(UUID), updated_at: expect.stringMatching(ISO_MS_UTC), ...webcam });
    // The database's clock and ours agree to well within a minute.
    expect(Math.abs(Date.parse(created.updated_at) - before)).toBeLessThan(60_000);

    const got = await server.api(`/api/device-scripts/${created.id}/`);
    expect(got.status).toBe(200);
    expect(await json(got)).toEqual(created);
    // Without the trailing slash: the same answer.
    expect(await json(await server.api(`/api/device-scripts/${created.id}`))).toEqual(created);
  });

  it('lets description be left out on create (it is then "")', async () => {
    const { description: _left, ...rest } = webcam;
    expect((await create({ ...rest, name: 'no description' })).description).toBe('');
    expect((await create({ ...webcam, name: 'empty description', description: '' })).description).toBe('');
  });

  it('allows several entries to share a filename, folder and port', async () => {
    const a = await create({ ...webcam, name: 'shared A' });
    const b = await create({ ...webcam, name: 'shared B' });
    expect(a.id).not.toBe(b.id);
    expect([a.port, a.script_filename, a.remote_dir]).toEqual([b.port, b.script_filename, b.remote_dir]);
  });

  it('lists with a device_type filter, paging and a total of all matches', async () => {
    for (const n of [1, 2, 3]) await create({ ...webcam, name: `page ${n}`, device_type: 'pager' });
    const all = await json(await server.api('/api/device-scripts/?device_type=pager'));
    expect(all.total).toBe(3);
    expect(all.scripts.map((s: { name: string }) => s.name)).toEqual(['page 1', 'page 2', 'page 3']);
    const page = await json(await server.api('/api/device-scripts/?device_type=pager&limit=1&offset=1'));
    expect(page).toEqual({ scripts: [all.scripts[1]], total: 3 });
    const past = await json(await server.api('/api/device-scripts/?device_type=pager&offset=5'));
    expect(past).toEqual({ scripts: [], total: 3 });
    expect(await json(await server.api('/api/device-scripts/?device_type=nothing-of-this-type'))).toEqual({ scripts: [], total: 0 });

    const everything = await json(await server.api('/api/device-scripts/'));
    expect(everything.total).toBeGreaterThanOrEqual(4);
    expect(everything.scripts).toHaveLength(everything.total);
    expect(everything.scripts.some((s: { device_type: string }) => s.device_type === 'gpio')).toBe(true);
  });

  it.each([
    ['limit=1001', 'limit'],
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=1.5', 'offset'],
    ['device_type=GPIO', 'device_type'],
  ])('refuses the list query %s', async (query, field) => {
    const res = await server.api(`/api/device-scripts/?${query}`);
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('replaces an entry with PUT, moving updated_at forward', async () => {
    const original = await create({ ...webcam, name: 'to replace' });
    const replacement = { ...webcam, name: 'replaced', device_type: 'camera', description: '', port: 9000, version: '1.0.0' };
    const res = await send('PUT', `/api/device-scripts/${original.id}/`, replacement);
    expect(res.status).toBe(200);
    const replaced = await json(res);
    expect(replaced).toEqual({ id: original.id, updated_at: expect.stringMatching(ISO_MS_UTC), ...replacement });
    expect(Date.parse(replaced.updated_at)).toBeGreaterThan(Date.parse(original.updated_at));
    expect(await json(await server.api(`/api/device-scripts/${original.id}/`))).toEqual(replaced);
  });

  it('refuses a PUT that leaves a field out, naming it, and changes nothing', async () => {
    const original = await create({ ...webcam, name: 'put partial' });
    const { version: _v, ...withoutVersion } = webcam;
    const res = await send('PUT', `/api/device-scripts/${original.id}/`, { ...withoutVersion, name: 'changed?' });
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(problem.errors).toEqual([{ field: 'version', message: expect.any(String) }]);
    expect(await json(await server.api(`/api/device-scripts/${original.id}/`))).toEqual(original);
  });

  it('patches some fields, moving updated_at forward each time', async () => {
    const original = await create({ ...webcam, name: 'to patch' });
    const first = await json(await send('PATCH', `/api/device-scripts/${original.id}/`, { port: 8081 }));
    expect(first).toEqual({ ...original, port: 8081, updated_at: expect.stringMatching(ISO_MS_UTC) });
    expect(Date.parse(first.updated_at)).toBeGreaterThan(Date.parse(original.updated_at));
    const second = await json(await send('PATCH', `/api/device-scripts/${original.id}`, { description: '', version: '0.4.0' }));
    expect(second).toEqual({ ...first, description: '', version: '0.4.0', updated_at: expect.stringMatching(ISO_MS_UTC) });
    expect(Date.parse(second.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
  });

  it('treats an empty PATCH as no change: 200, updated_at stays', async () => {
    const original = await create({ ...webcam, name: 'empty patch' });
    const res = await send('PATCH', `/api/device-scripts/${original.id}/`, {});
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual(original);
  });

  it('deletes an entry: 204, then it is gone', async () => {
    const doomed = await create({ ...webcam, name: 'to delete' });
    const res = await send('DELETE', `/api/device-scripts/${doomed.id}/`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const gone = await server.api(`/api/device-scripts/${doomed.id}/`);
    expect(gone.status).toBe(404);
    expect((await json(gone)).code).toBe('device_script_not_found');
    expect((await send('DELETE', `/api/device-scripts/${doomed.id}`)).status).toBe(404);
  });

  describe('field rules', () => {
    it.each([
      ['port 0', { port: 0 }, 'port'],
      ['port 65536', { port: 65536 }, 'port'],
      ['port "80" (a string)', { port: '80' }, 'port'],
      ['port 80.5', { port: 80.5 }, 'port'],
      ['port null', { port: null }, 'port'],
      ['version "1.2"', { version: '1.2' }, 'version'],
      ['version "1.2.3.4"', { version: '1.2.3.4' }, 'version'],
      ['version "v1.2.3"', { version: 'v1.2.3' }, 'version'],
      ['version 1 (a number)', { version: 1 }, 'version'],
      ['device_type "GPIO"', { device_type: 'GPIO' }, 'device_type'],
      ['device_type "gpio motor"', { device_type: 'gpio motor' }, 'device_type'],
      ['device_type "1gpio"', { device_type: '1gpio' }, 'device_type'],
      ['device_type ""', { device_type: '' }, 'device_type'],
      ['script_filename "bin/run.py"', { script_filename: 'bin/run.py' }, 'script_filename'],
      ['script_filename "/run.py"', { script_filename: '/run.py' }, 'script_filename'],
      ['script_filename ".."', { script_filename: '..' }, 'script_filename'],
      ['script_filename "."', { script_filename: '.' }, 'script_filename'],
      ['script_filename ""', { script_filename: '' }, 'script_filename'],
      ['remote_dir "opt/scripts" (relative)', { remote_dir: 'opt/scripts' }, 'remote_dir'],
      ['remote_dir ""', { remote_dir: '' }, 'remote_dir'],
      ['name ""', { name: '' }, 'name'],
      ['name "   "', { name: '   ' }, 'name'],
      ['description null', { description: null }, 'description'],
      ['an unknown field', { colour: 'red' }, 'colour'],
      ['a client-chosen id', { id: UNKNOWN_ID }, 'id'],
    ])('POST refuses %s with 400 naming the field', async (_what, change, field) => {
      const before = (await json(await server.api('/api/device-scripts/?limit=1'))).total;
      const res = await send('POST', '/api/device-scripts/', { ...webcam, ...change });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const problem = await json(res);
      expect(problem).toMatchObject({ status: 400, code: 'validation_failed', title: expect.any(String), detail: expect.any(String) });
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
      if (field === '(body)') expect(JSON.stringify(problem.errors)).toContain(Object.keys(change)[0]);
      expect((await json(await server.api('/api/device-scripts/?limit=1'))).total).toBe(before);
    });

    it.each([
      ['port "80"', { port: '80' }, 'port'],
      ['port 65536', { port: 65536 }, 'port'],
      ['version "1.2"', { version: '1.2' }, 'version'],
      ['an unknown field', { enabled: true }, 'enabled'],
      ['updated_at', { updated_at: '2026-01-01T00:00:00.000Z' }, 'updated_at'],
    ])('PATCH refuses %s and changes nothing', async (_what, change, field) => {
      const original = await create({ ...webcam, name: `patch refused ${field}` });
      const res = await send('PATCH', `/api/device-scripts/${original.id}/`, change);
      expect(res.status).toBe(400);
      expect((await json(res)).errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await json(await server.api(`/api/device-scripts/${original.id}/`))).toEqual(original);
    });

    it('PUT applies the same rules', async () => {
      const original = await create({ ...webcam, name: 'put refused' });
      const res = await send('PUT', `/api/device-scripts/${original.id}/`, { ...webcam, port: 0, version: '1.2' });
      expect(res.status).toBe(400);
      const fields = (await json(res)).errors.map((e: { field: string }) => e.field).sort();
      expect(fields).toEqual(['port', 'version']);
    });

    it('refuses malformed JSON with 400 and a non-JSON body with 415', async () => {
      const malformed = await send('POST', '/api/device-scripts/', '{"name": ');
      expect(malformed.status).toBe(400);
      expect((await json(malformed)).code).toBe('malformed_json');
      const text = await send('POST', '/api/device-scripts/', 'name=x', { 'content-type': 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.headers.get('content-type')).toBe('application/problem+json');
      const array = await send('POST', '/api/device-scripts/', [webcam]);
      expect(array.status).toBe(400);
    });
  });

  describe('ids', () => {
    it.each(['not-a-uuid', '123', `${UNKNOWN_ID}x`, UNKNOWN_ID.replace(/-/g, '')])(
      'answers a malformed id (%s) like an unknown one: 404 device_script_not_found',
      async (id) => {
        for (const [method, body] of [
          ['GET', undefined],
          ['PUT', webcam],
          ['PATCH', { port: 1 }],
          ['DELETE', undefined],
        ] as const) {
          const res = await send(method, `/api/device-scripts/${id}/`, body);
          expect(res.status, `${method} ${id}`).toBe(404);
          expect(res.headers.get('content-type')).toBe('application/problem+json');
          expect((await json(res)).code).toBe('device_script_not_found');
        }
      },
    );

    it('answers an unknown id with 404 on every route, and a bad body does not mask it', async () => {
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', webcam],
        ['PATCH', { port: 1 }],
        ['PATCH', {}],
        ['DELETE', undefined],
      ] as const) {
        const res = await send(method, `/api/device-scripts/${UNKNOWN_ID}/`, body);
        expect(res.status, method).toBe(404);
        expect((await json(res)).code).toBe('device_script_not_found');
      }
      // The id is checked before the body.
      expect((await send('PUT', '/api/device-scripts/nope/', { port: 'x' })).status).toBe(404);
    });
  });

  it('answers a NUL in a query string with 400 validation_failed, never a 500 (the API fuzz found ?version=a%00b)', async () => {
    const { id } = await create({ ...webcam, name: 'nul' });
    for (const path of [`/api/device-scripts/${id}/file/?version=a%00b`, `/api/device-scripts/${id}/programs/?x=%00`, '/api/invocations/?search=a%00']) {
      const res = await server.api(path);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect((await json(res)).code).toBe('validation_failed');
    }
    // Without the NUL the same route answers as before: no program uploaded yet.
    expect((await server.api(`/api/device-scripts/${id}/file/?version=ab`)).status).toBe(404);
  });

  it('documents every catalogue route in the OpenAPI document', async () => {
    const doc = await json(await server.api('/api/openapi.json'));
    expect(Object.keys(doc.paths['/api/device-scripts/']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/device-scripts/{id}/']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    expect(doc.components.schemas.DeviceScript.required).toEqual(
      expect.arrayContaining(['id', 'name', 'device_type', 'description', 'script_filename', 'remote_dir', 'port', 'version', 'updated_at']),
    );
  });
});

describe.each(dbKinds)('device-script seed across restarts (%s database)', (kind) => {
  it('seeds once: a deleted seed entry stays deleted after a restart', async () => {
    const first = await startTestServer(kind, {}, { keep: true });
    let second: TestServer | undefined;
    try {
      const seeded = await json(await first.api('/api/device-scripts/'));
      expect(seeded.total).toBe(2);
      expect(seeded.scripts.map((s: { name: string }) => s.name).sort()).toEqual([GPIO_MOTOR_SCRIPT.name, WEBCAM_SCRIPT.name].sort());
      for (const s of seeded.scripts) expect((await first.api(`/api/device-scripts/${s.id}/`, { method: 'DELETE' })).status).toBe(204);
      const mine = await first.api('/api/device-scripts/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...webcam, name: 'survives restarts' }),
      });
      expect(mine.status).toBe(201);
      await first.stop();

      // Same data folder, same database: a restart, not a first start.
      second = await startTestServer(
        kind,
        { MM_DATA_DIR: first.dataDir },
        first.scratchDatabase ? { scratchDatabase: first.scratchDatabase } : {},
      );
      const after = await json(await second.api('/api/device-scripts/'));
      expect(after.total).toBe(1);
      expect(after.scripts[0].name).toBe('survives restarts');
    } finally {
      await second?.stop();
      if (!second) await first.scratchDatabase?.drop();
      await fs.rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
