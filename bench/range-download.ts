/**
 * 1 MiB Range requests of a stored video (issue 15, goal 5), by hand, never in the suite:
 *
 *   [DATABASE_URL=postgres://…] npx tsx bench/range-download.ts [--file-mib 256] [--requests 300] [--clients 8]
 *
 * Three ways, the same file, random 1 MiB-aligned ranges, keep-alive connections:
 * - direct:            the server on its own port (`pnpm start`'s way, no proxy);
 * - nginx, proxied:    deploy/server/nginx.conf's TLS site proxying the server's bytes;
 * - nginx, X-Accel:    the same site, the server started with MM_ACCEL_REDIRECT=/_protected/,
 *                      nginx sending the file from its internal location (sendfile).
 * Each sequentially (median latency) and with `--clients` at once (total MB/s).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../test/deploy/bundles.ts';
import { realDatabaseUrl } from '../test/support/databases.ts';
import { serverCluster } from '../test/support/processes.ts';
import { freePort, median, MiB, upload, writeRandomFile } from './support/bench-kit.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const fileMiB = arg('file-mib', 256);
const requests = arg('requests', 300);
const clients = arg('clients', 8);

async function startNginx(dir: string, upstreamPort: number, dataDir: string): Promise<{ port: number; proc: ChildProcess }> {
  await fs.mkdir(dir, { recursive: true });
  spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-keyout', path.join(dir, 'privkey.pem'), '-out', path.join(dir, 'fullchain.pem')]); // prettier-ignore
  const port = await freePort();
  let site = await fs.readFile(path.join(repoRoot, 'deploy/server/nginx.conf'), 'utf8');
  site = site.replace(/server \{\s*listen 80;[\s\S]*?\n\}\n/, '');
  site = site
    .replace(/listen 443 ssl http2;/, `listen 127.0.0.1:${port} ssl http2;`)
    .replace(/\s*listen \[::\]:443 ssl http2;/, '')
    .replace('server 127.0.0.1:8000;', `server 127.0.0.1:${upstreamPort};`)
    .replaceAll('/etc/letsencrypt/live/mm.example.org', dir)
    .replace('alias /data/content/;', `alias ${dataDir}/content/;`)
    .replace('alias /data/results/;', `alias ${dataDir}/results/;`);
  await fs.writeFile(path.join(dir, 'site.conf'), site);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ');
  const conf = path.join(dir, 'nginx.conf');
  await fs.writeFile(conf, ['user root;', 'worker_processes auto;', `pid ${dir}/nginx.pid;`, `error_log ${dir}/error.log warn;`,
    'events { worker_connections 1024; }', `http { access_log off; ${temp} sendfile on; tcp_nopush on; include ${dir}/site.conf; }`, ''].join('\n')); // prettier-ignore
  const proc = spawn('nginx', ['-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) return { port, proc };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('nginx did not start');
}

type Get = (start: number) => Promise<number>;

function getter(base: string): Get {
  const url = new URL(base);
  const tls = url.protocol === 'https:';
  const agent = tls ? new https.Agent({ keepAlive: true, rejectUnauthorized: false }) : new http.Agent({ keepAlive: true });
  return (start) =>
    new Promise((resolve, reject) => {
      const req = (tls ? https : http).request(
        { host: url.hostname, port: url.port, path: url.pathname, agent, headers: { range: `bytes=${start}-${start + MiB - 1}` } },
        (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () => (res.statusCode === 206 && n === MiB ? resolve(n) : reject(new Error(`${res.statusCode}, ${n} bytes`))));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
}

async function measure(label: string, get: Get): Promise<string> {
  const offsets = () => Math.floor(Math.random() * fileMiB) * MiB;
  for (let i = 0; i < 10; i++) await get(offsets()); // warm-up (page cache, connections)
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < requests; i++) {
    const s = performance.now();
    await get(offsets());
    lat.push(performance.now() - s);
  }
  const seqMs = performance.now() - t0;
  const t1 = performance.now();
  let left = requests;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (left-- > 0) await get(offsets());
    }),
  );
  const parMs = performance.now() - t1;
  return `| ${label} | ${median(lat).toFixed(2)} ms | ${((requests * MiB) / 1e6 / (seqMs / 1000)).toFixed(0)} MB/s | ${((requests * MiB) / 1e6 / (parMs / 1000)).toFixed(0)} MB/s |`;
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-range-'));
const cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded');
try {
  let server = await cluster.start();
  const file = path.join(work, 'video.bin');
  await writeRandomFile(file, fileMiB * MiB);
  const inv = ((await (await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'range', description: '' }) })).json()) as { id: number }).id;
  await upload(server.url, inv, 'input_video', file, 'video.mp4');
  const route = `/api/invocations/${inv}/files/input_video/`;
  const rows: string[] = [];
  rows.push(await measure('direct (the server sends the bytes)', getter(`${server.url}${route}`)));
  const nginx = await startNginx(path.join(work, 'nginx'), server.port, cluster.dataDir);
  try {
    rows.push(await measure('nginx + TLS, proxied (the server sends the bytes)', getter(`https://127.0.0.1:${nginx.port}${route}`)));
    await server.stop();
    server = await cluster.start({ MM_ACCEL_REDIRECT: '/_protected/' });
    rows.push(await measure('nginx + TLS, X-Accel-Redirect (nginx sends the file)', getter(`https://127.0.0.1:${nginx.port}${route}`)));
  } finally {
    nginx.proc.kill('SIGTERM');
  }
  console.log(`\n1 MiB Range requests of a ${fileMiB} MiB file, ${requests} requests; load average ${os.loadavg()[0]!.toFixed(1)} at the end\n`);
  console.log(`| path | median latency (one client) | one client | ${clients} clients |`);
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await cluster.cleanup();
  await fs.rm(work, { recursive: true, force: true });
}
