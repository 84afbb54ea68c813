/**
 * MM_ACCEL_REDIRECT: file downloads answer with headers and `X-Accel-Redirect` to an
 * internal nginx location, and nginx (deploy/server/nginx.conf's site, TLS with a
 * self-signed certificate) sends the bytes itself, Range included. Without the setting
 * the server sends the bytes (the other download tests).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachInvocationFile } from '../src/invocations/invocation-files.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeMp4, patterned, sha256, uploadFile } from './invocations-support.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const PREFIX = '/_protected/';

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The deploy site's nginx in front of `server`, its internal locations aimed at the server's folders. */
async function startNginx(dir: string, server: TestServer, resultsDir: string): Promise<{ port: number; proc: ChildProcess }> {
  await fs.mkdir(dir, { recursive: true });
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-keyout', path.join(dir, 'privkey.pem'), '-out', path.join(dir, 'fullchain.pem')]); // prettier-ignore
  if (r.status !== 0) throw new Error(`openssl: ${r.stderr}`);
  const port = await freePort();
  const upstream = new URL(server.url).port;
  let site = await fs.readFile(path.join(repoRoot, 'deploy/server/nginx.conf'), 'utf8');
  site = site.replace(/server \{\s*listen 80;[\s\S]*?\n\}\n/, '');
  site = site
    .replace(/listen 443 ssl http2;/, `listen 127.0.0.1:${port} ssl http2;`)
    .replace(/\s*listen \[::\]:443 ssl http2;/, '')
    .replace('server 127.0.0.1:8000;', `server 127.0.0.1:${upstream};`)
    .replaceAll('/etc/letsencrypt/live/mm.example.org', dir)
    .replace('alias /data/content/;', `alias ${path.join(server.dataDir, 'content')}/;`)
    .replace('alias /data/results/;', `alias ${resultsDir}/;`);
  expect(site).toContain(`alias ${resultsDir}/;`);
  await fs.writeFile(path.join(dir, 'site.conf'), site);
  const conf = path.join(dir, 'nginx.conf');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ');
  await fs.writeFile(conf, [
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    `pid ${dir}/nginx.pid;`, `error_log ${dir}/error.log warn;`, 'events { worker_connections 64; }',
    `http { access_log off; ${temp} sendfile on; include ${dir}/site.conf; }`, '',
  ].join('\n')); // prettier-ignore
  const proc = spawn('nginx', ['-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (i > 200) throw new Error('nginx did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, proc };
}

function viaNginx(port: number, pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: pathname, headers, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(dbKinds)('X-Accel-Redirect downloads (%s database)', (kind) => {
  let server: TestServer;
  let root: string;
  let results: string;
  const clip = fakeMp4(3 * 1024 * 1024);

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-accel-'));
    results = path.join(root, 'results');
    await fs.mkdir(path.join(results, 'run 1'), { recursive: true });
    await fs.writeFile(path.join(results, 'run 1', 'clip ä.mp4'), clip);
    server = await startTestServer(kind, { MM_RESULTS_DIR: results, MM_ACCEL_REDIRECT: PREFIX });
  });
  afterAll(async () => {
    await server?.stop();
    await fs.rm(root, { recursive: true, force: true });
  });

  async function withVideo(video: Buffer) {
    const id = await createInvocation(server, 'accel');
    const stored = await server.ctx.files.ingest(Readable.from([video]));
    await attachInvocationFile(server.ctx, id, 'output_video', { filename: 'out.mp4', ...stored });
    return { id, sha: stored.sha256 };
  }

  it('answers the output video, an input file and a results video with headers and X-Accel-Redirect only', async () => {
    const video = fakeMp4(50_000);
    const { id, sha } = await withVideo(video);
    const res = await server.api(`/api/invocations/${id}/video/`, { headers: { range: 'bytes=0-99' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-accel-redirect')).toBe(`${PREFIX}content/${sha.slice(0, 2)}/${sha}`);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('content-disposition')).toContain('inline; filename="out.mp4"');
    expect((await res.arrayBuffer()).byteLength).toBe(0);

    const weights = patterned(10_000);
    await uploadFile(server, id, 'weights', 'w.bin', weights);
    const file = await server.api(`/api/invocations/${id}/files/weights/`);
    expect(file.headers.get('x-accel-redirect')).toBe(`${PREFIX}content/${sha256(weights).slice(0, 2)}/${sha256(weights)}`);
    expect(file.headers.get('content-disposition')).toContain('attachment; filename="w.bin"');
    await file.arrayBuffer();

    const result = await server.api('/api/videos/results/run%201/clip%20%C3%A4.mp4');
    expect(result.status).toBe(200);
    expect(result.headers.get('x-accel-redirect')).toBe(`${PREFIX}results/run%201/clip%20%C3%A4.mp4`);
    await result.arrayBuffer();
  });

  it('still answers what is missing or forbidden itself (problem+json), and the ZIP as before', async () => {
    const missing = await server.api('/api/invocations/999999/video/');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-accel-redirect')).toBeNull();
    await missing.arrayBuffer();
    const outside = await server.api('/api/videos/results/..%2F..%2Fetc%2Fpasswd');
    expect(outside.status).toBe(404);
    expect(outside.headers.get('x-accel-redirect')).toBeNull();
    await outside.arrayBuffer();
    const { id } = await withVideo(fakeMp4(1000));
    const zip = await server.api(`/api/invocations/${id}/download/`);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('x-accel-redirect')).toBeNull();
    expect((await zip.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it.skipIf(!has('nginx') || !has('openssl'))('through the deploy nginx: the bytes, a 1 MiB Range; the internal location is not reachable directly', async () => {
    const video = patterned(4 * 1024 * 1024);
    const { id } = await withVideo(video);
    const nginx = await startNginx(path.join(root, `nginx-${kind}`), server, results);
    try {
      const full = await viaNginx(nginx.port, `/api/invocations/${id}/video/`);
      expect(full.status).toBe(200);
      expect(full.headers['content-type']).toBe('video/mp4');
      expect(full.headers['x-accel-redirect']).toBeUndefined();
      expect(full.body.equals(video)).toBe(true);

      const range = await viaNginx(nginx.port, `/api/invocations/${id}/video/`, { range: 'bytes=1048576-2097151' });
      expect(range.status).toBe(206);
      expect(range.headers['content-range']).toBe(`bytes 1048576-2097151/${video.length}`);
      expect(range.body.equals(video.subarray(1048576, 2097152))).toBe(true);

      const result = await viaNginx(nginx.port, '/api/videos/results/run%201/clip%20%C3%A4.mp4', { range: 'bytes=0-1048575' });
      expect(result.status).toBe(206);
      expect(result.body.equals(clip.subarray(0, 1048576))).toBe(true);

      const direct = await viaNginx(nginx.port, `${PREFIX}content/`);
      expect(direct.status).toBe(404);
    } finally {
      nginx.proc.kill('SIGTERM');
    }
  });
});
