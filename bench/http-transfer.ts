/**
 * HTTP transfer benchmark of the control plane (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/http-transfer.ts [--size-mib 1024] [--ranges 256]
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/http-transfer.ts
 *     (the server on a scratch database of that PostgreSQL instead of the embedded one)
 *
 * 1. Upload a file (default 1 GiB) with curl to POST /api/invocations/<id>/upload/:
 *    throughput and the server's peak RSS above idle (goal < 100 MB).
 * 2. Download it in full and in 1 MiB ranges from the server's file routes
 *    (/api/invocations/<id>/files/input_video/ and the results-folder video route, both
 *    served by the same code as /api/invocations/<id>/video/) and, in the same run, from
 *    nginx (when installed) and a minimal Node `fs` server serving the same file
 *    (goal: ≥ 0.8× nginx).
 * 3. Download the invocation as a ZIP: throughput and peak RSS above idle (flat memory).
 *
 * The server runs as a child process (`node packages/server/bin/mm-server.mjs`) on a temp
 * MM_DATA_DIR with the embedded database; its RSS is sampled from /proc/<pid>/status, and
 * VmHWM is reset (clear_refs) before each phase where the kernel allows it.
 *
 * As root on a VM that hands freed memory back to its host, the run holds it first (bench-kit's
 * holdFreedPagesForRun: writes into returned memory cost 6× here); --keep-page-reporting does not.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { holdFreedPagesForRun } from './support/bench-kit.ts';

const MiB = 1024 * 1024;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
}
const sizeMiB = arg('size-mib', 1024);
const rangeCount = arg('ranges', 256);

// ---------------------------------------------------------------- process memory

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(Vm\w+):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * 1024;
  }
  return out;
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0, needs permission); false when refused. */
function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS every 20 ms until stopped; also reads VmHWM at the end. */
function memoryWatch(pid: number) {
  const idle = status(pid).VmRSS ?? 0;
  const hwmReset = resetPeak(pid);
  let peak = idle;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, status(pid).VmRSS ?? 0);
    } catch {
      /* process gone */
    }
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      const s = status(pid);
      const sampledPeak = Math.max(peak, s.VmRSS ?? 0);
      const hwm = hwmReset ? (s.VmHWM ?? sampledPeak) : sampledPeak;
      return { idle, peak: Math.max(sampledPeak, hwm), hwmReset };
    },
  };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const rate = (bytes: number, seconds: number) => `${(bytes / seconds / 1e6).toFixed(0)} MB/s`;

// ---------------------------------------------------------------- helpers

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not come up`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Runs curl without blocking this process (the Node baseline server lives in it). */
function curl(args: string[]): Promise<{ code: number; bytes: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{size_upload} %{time_total}', ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status !== 0) return reject(new Error(`curl failed (${status}): ${err}`));
      const [code, down, up, total] = out.trim().split(' ').map(Number);
      resolve({ code: code!, bytes: Math.max(down!, up!), seconds: total! });
    });
  });
}

/** Best time of n full downloads (n = 0: one run, for warming up). */
async function fullDownload(url: string, expected: number, runs: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < Math.max(1, runs); i++) {
    const r = await curl([url]);
    if (r.code !== 200 || r.bytes !== expected) throw new Error(`${url}: ${r.code}, ${r.bytes} bytes`);
    best = Math.min(best, r.seconds);
  }
  return best;
}

/** Sequential 1 MiB Range requests at the same pseudo-random offsets, over one keep-alive connection. */
async function rangeDownloads(url: string, size: number, offsets: number[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (start: number) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(url, { agent, headers: { range: `bytes=${start}-${start + MiB - 1}` } }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => (res.statusCode === 206 ? resolve(n) : reject(new Error(`${url}: ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  await get(0); // connect and warm
  const started = performance.now();
  let bytes = 0;
  for (const o of offsets) bytes += await get(o);
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  if (bytes !== offsets.length * MiB) throw new Error(`ranges: got ${bytes} bytes`);
  void size;
  return seconds;
}

// ---------------------------------------------------------------- baselines

