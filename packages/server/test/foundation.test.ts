import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@mm/server';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

describe('configuration', () => {
  it('applies the contract defaults', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.resultsDir).toBe(path.resolve('./data/results'));
    expect(c.maxUploadBytes).toBe(8 * 1024 ** 3);
    expect(c.syncWaitMs).toBe(600_000);
    expect(c.apiToken).toBeUndefined();
    expect(c.receiveWindowsCapBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ MM_RECEIVE_WINDOWS_MB: '16' }).receiveWindowsCapBytes).toBe(16 * 1024 * 1024);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['MM_MAX_UPLOAD_BYTES', '-1'],
    ['MM_SYNC_WAIT_S', 'soon'],
    ['DATABASE_URL', 'mysql://x'],
    ['MM_RECEIVE_WINDOWS_MB', '2'],
    ['MM_RECEIVE_WINDOWS_MB', 'lots'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('stops the real server at startup with a message naming the variable', () => {
    const r = spawnSync(process.execPath, [path.resolve('packages/server/bin/mm-server.mjs')], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('PORT');
  });
});

describe.each(dbKinds)('service basics (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers health without auth', async () => {
    const res = await server.api('/api/health/');
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: 'ok', database: 'ok', boards_online: 0 });
    expect(typeof body.version).toBe('string');
    // The upload limit (MM_MAX_UPLOAD_BYTES, 8 GiB by default): the dashboard refuses larger files before hashing them.
    expect(body.max_upload_bytes).toBe(8 * 1024 ** 3);
  });

  it('answers unknown routes with a problem+json 404', async () => {
    const res = await server.api('/api/no-such-thing/');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await json(res)).toMatchObject({ status: 404, code: 'route_not_found', title: 'Not Found' });
  });

  it('serves the OpenAPI document and the docs page', async () => {
    const doc = await json(await server.api('/api/openapi.json'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/health/']).toBeDefined();
    const page = await server.api('/api/docs');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/api/openapi.json');
  });

  // The lock guards the embedded database; replicas on one real PostgreSQL share the folder (docs/replicas.md).
  it.runIf(kind === 'embedded')('refuses a second server on the same data folder', async () => {
    await expect(startTestServer(kind, { MM_DATA_DIR: server.dataDir })).rejects.toThrow(/in use by/);
  });

  it.runIf(kind === 'postgres')('lets a second server on the same database share the data folder (a replica)', async () => {
    const replica = await startTestServer(kind, { MM_DATA_DIR: server.dataDir }, { scratchDatabase: server.scratchDatabase!, keep: true });
    try {
      expect((await replica.api('/api/health/')).status).toBe(200);
    } finally {
      await replica.stop();
    }
    expect((await server.api('/api/health/')).status).toBe(200);
  });
});

describe('API token', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_API_TOKEN: 's3cret-token' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('needs the token everywhere but health', async () => {
    const none = await server.api('/api/openapi.json');
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toBe('application/problem+json');
    expect((await json(none)).code).toBe('unauthorized');
    const wrong = await server.api('/api/openapi.json', { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await server.api('/api/openapi.json', { headers: { authorization: 'Bearer s3cret-token' } });
    expect(right.status).toBe(200);
    expect((await server.api('/api/health/')).status).toBe(200);
  });
});

describe('data folder lock', () => {
  it('takes over a lock left by a dead process', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-lock-'));
    await fs.writeFile(path.join(dir, 'server.lock'), '999999\n');
    const server = await startTestServer('embedded', { MM_DATA_DIR: dir });
    await server.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });
});
