/**
 * `mm run` benchmark (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/cli-run.ts [--size-mib 1024]
 *
 * Starts the control plane and `mm-agent --simulate` as processes (embedded database,
 * temp folders), writes a weights file of random bytes, then:
 * 1. `mm run --weights <file> --json` from the client's bundle with an empty cache: its
 *    own split into hashing, upload (tus), transfer to the board, run and download;
 * 2. curl's multipart upload of the same file (POST /api/invocations/<id>/upload/) in the
 *    same run, for the upload throughput to compare with;
 * 3. `mm run` again with the same file: hash cache and attach by digest (nothing sent).
 *
 * As root on a VM that hands freed memory back to its host, the run holds it first (bench-kit's
 * holdFreedPagesForRun: writes into returned memory cost 6× here); --keep-page-reporting does not.
 */
import { spawnSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cliHome } from '../test/support/cli.ts';
import { serverCluster, startAgent } from '../test/support/processes.ts';
import { holdFreedPagesForRun, writeRandomFile } from './support/bench-kit.ts';

const MiB = 1024 * 1024;
const i = process.argv.indexOf('--size-mib');
const sizeMiB = i >= 0 ? Number(process.argv[i + 1]) : 1024;
if (!Number.isFinite(sizeMiB) || sizeMiB <= 0) throw new Error('--size-mib must be a positive number');
const size = Math.round(sizeMiB * MiB);

const rate = (bytes: number, ms: number) => `${((bytes / MiB) / (ms / 1000)).toFixed(0)} MiB/s`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

console.log(holdFreedPagesForRun().note);
const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-cli-'));
const cluster = await serverCluster('embedded', { LOG_LEVEL: 'warn' });
const cli = await cliHome();
let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
try {
  const server = await cluster.start({ LOG_LEVEL: 'info' });
  const board = (await (await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string; token: string };
  agent = await startAgent({ serverUrl: server.url, token: board.token, agentDir: path.join(scratch, 'agent'), env: { MM_CACHE_MAX_BYTES: String(4 * size + 100 * MiB) } });
  for (let t = 0; ; t++) {
    const b = (await (await server.api(`/api/boards/${board.id}/`)).json()) as { status: string };
    if (b.status === 'online') break;
    if (t > 240) throw new Error('the agent did not come online');
    await new Promise((r) => setTimeout(r, 500));
  }
  const weights = path.join(scratch, 'weights.bin');
  await writeRandomFile(weights, size);
  const env = { MM_SERVER_URL: server.url };
  console.log(`mm run with a ${sizeMiB} MiB weights file (cpus: ${os.cpus().length}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);

  const t0 = Date.now();
  const run = await cli.run(['run', '--name', 'bench', '--weights', weights, '-o', path.join(scratch, 'out.mp4'), '--json'], env);
  const wall = Date.now() - t0;
  if (run.code !== 0) throw new Error(`mm run exited ${run.code}: ${run.stderr}`);
  const doc = JSON.parse(run.stdout) as {
    timings_ms: { hash: number; upload: number; run: number; phases: Record<string, number>; download: number; total: number };
    output: { size: number };
  };
  const t = doc.timings_ms;
  console.log(`  hashing            ${secs(t.hash)}  (${rate(size, t.hash)})`);
  console.log(`  upload (tus)       ${secs(t.upload)}  (${rate(size, t.upload)})`);
  for (const [phase, ms] of Object.entries(t.phases)) console.log(`  board: ${phase.padEnd(11)} ${secs(ms)}${phase === 'transfer' ? `  (${rate(size, ms)})` : ''}`);
  console.log(`  run (all phases)   ${secs(t.run)}`);
  console.log(`  download output    ${secs(t.download)}  (${doc.output.size} bytes)`);
  console.log(`  total              ${secs(t.total)}  (process wall time ${secs(wall)})`);

  // curl's multipart upload of the same file, same server, same run.
  const inv = (await (await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'curl', description: '' }) })).json()) as { id: number };
  const c0 = Date.now();
  const curl = spawnSync('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-F', 'file_type=weights', '-F', `file=@${weights}`, `${server.url}/api/invocations/${inv.id}/upload/`], { encoding: 'utf8' });
  const curlMs = Date.now() - c0;
  if (curl.stdout.trim() !== '201') throw new Error(`curl upload answered ${curl.stdout} ${curl.stderr}`);
  console.log(`  curl multipart     ${secs(curlMs)}  (${rate(size, curlMs)})`);
  console.log(`  tus / curl upload throughput: ${(curlMs / t.upload).toFixed(2)}x`);

  const a0 = Date.now();
  const again = await cli.run(['run', '--name', 'bench', '--weights', weights, '-o', path.join(scratch, 'out2.mp4'), '--json'], env);
  if (again.code !== 0) throw new Error(`second mm run exited ${again.code}: ${again.stderr}`);
  const t2 = (JSON.parse(again.stdout) as typeof doc).timings_ms;
  console.log(`second mm run, same file: hashing ${secs(t2.hash)} (cache), upload ${secs(t2.upload)} (attach by digest), total ${secs(Date.now() - a0)}`);
} finally {
  await agent?.stop();
  await cluster.cleanup();
  await cli.cleanup();
  await fsp.rm(scratch, { recursive: true, force: true });
}