async function startNginx(root: string, work: string): Promise<{ url: string; stop(): void } | undefined> {
  if (spawnSync('nginx', ['-v']).error) return undefined;
  const port = await freePort();
  const conf = path.join(work, 'nginx.conf');
  await fsp.writeFile(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
pid ${work}/nginx.pid;
error_log ${work}/nginx-error.log;
events { worker_connections 64; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${work}/nginx-body;
  proxy_temp_path ${work}/nginx-proxy;
  fastcgi_temp_path ${work}/nginx-fastcgi;
  uwsgi_temp_path ${work}/nginx-uwsgi;
  scgi_temp_path ${work}/nginx-scgi;
  types { video/mp4 mp4; }
  server { listen 127.0.0.1:${port}; root ${root}; }
}
`,
  );
  const child = spawn('nginx', ['-c', conf], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`);
  return { url, stop: () => child.kill('SIGTERM') };
}

async function startNodeFsServer(root: string): Promise<{ url: string; stop(): void }> {
  const server = http.createServer(async (req, res) => {
    const file = path.join(root, path.basename(new URL(req.url ?? '/', 'http://x').pathname));
    let st: fs.Stats;
    try {
      st = await fsp.stat(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
    res.writeHead(m ? 206 : 200, {
      'content-length': end - start + 1,
      'content-type': 'video/mp4',
      ...(m ? { 'content-range': `bytes ${start}-${end}/${st.size}` } : {}),
    });
    await pipeline(fs.createReadStream(file, { start, end, highWaterMark: MiB }), res).catch(() => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => server.close() };
}

// ---------------------------------------------------------------- the control plane

/** A scratch database on BENCH_DATABASE_URL's server, or undefined for the embedded one. */
async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) return undefined;
  const { default: postgres } = await import('postgres');
  const name = `mm_bench_${randomBytes(4).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`CREATE DATABASE "${name}"`);
  await sql.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(admin, { max: 1, onnotice: () => {} });
      await again.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await again.end();
    },
  };
}

async function startControlPlane(dataDir: string, databaseUrl = ''): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  // MM_BENCH_PROFILE_DIR: a CPU profile of the server (node --cpu-prof) lands there.
  const profile = process.env.MM_BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.MM_BENCH_PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(repoRoot, 'packages/server/bin/mm-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MM_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', MM_API_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        const m = /"url":"(http:\/\/[^"]+)"/.exec(line);
        if (m && line.includes('listening')) {
          child.stdout!.off('data', onData);
          child.stdout!.resume(); // keep draining the request log
          resolve(m[1]!);
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`mm-server exited with ${code} before listening`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// ---------------------------------------------------------------- main

async function main() {
  console.log(holdFreedPagesForRun().note);
  const size = sizeMiB * MiB;
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-'));
  const dataDir = path.join(work, 'data');
  const served = path.join(work, 'served');
  await fsp.mkdir(path.join(dataDir, 'results'), { recursive: true });
  await fsp.mkdir(served);
  const cleanups: Array<() => unknown> = [];
  try {
    console.log(`machine: ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`);
    console.log(`writing a ${sizeMiB} MiB test file...`);
    const source = path.join(work, 'video.mp4');
    {
      // An MP4-looking head, then incompressible bytes (a random 8 MiB block repeated).
      const block = randomBytes(8 * MiB);
      Buffer.from([0, 0, 0, 0x18]).copy(block, 0);
      Buffer.from('ftypisom').copy(block, 4);
      const out = fs.createWriteStream(source);
      for (let written = 0; written < size; written += block.length) {
        const chunk = block.subarray(0, Math.min(block.length, size - written));
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    }
    // The same bytes for the baselines and the results-folder route (hard links: no extra disk).
    await fsp.link(source, path.join(served, 'video.mp4'));
    await fsp.link(source, path.join(dataDir, 'results', 'video.mp4'));

    const scratch = await scratchDatabase();
    if (scratch) cleanups.push(() => scratch.drop());
    console.log(`database: ${scratch ? 'PostgreSQL (scratch database)' : 'embedded (pglite)'}`);
    const cp = await startControlPlane(dataDir, scratch?.url);
    cleanups.push(() => cp.stop());
    const pid = cp.child.pid!;
    await new Promise((r) => setTimeout(r, 2000)); // let startup allocations settle
    const created = await fetch(`${cp.url}/api/invocations/create/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', description: '' }),
    });
    const { id } = (await created.json()) as { id: number };

    // 1. Upload.
    const uploadWatch = memoryWatch(pid);
    const up = await curl(['-F', 'file_type=input_video', '-F', `file=@${source};type=video/mp4`, `${cp.url}/api/invocations/${id}/upload/`]);
    const upMem = uploadWatch.stop();
    if (up.code !== 201) throw new Error(`upload answered ${up.code}`);
    console.log(`\n1. upload ${sizeMiB} MiB with curl`);
    console.log(`   ${rate(size, up.seconds)} (${up.seconds.toFixed(2)} s)`);
    console.log(
      `   server RSS: idle ${mb(upMem.idle)}, peak ${mb(upMem.peak)}, peak above idle ${mb(upMem.peak - upMem.idle)}` +
        `${upMem.hwmReset ? ' (VmHWM reset before the phase)' : ' (sampled every 20 ms)'}`,
    );

    // 2. Downloads.
    const nginx = await startNginx(served, work);
    if (nginx) cleanups.push(() => nginx.stop());
    const nodeFs = await startNodeFsServer(served);
    cleanups.push(() => nodeFs.stop());
    const targets: Array<[string, string]> = [
      ['control plane, /files/input_video/', `${cp.url}/api/invocations/${id}/files/input_video/`],
      ['control plane, /videos/results/', `${cp.url}/api/videos/results/video.mp4`],
      ...(nginx ? ([['nginx (sendfile)', `${nginx.url}/video.mp4`]] as Array<[string, string]>) : []),
      ['minimal Node fs server', `${nodeFs.url}/video.mp4`],
    ];
    const offsets = Array.from({ length: rangeCount }, (_, i) => ((i * 2654435761) % (sizeMiB - 1)) * MiB + ((i * 7919) % 4096));
    console.log(`\n2. downloads (best of 3 interleaved rounds after a warm-up; full: curl; ranges: ${rangeCount} sequential 1 MiB requests on one keep-alive connection)`);
    const results = targets.map(([name]) => ({ name, full: 0, ranges: 0 }));
    const downloadWatch = memoryWatch(pid);
    // Interleaved rounds, best of each: the machine is shared, order effects and noise average out.
    for (const [, url] of targets) await fullDownload(url, size, 0); // warm-up
    for (let round = 0; round < 3; round++) {
      for (const [i, [, url]] of targets.entries()) {
        const r = results[i]!;
        r.full = Math.max(r.full, size / (await fullDownload(url, size, 1)));
        r.ranges = Math.max(r.ranges, (rangeCount * MiB) / (await rangeDownloads(url, size, offsets)));
      }
    }
    const downMem = downloadWatch.stop();
    const reference = results.find((r) => r.name.startsWith('nginx')) ?? results.at(-1)!;
    for (const r of results) {
      console.log(
        `   ${r.name.padEnd(36)} full ${(r.full / 1e6).toFixed(0).padStart(5)} MB/s (${(r.full / reference.full).toFixed(2)}×)` +
          `   1 MiB ranges ${(r.ranges / 1e6).toFixed(0).padStart(5)} MB/s, ${(r.ranges / MiB).toFixed(0)} req/s (${(r.ranges / reference.ranges).toFixed(2)}×)`,
      );
    }
    console.log(`   (× relative to ${reference.name}); server peak RSS above idle while serving: ${mb(downMem.peak - downMem.idle)}`);

    // 3. ZIP.
    const zipWatch = memoryWatch(pid);
    const zip = await curl([`${cp.url}/api/invocations/${id}/download/`]);
    const zipMem = zipWatch.stop();
    if (zip.code !== 200 || zip.bytes < size) throw new Error(`zip answered ${zip.code} with ${zip.bytes} bytes`);
    console.log(`\n3. ZIP of the ${sizeMiB} MiB invocation`);
    console.log(`   ${rate(zip.bytes, zip.seconds)} (${mb(zip.bytes)} in ${zip.seconds.toFixed(2)} s)`);
    console.log(`   server RSS: idle ${mb(zipMem.idle)}, peak above idle ${mb(zipMem.peak - zipMem.idle)}`);
    console.log(`\nload after the run: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    for (const c of cleanups.reverse()) await c();
    await fsp.rm(work, { recursive: true, force: true });
  }
}

await main();
