/**
 * Event latency across replicas (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/replica-latency.ts [--commands 100] [--clients 10] [--gap-ms 20]
 *
 * Two control planes (`mm-server`, replicas A and B) on one fresh database on the PostgreSQL
 * of DATABASE_URL, sharing a data folder, and one simulated board (`mm-agent --simulate`,
 * running the GPIO motor script) linked to A. `--clients` SSE clients follow the motor
 * script's stream on each replica. Motor commands alternate between POSTs through A (the
 * replica holding the board's link) and through B (relayed to A through `board_calls`).
 * For each command: the time from sending the POST to each client's receipt of its event
 * (matched by the event id the script answers with), split by where the command went in and
 * where the client is. A client on B gets the event through `relay_events` and a NOTIFY.
 *
 * Everything runs on this machine with the clients in this process: the figures are upper
 * bounds on a loaded machine; the load average is printed alongside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { freePort, openSse, upstreamState, type SseReader } from '../test/e2e/device-scripts-support.ts';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return v;
}
const commandCount = arg('commands', 100);
const clientsPerReplica = Math.max(1, arg('clients', 10));
const gapMs = arg('gap-ms', 20);

const ms = (v: number) => `${v.toFixed(1)} ms`;
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const dist = (list: number[]) => {
  const s = [...list].sort((a, b) => a - b);
  return `p50 ${ms(percentile(s, 50))}, p99 ${ms(percentile(s, 99))}, max ${ms(s.at(-1) ?? Number.NaN)} (n=${s.length})`;
};

let stopping = false;
function start(name: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (c: Buffer) => (tail = (tail + c.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`${name} exited (${code ?? signal}):\n${tail}`);
  });
  return child;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  if (!realDatabaseUrl) throw new Error('set DATABASE_URL to a PostgreSQL server (a fresh database is made on it and dropped after)');
  const scratch = await createScratchDatabase();
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-replicas-'));
  const children: ChildProcess[] = [];
  const clients: Array<{ replica: 'A' | 'B'; reader: SseReader; arrivals: Map<string, number> }> = [];
  try {
    const ports = { A: await freePort(), B: await freePort() };
    const base = { A: `http://127.0.0.1:${ports.A}`, B: `http://127.0.0.1:${ports.B}` };
    const serverEnv = (name: 'A' | 'B') => ({
      PORT: String(ports[name]),
      MM_DATA_DIR: dataDir,
      DATABASE_URL: scratch.url,
      MM_REPLICA_ID: `replica-${name.toLowerCase()}`,
      LOG_LEVEL: 'warn',
    });
    // A migrates the database first.
    children.push(start('replica A', ['packages/server/bin/mm-server.mjs'], serverEnv('A')));
    await until('replica A', async () => ((await fetch(`${base.A}/api/health/`)).ok ? true : undefined));
    children.push(start('replica B', ['packages/server/bin/mm-server.mjs'], serverEnv('B')));
    await until('replica B', async () => ((await fetch(`${base.B}/api/health/`)).ok ? true : undefined));

    const board = (await (await fetch(`${base.B}/api/boards/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })).json()) as { token: string };
    const { scripts } = (await (await fetch(`${base.A}/api/device-scripts/?device_type=gpio`)).json()) as { scripts: Array<{ id: string }> };
    const scriptId = scripts[0]!.id;
    const gpioPort = await freePort();
    await fetch(`${base.A}/api/device-scripts/${scriptId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: gpioPort }) });
    children.push(
      start('mm-agent', ['packages/agent/bin/mm-agent.mjs', '--simulate'], {
        MM_SERVER_URL: base.A,
        MM_BOARD_TOKEN: board.token,
        MM_AGENT_DIR: path.join(dataDir, 'agent'),
        MM_SIM_GPIO_PORT: String(gpioPort),
        LOG_LEVEL: 'warn',
      }),
    );
    const proxy = (via: 'A' | 'B', p: string, init?: RequestInit) => fetch(`${base[via]}/api/device-scripts/${scriptId}/proxy/${p}`, init);
    await until('the simulated board through B', async () => ((await proxy('B', 'state')).ok ? true : undefined));

    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    for (const replica of ['A', 'B'] as const) {
      for (let i = 0; i < clientsPerReplica; i++) {
        const reader = await openSse(`${base[replica]}/api/device-scripts/${scriptId}/stream/`, {}, keepAlive);
        const arrivals = new Map<string, number>();
        reader.onBlock = (b) => {
          if (b.event === 'state' && b.id !== undefined) arrivals.set(b.id, performance.now());
        };
        clients.push({ replica, reader, arrivals });
      }
    }
    await Promise.all(clients.map((c) => c.reader.waitFor((b) => upstreamState(b) === 'up', { timeoutMs: 60_000 })));

    const latency = { 'A→A': [] as number[], 'A→B': [] as number[], 'B→A': [] as number[], 'B→B': [] as number[] };
    const roundTrip = { A: [] as number[], B: [] as number[] };
    const crossDelta: number[] = [];
    let missing = 0;
    for (let n = 0; n < commandCount; n++) {
      const via = n % 2 === 0 ? 'A' : 'B';
      const motion = n % 4 < 2 ? 'forward' : 'backward';
      const sentAt = performance.now();
      const res = await proxy(via, `motor/${motion}`, { method: 'POST' });
      const { event_id: eventId } = (await res.json()) as { event_id: number };
      roundTrip[via].push(performance.now() - sentAt);
      const id = String(eventId);
      const deadline = Date.now() + 10_000;
      while (clients.some((c) => !c.arrivals.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      let firstOnA = Infinity;
      let firstOnB = Infinity;
      for (const c of clients) {
        const at = c.arrivals.get(id);
        if (at === undefined) {
          missing++;
          continue;
        }
        latency[`${via}→${c.replica}`].push(at - sentAt);
        if (c.replica === 'A') firstOnA = Math.min(firstOnA, at);
        else firstOnB = Math.min(firstOnB, at);
      }
      if (Number.isFinite(firstOnA) && Number.isFinite(firstOnB)) crossDelta.push(firstOnB - firstOnA);
      if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    }

    const [l1, l5, l15] = os.loadavg();
    console.log(`replica-latency: ${commandCount} motor commands (${gapMs} ms apart), ${clientsPerReplica} stream clients on each of 2 replicas, board linked to A, ${os.cpus().length} cores`);
    console.log(`  load average at the end: ${l1!.toFixed(2)} / ${l5!.toFixed(2)} / ${l15!.toFixed(2)} (1 / 5 / 15 min)`);
    console.log(`  POST round trip through A (holds the link): ${dist(roundTrip.A)}`);
    console.log(`  POST round trip through B (board_calls to A): ${dist(roundTrip.B)}`);
    for (const [k, v] of Object.entries(latency)) console.log(`  command through ${k[0]} → event at a client on ${k[2]}: ${dist(v)}`);
    console.log(`  same event, first client on B minus first client on A (the cross-replica hop): ${dist(crossDelta)}`);
    console.log(`  missing receipts: ${missing}`);
  } finally {
    stopping = true;
    for (const c of clients) c.reader.close();
    for (const child of children.reverse()) {
      child.kill('SIGTERM');
      await new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r(undefined);
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
    await scratch.drop();
    await fsp.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
