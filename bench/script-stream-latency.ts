/**
 * Command-to-event latency of the device-script relay (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/script-stream-latency.ts [--clients 1000] [--commands 50] [--gap-ms 20]
 *
 * A real control plane (`node packages/server/bin/mm-server.mjs`, embedded database unless
 * DATABASE_URL is set) and a real simulated board (`node packages/agent/bin/mm-agent.mjs
 * --simulate`, running the GPIO motor script) as child processes. `--clients` SSE clients
 * follow GET /api/device-scripts/<id>/stream/; then `--commands` motor commands go through
 * POST /api/device-scripts/<id>/proxy/motor/<forward|backward>, one after the other (the
 * next once every client has the previous event, plus `--gap-ms`). Latency is the time from
 * sending a POST to each client's receipt of that command's event (matched by the event id
 * the script answers with): p50 / p99 / max over all (client, command) pairs. Goal: p99 <
 * 100 ms. Also: the board holds one upstream (motor script `/state` stream_clients), and the
 * server's RSS idle, with the clients connected, and at its peak (VmHWM).
 *
 * The clients live in this one process, so their own parsing is part of the figure (an upper
 * bound for what a client would see); the machine's load average is printed alongside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { freePort, openSse, upstreamState, type SseReader } from '../test/e2e/device-scripts-support.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return v;
}
const clientCount = arg('clients', 1000);
const commandCount = arg('commands', 50);
const gapMs = arg('gap-ms', 20);

function memory(pid: number): { rss: number; hwm: number } {
  const out: Record<string, number> = {};
  for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(Vm\w+):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * 1024;
  }
  return { rss: out.VmRSS ?? 0, hwm: out.VmHWM ?? 0 };
}
/** CPU time a process has used so far (user + system), in ms. */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat (11 and 12 after "pid (comm) state").
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (v: number) => `${v.toFixed(1)} ms`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

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
let stopping = false;

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
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
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-relay-'));
  const agentDir = path.join(dataDir, 'agent');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  const clients: SseReader[] = [];
  try {
    const server = start('mm-server', ['packages/server/bin/mm-server.mjs'], { PORT: String(port), MM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    children.push(server);
    await until('the server', async () => ((await fetch(`${base}/api/health/`)).ok ? true : undefined), 120_000);

    const board = (await (await fetch(`${base}/api/boards/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string; token: string };
    const { scripts } = (await (await fetch(`${base}/api/device-scripts/?device_type=gpio`)).json()) as { scripts: Array<{ id: string }> };
    const scriptId = scripts[0]!.id;
    const gpioPort = await freePort();
    await fetch(`${base}/api/device-scripts/${scriptId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: gpioPort }) });
    const agent = start('mm-agent', ['packages/agent/bin/mm-agent.mjs', '--simulate'], {
      MM_SERVER_URL: base,
      MM_BOARD_TOKEN: board.token,
      MM_AGENT_DIR: agentDir,
      MM_SIM_GPIO_PORT: String(gpioPort),
      LOG_LEVEL: 'warn',
    });
    children.push(agent);
    const proxy = (p: string, init?: RequestInit) => fetch(`${base}/api/device-scripts/${scriptId}/proxy/${p}`, init);
    await until('the simulated board', async () => ((await proxy('state')).ok ? true : undefined), 120_000);

    const idle = memory(server.pid!);
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    const connectStart = performance.now();
    for (let i = 0; i < clientCount; i += 100) {
      const batch = await Promise.all(Array.from({ length: Math.min(100, clientCount - i) }, () => openSse(`${base}/api/device-scripts/${scriptId}/stream/`, {}, keepAlive)));
      clients.push(...batch);
    }
    await Promise.all(clients.map((c) => c.waitFor((b) => upstreamState(b) === 'up', { timeoutMs: 120_000 })));
    const connectMs = performance.now() - connectStart;
    const state = (await (await proxy('state')).json()) as { stream_clients: number };
    const connected = memory(server.pid!);

    // Each client notes when each state event arrives, by id.
    const arrivals = clients.map(() => new Map<string, number>());
    clients.forEach((c, i) => {
      c.onBlock = (b) => {
        if (b.event === 'state' && b.id !== undefined) arrivals[i]!.set(b.id, performance.now());
      };
    });

    const latencies: number[] = [];
    /** Per command: the POST's round trip, the first client's receipt, and first-to-last spread. */
    const roundTrips: number[] = [];
    const firsts: number[] = [];
    const spreads: number[] = [];
    let missing = 0;
    const runStart = performance.now();
    const cpuStart = { server: cpuMs(server.pid!), agent: cpuMs(agent.pid!), bench: process.cpuUsage() };
    for (let n = 0; n < commandCount; n++) {
      const motion = n % 2 === 0 ? 'forward' : 'backward';
      const sentAt = performance.now();
      const res = await proxy(`motor/${motion}`, { method: 'POST' });
      const { event_id: eventId } = (await res.json()) as { event_id: number };
      roundTrips.push(performance.now() - sentAt);
      const id = String(eventId);
      const deadline = Date.now() + 10_000;
      while (arrivals.some((a) => !a.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      let first = Infinity;
      let last = -Infinity;
      for (const a of arrivals) {
        const at = a.get(id);
        if (at === undefined) missing++;
        else {
          latencies.push(at - sentAt);
          first = Math.min(first, at);
          last = Math.max(last, at);
        }
      }
      if (Number.isFinite(first)) {
        firsts.push(first - sentAt);
        spreads.push(last - first);
      }
      if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    }
    const runMs = performance.now() - runStart;
    const benchCpu = process.cpuUsage(cpuStart.bench);
    const cpuPerCommand = {
      server: (cpuMs(server.pid!) - cpuStart.server) / commandCount,
      agent: (cpuMs(agent.pid!) - cpuStart.agent) / commandCount,
      bench: (benchCpu.user + benchCpu.system) / 1000 / commandCount,
    };
    const after = memory(server.pid!);
    for (const list of [latencies, roundTrips, firsts, spreads]) list.sort((a, b) => a - b);
    const dist = (list: number[]) => `p50 ${ms(percentile(list, 50))}, p99 ${ms(percentile(list, 99))}`;

    const [l1, l5, l15] = os.loadavg();
    console.log(`script-stream-latency: ${clientCount} SSE clients, ${commandCount} commands (${gapMs} ms apart) on ${os.cpus().length} cores`);
    console.log(`  load average at the end: ${l1!.toFixed(2)} / ${l5!.toFixed(2)} / ${l15!.toFixed(2)} (1 / 5 / 15 min)`);
    console.log(`  clients connected and up in ${ms(connectMs)}; the board holds ${state.stream_clients} upstream stream(s)`);
    console.log(`  command → event at each client: p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(latencies.at(-1) ?? Number.NaN)} over ${latencies.length} receipts (${missing} missing) in ${ms(runMs)}`);
    console.log(`  goal p99 < 100 ms: ${percentile(latencies, 99) < 100 ? 'met' : 'NOT met'}`);
    console.log(`  per command: POST round trip ${dist(roundTrips)}; first client's receipt ${dist(firsts)}; first-to-last client spread ${dist(spreads)}`);
    console.log(`  CPU per command: server ${ms(cpuPerCommand.server)}, agent and script ${ms(cpuPerCommand.agent)}, these clients ${ms(cpuPerCommand.bench)}`);
    console.log(`  server RSS: idle ${mb(idle.rss)}, with the clients ${mb(connected.rss)} (+${mb(connected.rss - idle.rss)}), after the run ${mb(after.rss)}, peak (VmHWM) ${mb(after.hwm)}`);
  } finally {
    stopping = true;
    for (const c of clients) c.close();
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
    await fsp.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
