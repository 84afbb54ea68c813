import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';

/**
 * The real control plane as a process (`node packages/server/bin/mm-server.mjs`): SIGTERM in
 * the middle of a large upload stops it cleanly — exit 0, nothing half-written left in the
 * data folder, and after a restart the invocation has no file of that kind.
 */

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const MiB = 1024 * 1024;

interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** stdout so far: pino's JSON lines. */
  output(): string;
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function startServerProcess(dataDir: string, databaseUrl: string): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'packages/server/bin/mm-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), MM_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, MM_API_TOKEN: '', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  // Up: health answers (the first start of an embedded database takes a few seconds).
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}\n${err}`);
    try {
      if ((await fetch(`${url}/api/health/`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 600) throw new Error(`server did not come up:\n${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => out + err, exited };
}

/** Waits for the exit; a process still running after `limitMs` is killed (and the test fails). */
async function exitCode(server: ServerProcess, limitMs = 60_000): Promise<number | null | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), limitMs)));
  const result = await Promise.race([server.exited, hung]);
  clearTimeout(timer);
  if (result === 'hung') server.child.kill('SIGKILL');
  return result;
}

/** Every file under the data folder but the database's, relative, with its size. */
function filesOf(dataDir: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (p !== path.join(dataDir, 'pgdata')) walk(p);
      } else found.set(path.relative(dataDir, p), fs.statSync(p).size);
    }
  };
  walk(dataDir);
  return found;
}

describe.each(dbKinds)('graceful shutdown (%s database)', (kind) => {
  let dataDir: string;
  let databaseUrl = '';
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-shutdown-'));
    if (kind === 'postgres') {
      const scratch = await createScratchDatabase();
      databaseUrl = scratch.url;
      dropDatabase = scratch.drop;
    }
  });
  afterAll(async () => {
    await dropDatabase?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM during an upload: exit 0, no partial file, no file recorded', async () => {
    const server = await startServerProcess(dataDir, databaseUrl);
    let uploadReq: http.ClientRequest | undefined;
    try {
      const created = await fetch(`${server.url}/api/invocations/create/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'shutdown-create-1' },
        body: JSON.stringify({ name: 'shutdown during upload', description: '' }),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-request-id')).toBe('shutdown-create-1');
      const { id } = await json(created);
      const before = filesOf(dataDir);

      // A multipart upload that never ends on its own: chunks are written as fast as the
      // server takes them (backpressure), up to a bound the test never reaches.
      const boundary = `----mm${randomBytes(8).toString('hex')}`;
      uploadReq = http.request(`${server.url}/api/invocations/${id}/upload/`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      const answered = new Promise<number | 'error'>((resolve) => {
        uploadReq!.once('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        uploadReq!.once('error', () => resolve('error'));
      });
      uploadReq.write(
        `--${boundary}\r\ncontent-disposition: form-data; name="file_type"\r\n\r\nweights\r\n` +
          `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n` +
          'content-type: application/octet-stream\r\n\r\n',
      );
      const chunk = randomBytes(MiB);
      let sent = 0;
      let stop = false;
      const writing = (async () => {
        while (!stop && sent < 4096 * MiB && !uploadReq!.destroyed) {
          sent += chunk.length;
          if (!uploadReq!.write(chunk)) {
            await new Promise<void>((resolve) => {
              const done = () => {
                uploadReq!.off('drain', done);
                uploadReq!.off('close', done);
                resolve();
              };
              uploadReq!.on('drain', done);
              uploadReq!.on('close', done);
            });
          }
        }
      })();

      // Mid-upload: the server is writing a file that was not there before.
      const partial = () => [...filesOf(dataDir)].filter(([f, size]) => !before.has(f) && size > 0);
      for (let i = 0; partial().length === 0; i++) {
        if (i > 600) throw new Error('the upload never reached the disk');
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sent).toBeGreaterThan(0);

      server.child.kill('SIGTERM');
      expect(await exitCode(server)).toBe(0);
      stop = true;
      await writing;
      // The upload was not answered 201: cut, or refused with an error status.
      const status = await answered;
      expect(status === 'error' || status >= 400).toBe(true);

      // Nothing half-written: every file now in the data folder was there before the upload.
      const leftovers = [...filesOf(dataDir).keys()].filter((f) => !before.has(f));
      expect(leftovers).toEqual([]);

      // One JSON log line per request, with its id, status and duration.
      const requests = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
      const create = requests.filter((l) => l.req_id === 'shutdown-create-1');
      expect(create).toHaveLength(1);
      expect(create[0]).toMatchObject({ method: 'POST', path: '/api/invocations/create/', status: 201 });
      expect(typeof create[0]!.duration_ms).toBe('number');
      for (const line of requests) {
        expect(typeof line.req_id).toBe('string');
        expect(typeof line.status).toBe('number');
      }

      // After a restart the invocation is there, without a weights file.
      const again = await startServerProcess(dataDir, databaseUrl);
      try {
        const res = await fetch(`${again.url}/api/invocations/${id}/`);
        expect(res.status).toBe(200);
        const invocation = await json(res);
        expect(invocation.files.weights).toBeNull();
      } finally {
        again.child.kill('SIGTERM');
        expect(await exitCode(again)).toBe(0);
      }
    } finally {
      uploadReq?.destroy();
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});
