/**
 * Tools of the fault suite: a TCP proxy that can be cut (connections reset, new ones
 * refused) or frozen (connections kept open but silent), streamed multipart uploads whose
 * pace the test controls, and a small filesystem of its own for a full disk.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Whether `pid` is a live process. A zombie does not count: where PID 1 does not reap
 * orphans (a container without an init) a killed helper lingers as one, and `kill(pid, 0)`
 * still succeeds on it.
 */
export async function isLive(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  return stat !== undefined && !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

// ── a proxy that can be cut ──────────────────────────────────────────────────────────

export interface CuttableProxy {
  port: number;
  /** host:port of the proxy, for a URL. */
  address: string;
  /** Resets every open connection and refuses (resets) new ones until restore(). */
  cut(): void;
  /** Keeps connections open but forwards nothing either way until restore() (a silent, half-dead link). */
  freeze(): void;
  restore(): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startCuttableProxy(target: { host: string; port: number }): Promise<CuttableProxy> {
  type Pair = { client: net.Socket; upstream: net.Socket };
  const pairs = new Set<Pair>();
  let mode: 'open' | 'cut' | 'frozen' = 'open';
  let accepted = 0;
  const setFlowing = (pair: Pair, flowing: boolean) => {
    for (const s of [pair.client, pair.upstream]) {
      if (flowing) s.resume();
      else s.pause();
    }
  };

  const server = net.createServer({ noDelay: true }, (client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    accepted++;
    const upstream = net.connect({ ...target, noDelay: true });
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (mode === 'frozen') setFlowing(pair, false);
    const end = () => {
      pairs.delete(pair);
      if (!client.destroyed) client.destroy();
      if (!upstream.destroyed) upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    address: `127.0.0.1:${port}`,
    cut() {
      mode = 'cut';
      for (const p of [...pairs]) {
        p.client.resetAndDestroy();
        p.upstream.resetAndDestroy();
      }
      pairs.clear();
    },
    freeze() {
      mode = 'frozen';
      for (const p of pairs) setFlowing(p, false);
    },
    restore() {
      mode = 'open';
      for (const p of pairs) setFlowing(p, true);
    },
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const p of pairs) {
          p.client.destroy();
          p.upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

// ── uploads ──────────────────────────────────────────────────────────────────────────

/**
 * A multipart upload (`file_type` + `file`) whose body the test writes itself: `write()`
 * sends file bytes, `finish()` the closing boundary. `response` settles with the answer,
 * or rejects when the connection dies.
 */
export function openUpload(baseUrl: string, invocationId: number, kind: string, filename: string, fileSize: number) {
  const boundary = `----mm-fault-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\n${kind}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const req = http.request(new URL(`/api/invocations/${invocationId}/upload/`, baseUrl), {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + fileSize + tail.length },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  // Keeps a rejection that the test has not awaited yet from counting as unhandled.
  response.catch(() => {});
  req.write(head);
  return {
    response,
    write: (data: Buffer) => new Promise<void>((resolve, reject) => req.write(data, (err) => (err ? reject(err) : resolve()))),
    finish: () => req.end(tail),
  };
}

/**
 * Uploads `data` (test-sized) as one file of an invocation; returns the answer. The writes
 * are not awaited one by one: a server that answers early (e.g. 500 while its database is
 * away) without reading the rest would otherwise leave the client waiting on a full socket.
 */
export async function upload(baseUrl: string, invocationId: number, kind: string, filename: string, data: Buffer) {
  const u = openUpload(baseUrl, invocationId, kind, filename, data.length);
  u.write(data).catch(() => {}); // a failed write also fails `response`
  u.finish();
  return u.response;
}

// ── a small filesystem ───────────────────────────────────────────────────────────────

/** Mounts a tmpfs of `sizeMiB` at `dir`; false where mounting is impossible (not root, a container without the right). */
export async function mountTmpfs(dir: string, sizeMiB: number): Promise<boolean> {
  await fs.mkdir(dir, { recursive: true });
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
    return true;
  } catch {
    return false;
  }
}

export async function unmount(dir: string): Promise<void> {
  await run('umount', ['-l', dir]).catch(() => {});
}

/** Every regular file under `dir` (relative paths), or [] when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}
