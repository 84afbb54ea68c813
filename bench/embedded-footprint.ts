/**
 * The embedded database's footprint (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/embedded-footprint.ts [--settle-s 10] [--node-arg=ARG ...] [--env=NAME=VALUE ...]
 *
 * Starts the control plane as `npx -y pnpm@10 start` does (packages/server/bin/mm-server.mjs,
 * no DATABASE_URL, a new data folder) and reports, for the server process and every process
 * under it (the sum of RSS and of PSS from /proc/<pid>/smaps_rollup):
 * 1. first start (initdb and migrations): time until /api/health/ answers, memory once settled;
 * 2. after a board's work: a simulated agent registered and linked, an invocation given a
 *    parameter file, transferred and executed (the agent's own memory is not counted);
 * 3. restart on the same folder: time until healthy, memory once settled.
 * With DATABASE_URL (or MM_TEST_DATABASE_URL) set, the same on that PostgreSQL for reference
 * (a scratch database; the PostgreSQL server's own memory is not counted there).
 *
 * Timings on a shared machine are upper bounds: the load average is printed with them.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { realDatabaseUrl, type DbKind } from '../test/support/databases.ts';
import { serverCluster, startAgent, type ServerProcess } from '../test/support/processes.ts';

const nodeArgs = process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length));
const extraEnv = Object.fromEntries(
  process.argv.filter((a) => a.startsWith('--env=')).map((a) => {
    const [k, ...v] = a.slice('--env='.length).split('=');
    return [k!, v.join('=')];
  }),
);
const settleIdx = process.argv.indexOf('--settle-s');
const settleMs = (settleIdx >= 0 ? Number(process.argv[settleIdx + 1]) : 10) * 1000;

interface Memory {
  rssMB: number;
  pssMB: number;
  processes: number;
}

async function children(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** RSS and PSS of a process and all its descendants. */
async function treeMemory(root: number): Promise<Memory> {
  const pids = [root];
  for (let i = 0; i < pids.length; i++) pids.push(...(await children(pids[i]!)));
  let rss = 0;
  let pss = 0;
  let processes = 0;
  for (const pid of pids) {
    try {
      const text = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
      processes++;
    } catch {
      // gone meanwhile
    }
  }
  return { rssMB: Math.round(rss / 1024), pssMB: Math.round(pss / 1024), processes };
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api<T>(server: ServerProcess, pathname: string, init?: RequestInit & { json?: unknown }): Promise<T> {
  const res = await server.api(pathname, {
    ...init,
    ...(init?.json !== undefined ? { body: JSON.stringify(init.json), headers: { 'content-type': 'application/json' } } : {}),
  });
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${pathname} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Starts the server and times it from spawn to a healthy answer. */
async function timedStart(cluster: Awaited<ReturnType<typeof serverCluster>>): Promise<{ server: ServerProcess; ms: number }> {
  const t0 = performance.now();
  const server = await cluster.start();
  for (;;) {
    const ok = await server.api('/api/health/').then((r) => r.ok, () => false);
    if (ok) break;
    await sleep(100);
  }
  return { server, ms: performance.now() - t0 };
}

async function boardWork(server: ServerProcess, scratch: string): Promise<void> {
  const board = await api<{ id: string; token: string }>(server, '/api/boards/', { method: 'POST', json: { name: 'footprint' } });
  const agent = await startAgent({ serverUrl: server.url, token: board.token, agentDir: path.join(scratch, 'agent'), env: { LOG_LEVEL: 'warn' } });
  try {
    for (let t = 0; ; t++) {
      const b = await api<{ status: string }>(server, `/api/boards/${board.id}/`);
      if (b.status === 'online') break;
      if (t > 600) throw new Error('the simulated board did not come online');
      await sleep(200);
    }
    const inv = await api<{ id: number }>(server, '/api/invocations/create/', { method: 'POST', json: { name: 'footprint', description: '' } });
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob([JSON.stringify({ duration_s: 1 })]), 'params.json');
    const up = await server.api(`/api/invocations/${inv.id}/upload/`, { method: 'POST', body: form });
    if (up.status !== 201) throw new Error(`upload answered ${up.status}`);
    await api(server, `/api/invocations/${inv.id}/transfer/`, { method: 'POST', json: { board_id: board.id } });
    await api(server, `/api/invocations/${inv.id}/execute/`, { method: 'POST', json: { board_id: board.id } });
  } finally {
    await agent.stop();
  }
}

async function measure(kind: DbKind): Promise<void> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-footprint-'));
  const cluster = await serverCluster(kind, extraEnv, nodeArgs);
  const rows: string[] = [];
  const row = (what: string, mem: Memory, ms?: number) =>
    rows.push(
      `${kind.padEnd(8)} ${what.padEnd(26)} ${(ms === undefined ? '' : `${(ms / 1000).toFixed(1)} s`).padStart(8)}  RSS ${String(mem.rssMB).padStart(5)} MB  PSS ${String(mem.pssMB).padStart(5)} MB  (${mem.processes} process${mem.processes === 1 ? '' : 'es'}; load ${load()})`,
    );
  try {
    let { server, ms } = await timedStart(cluster);
    await sleep(settleMs);
    row('first start, idle', await treeMemory(server.pid), ms);
    await boardWork(server, scratch);
    await sleep(settleMs);
    row('after transfer + execute', await treeMemory(server.pid));
    await server.stop();
    ({ server, ms } = await timedStart(cluster));
    await sleep(settleMs);
    row('restart, idle', await treeMemory(server.pid), ms);
    await boardWork(server, scratch);
    await sleep(settleMs);
    row('restart, after the work', await treeMemory(server.pid));
  } finally {
    await cluster.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  }
  console.log(rows.join('\n'));
}

console.log(`node ${process.version} ${[...nodeArgs, ...Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`)].join(' ')}, ${os.cpus().length} CPUs, settle ${settleMs / 1000} s`);
await measure('embedded');
if (realDatabaseUrl) await measure('postgres');
