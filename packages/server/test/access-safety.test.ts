import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { repoRoot } from '../../../test/support/processes.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { call, login } from './support/accounts.ts';

const SERVER_BIN = path.join(repoRoot, 'packages/server/bin/mm-server.mjs');

/** Runs `mm-server` with these arguments and settings to its end (or until `until` shows in its output, then stops it). */
function runServerBin(
  args: string[],
  env: Record<string, string>,
  until?: RegExp,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; matched: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'info', DATABASE_URL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let matched = false;
    const check = () => {
      if (until && !matched && until.test(stdout + stderr)) {
        matched = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', (d: Buffer) => ((stdout += d), check()));
    child.stderr.on('data', (d: Buffer) => ((stderr += d), check()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, matched });
    });
  });
}

/** A raw request with exactly this Host header (fetch will not send a foreign one). */
function withHost(server: TestServer, host: string, method = 'GET', reqPath = '/api/invocations/'): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: reqPath, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(dbKinds)('a server with auth off (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const create = (headers: Record<string, string>) => call(server, 'POST', '/api/invocations/create/', {}, { name: 'x', description: '' }, headers);
  const count = async () => (await json(await server.api('/api/invocations/'))).total as number;

  it('says auth is off', async () => {
    expect(await json(await server.api('/api/auth/me/'))).toMatchObject({ auth: 'off', via: 'none', user: { role: 'admin' } });
  });

  it('refuses state changes a browser marks as cross-site with 403 cross_origin, and changes nothing', async () => {
    const before = await count();
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost:1' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of foreign) {
      const res = await create(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect((await json(res)).code).toBe('cross_origin');
    }
    // A bodyless POST (what a page's form or fetch can send without a preflight).
    const run = await server.api('/api/invocations/1/execute/', { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(run.status).toBe(403);
    // A multipart form (PAC install).
    const form = await server.api('/api/pacs/install/', {
      method: 'POST',
      headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'multipart/form-data; boundary=b' },
      body: '--b\r\nContent-Disposition: form-data; name="file"; filename="p.tar"\r\n\r\nxx\r\n--b--\r\n',
    });
    expect(form.status).toBe(403);
    expect(await count()).toBe(before);
  });

  it("accepts the server's own origin, requests without browser headers, and cross-site reads", async () => {
    expect((await create({ origin: server.url, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create({})).status).toBe(201);
    expect((await create({ 'sec-fetch-site': 'none' })).status).toBe(201);
    expect((await server.api('/api/invocations/', { headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
  });

  it('answers a foreign Host with 421 host_not_allowed (DNS rebinding), loopback names as usual', async () => {
    const port = new URL(server.url).port;
    const foreign = await withHost(server, `evil.example:${port}`);
    expect(foreign.status).toBe(421);
    expect(JSON.parse(foreign.body).code).toBe('host_not_allowed');
    expect((await withHost(server, 'rebind.attacker.test')).status).toBe(421);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', 'app.localhost']) {
      expect((await withHost(server, host)).status, host).toBe(200);
    }
    // Health answers any name (probes use addresses; it reveals nothing and changes nothing).
    expect((await withHost(server, 'evil.example', 'GET', '/api/health/')).status).toBe(200);
  });

  it('turns auth on as soon as a user exists', async () => {
    const res = await call(server, 'POST', '/api/users/', {}, { username: 'first', password: 'first-password', role: 'admin' });
    expect(res.status).toBe(201);
    expect((await server.api('/api/invocations/')).status).toBe(401);
    expect((await login(server, 'first', 'first-password')).status).toBe(200);
  });
});

describe('the public host setting', () => {
  it('accepts MM_PUBLIC_URL and MM_ALLOWED_HOSTS names, and their origin', async () => {
    const server = await startTestServer('embedded', { MM_PUBLIC_URL: 'https://mm.example.org', MM_ALLOWED_HOSTS: 'lab-server, 10.0.0.5' });
    try {
      expect((await withHost(server, 'mm.example.org')).status).toBe(200);
      expect((await withHost(server, 'lab-server:8000')).status).toBe(200);
      expect((await withHost(server, '10.0.0.5')).status).toBe(200);
      expect((await withHost(server, 'mm.example.org.evil.test')).status).toBe(421);
      const res = await call(server, 'POST', '/api/invocations/create/', {}, { name: 'x', description: '' }, { origin: 'https://mm.example.org' });
      expect(res.status).toBe(201);
    } finally {
      await server.stop();
    }
  });
});

describe('starting without auth beyond loopback', () => {
  let dataDir: string;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  // The real database when there is one: a first open of an embedded one costs a lot here.
  const dbEnv = (): Record<string, string> => (scratch ? { DATABASE_URL: scratch.url } : {});
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-open-'));
    if (dbKinds.includes('postgres')) scratch = await createScratchDatabase();
  });
  afterAll(async () => {
    await scratch?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('refuses HOST=0.0.0.0 with auth off, with a message naming the ways out', async () => {
    const r = await runServerBin([], { HOST: '0.0.0.0', PORT: '0', MM_DATA_DIR: dataDir, ...dbEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 with auth off/);
    expect(r.stderr).toContain('MM_ALLOW_NO_AUTH=1');
    expect(r.stderr).toContain('create-user');
  }, 120_000);

  it('starts there with MM_ALLOW_NO_AUTH=1', async () => {
    const r = await runServerBin([], { HOST: '0.0.0.0', PORT: '0', MM_DATA_DIR: dataDir, MM_ALLOW_NO_AUTH: '1', ...dbEnv() }, /control plane listening/);
    expect(r.matched).toBe(true);
  }, 120_000);
});

describe.each(dbKinds)('mm-server create-user (%s database)', (kind) => {
  it('makes the first admin, prints the password once; refuses while the server holds the embedded database', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-cu-'));
    const scratch = kind === 'postgres' ? await createScratchDatabase() : undefined;
    const dbEnv: Record<string, string> = scratch ? { DATABASE_URL: scratch.url } : {};
    let server: TestServer | undefined;
    try {
      if (scratch) {
        // On PostgreSQL the server may be running: auth turns on without a restart.
        server = await startTestServer('postgres', { MM_DATA_DIR: dataDir }, { scratchDatabase: scratch });
        expect((await server.api('/api/invocations/')).status).toBe(200);
      }
      const r = await runServerBin(['create-user', 'root', '--role', 'admin'], { MM_DATA_DIR: dataDir, ...dbEnv });
      expect({ code: r.code, signal: r.signal, stderr: r.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      const password = /Password \(shown this once\): (\S+)/.exec(r.stdout)?.[1];
      expect(password).toMatch(/^[\w-]{20,}$/);
      server ??= await startTestServer('embedded', { MM_DATA_DIR: dataDir });
      expect((await server.api('/api/invocations/')).status).toBe(401);
      const res = await login(server, 'root', password!);
      expect(res.status).toBe(200);
      expect((await json(res)).user.role).toBe('admin');

      const again = await runServerBin(['create-user', 'second', '--role', 'operator'], { MM_DATA_DIR: dataDir, ...dbEnv });
      if (kind === 'embedded') {
        expect(again.code).toBe(3);
        expect(again.stderr).toMatch(/in use by another Model Manager server/);
        expect(again.stderr).toMatch(/stop the server/);
      } else {
        expect(again.code).toBe(0);
        const dup = await runServerBin(['create-user', 'root'], { MM_DATA_DIR: dataDir, ...dbEnv });
        expect(dup.code).toBe(1);
        expect(dup.stderr).toMatch(/already a user named/);
      }
      const usage = await runServerBin(['create-user', 'x', '--role', 'root'], { MM_DATA_DIR: dataDir, ...dbEnv });
      expect(usage.code).toBe(2);
    } finally {
      await server?.stop();
      if (kind === 'embedded' || !server) await scratch?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 480_000);
});
