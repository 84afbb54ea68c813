/**
 * Many boards on one control plane (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/many-agents.ts [--agents 10000] [--generators 2] [--rest-s 60]
 *                                [--restart kill|term] [--replicas 3] [--urls http://a,http://b] [--node-arg=ARG ...]
 *
 * Without --urls it starts one control plane process: on the real PostgreSQL when DATABASE_URL or
 * MM_TEST_DATABASE_URL is set (a scratch database, dropped at the end; the boards are inserted
 * into it directly, tokens hashed as the API does: 10,000 API calls would take minutes), otherwise
 * on the embedded one (the boards registered through the API). A light load generator then links them all: `--generators`
 * child processes, each holding its share of WebSockets that speak the agent link as the agent
 * does (packages/protocol's LinkPeer: hello, welcome, pings and the silence timeout), and
 * reconnect as the agent does (its capped backoff with full jitter, packages/agent/src/link/backoff.ts,
 * reset after a link that was up). It is not an agent: it answers no operation.
 *
 * Figures: time to link them all; the server's RSS/PSS with every board linked; the server's CPU
 * over `--rest-s` seconds at rest (pings both ways, nothing else); after the server is killed
 * (`--restart kill`: SIGKILL, a crash; `term`: a graceful stop) and started again, the time until
 * every board is linked again and the connection attempts per second the server saw meanwhile
 * (spread by the jitter, not a wall at one instant).
 *
 * With --replicas N (N > 1; the real PostgreSQL only): N control planes (MM_REPLICA_ID replica-1…N)
 * on the one scratch database, the agents spread over them (agent i prefers replica i mod N and,
 * as through a balancer, moves to another one, picked at random, after a failed attempt). Figures: the time to link
 * them all and where they landed (board_sessions), each replica's RSS/PSS and CPU at rest; then
 * replica-1 is killed (SIGKILL) and not started again: the time until every board is linked
 * again (its boards to the others), the attempts per second meanwhile, the survivors' CPU for
 * it and their RSS after.
 *
 * With --urls (several replicas started elsewhere, behind no balancer): the boards must
 * already exist, their tokens in --tokens FILE (one per line); agent i prefers url i mod n and
 * moves to another one after a failed attempt. No restart is done then.
 *
 * Timings on a shared machine are upper bounds: the load average is printed with them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import WebSocket from 'ws';
import { AGENT_CONNECT_PATH, AGENT_PULL_IDS, LinkPeer, parseServerMessage, PROTOCOL_VERSION, type AgentMessage, type ServerMessage } from '@mm/protocol';
import { fullJitterDelay, parseRetryAfterMs, RETRY_AFTER_STATUSES, retryAfterDelay } from '../packages/agent/src/link/backoff.ts';
import { cpuSeconds, cpuSince } from './support/bench-kit.ts';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';
import { serverCluster, type ServerCluster, type ServerProcess } from '../test/support/processes.ts';

const self = fileURLToPath(import.meta.url);
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};

/** The agent's defaults (packages/agent/src/config.ts, server-link.ts). */
const HEARTBEAT_INTERVAL_MS = 15_000;
const HEARTBEAT_TIMEOUT_MS = 45_000;
const RECONNECT_BASE_MS = 500;
const RECONNECT_MAX_DELAY_MS = 30_000;

// ── the generator (a child process) ───────────────────────────────────────────────────

interface GeneratorStart {
  kind: 'start';
  urls: string[];
  tokens: string[];
  /** Index of this generator's first agent among all (for url preference). */
  firstIndex: number;
  localAddress: string;
  /** At most this many handshakes in flight during the first linking (a ramp, not the reconnects). */
  rampConcurrency: number;
  /** bench/scheduler.ts: answer each op.start at once with a succeeded op.result (no files, no run). */
  answerOps?: boolean;
  /** With answerOps: how long each operation "runs" on average (0.5–1.5×) before its result is sent (default 0: at once). */
  runMs?: number;
}

/** Sent to the parent every 250 ms. */
interface GeneratorReport {
  kind: 'report';
  at: number;
  ready: number;
  /** Connection attempts since the previous report, by the second (epoch) each was made in. */
  attemptsBySecond: Array<[number, number]>;
  /** Welcomes and failed attempts since the previous report. */
  welcomes: number;
  failures: number;
}

const quietLog = { debug() {}, info() {}, warn() {}, error() {} };

async function generator(): Promise<void> {
  const start = await new Promise<GeneratorStart>((resolve) => process.once('message', (m) => resolve(m as GeneratorStart)));
  let ready = 0;
  // Counted by the second of the attempt itself: a report delayed by a busy event loop must not move them.
  let attempts = new Map<number, number>();
  let welcomes = 0;
  let failures = 0;
  let inRamp = true;
  let rampSlots = start.rampConcurrency;
  const rampWaiters: Array<() => void> = [];
  const takeSlot = async () => {
    if (!inRamp) return;
    if (rampSlots > 0) {
      rampSlots--;
      return;
    }
    await new Promise<void>((r) => rampWaiters.push(r));
  };
  const giveSlot = () => {
    const next = rampWaiters.shift();
    if (next) next();
    else rampSlots++;
  };

  /** How one connection ended: whether it reached welcome, and the Retry-After of a 503/429 refusal. */
  interface SessionEnd {
    welcomed: boolean;
    retryAfterMs?: number;
  }
  /** One connection: resolves when it ends. */
  const session = (url: string, token: string, index: number, onReady: () => void): Promise<SessionEnd> =>
    new Promise((resolve) => {
      const second = Math.floor(Date.now() / 1000);
      attempts.set(second, (attempts.get(second) ?? 0) + 1);
      let welcomed = false;
      let settled = false;
      let retryAfterMs: number | undefined;
      const end = () => {
        if (settled) return;
        settled = true;
        if (welcomed) ready--;
        else failures++;
        resolve(retryAfterMs === undefined ? { welcomed } : { welcomed, retryAfterMs });
      };
      const ws = new WebSocket(new URL(AGENT_CONNECT_PATH, url.replace(/^http/, 'ws')), {
        headers: { authorization: `Bearer ${token}` },
        perMessageDeflate: false,
        localAddress: start.localAddress,
        handshakeTimeout: HEARTBEAT_TIMEOUT_MS,
      });
      ws.on('unexpected-response', (_req, res) => {
        if (RETRY_AFTER_STATUSES.has(res.statusCode ?? 0)) retryAfterMs = parseRetryAfterMs(res.headers['retry-after'], Date.now());
        res.resume();
        ws.terminate();
        end();
      });
      ws.on('error', () => {
        if (ws.readyState !== WebSocket.OPEN) end();
      });
      new LinkPeer<ServerMessage, AgentMessage>({
        socket: ws,
        parse: parseServerMessage,
        pullIds: AGENT_PULL_IDS,
        peerName: 'the server',
        log: quietLog,
        heartbeat: { intervalMs: HEARTBEAT_INTERVAL_MS, timeoutMs: HEARTBEAT_TIMEOUT_MS },
        handlers: {
          opened: () => {
            ws.send(
              JSON.stringify({
                type: 'hello',
                protocol_version: PROTOCOL_VERSION,
                agent_version: '0.0.0-load',
                hostname: `load-${index}`,
                platform: 'linux',
                arch: 'arm64',
                boot_id: `load-boot-${index}`,
                active_pac: null,
                cached: [],
                running: [],
                finished: [],
              }),
            );
          },
          message: (m) => {
            if (m.type === 'op.start' && start.answerOps) {
              const answer = () => {
                const outcome = { op_id: m.op_id, status: 'succeeded', finished_at: new Date().toISOString(), result: {}, error: null, output: null };
                if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'op.result', outcome }));
              };
              // Run times spread over 0.5–1.5× runMs, as real runs differ: boards do not all end at once.
              if (start.runMs) setTimeout(answer, start.runMs * (0.5 + Math.random()));
              else answer();
            }
            if (m.type === 'welcome' && !welcomed) {
              welcomed = true;
              ready++;
              welcomes++;
              onReady();
            }
          },
          closed: end,
        },
      });
    });

  /** One simulated agent: the agent's reconnect loop (ServerLink.run) without the agent, Retry-After included. */
  const agent = async (token: string, i: number) => {
    const index = start.firstIndex + i;
    let attempt = 0;
    let urlIndex = index % start.urls.length;
    for (;;) {
      await takeSlot();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (inRamp) giveSlot();
      };
      const ended = await session(start.urls[urlIndex]!, token, index, release);
      release();
      if (ended.welcomed) attempt = 0;
      // Through a balancer: another replica, any of the others (a round robin spreads them).
      else if (start.urls.length > 1) urlIndex = (urlIndex + 1 + Math.floor(Math.random() * (start.urls.length - 1))) % start.urls.length;
      let delay = fullJitterDelay(attempt, RECONNECT_BASE_MS, RECONNECT_MAX_DELAY_MS);
      // As the agent: a 503 server_busy (or 429) with Retry-After is not asked again sooner.
      if (ended.retryAfterMs !== undefined) delay = retryAfterDelay(ended.retryAfterMs, delay, RECONNECT_MAX_DELAY_MS);
      attempt++;
      await new Promise((r) => setTimeout(r, delay));
    }
  };

  start.tokens.forEach((t, i) => void agent(t, i));
  const timer = setInterval(() => {
    if (inRamp && ready === start.tokens.length) inRamp = false;
    const report: GeneratorReport = { kind: 'report', at: Date.now(), ready, attemptsBySecond: [...attempts], welcomes, failures };
    attempts = new Map();
    welcomes = 0;
    failures = 0;
    process.send?.(report);
  }, 250);
  process.on('disconnect', () => {
    clearInterval(timer);
    process.exit(0);
  });
}

// ── the parent ────────────────────────────────────────────────────────────────────────

export interface Totals {
  ready: number;
  attemptsPerBucket: Map<number, number>;
  failures: number;
}

async function main(): Promise<void> {
  const agents = Number(arg('agents', '10000'));
  const generators = Number(arg('generators', '2'));
  const restSeconds = Number(arg('rest-s', '60'));
  const restart = arg('restart', 'kill');
  const urlsArg = arg('urls', '');
  const replicaCount = Number(arg('replicas', '1'));
  const nodeArgs = process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length));
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

  let cluster: ServerCluster | undefined;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let server: ServerProcess | undefined;
  let urls: string[];
  let tokens: string[];
  const children: ChildProcess[] = [];
  const replicaClusters: ServerCluster[] = [];
  try {
    if (replicaCount > 1) {
      if (urlsArg || !realDatabaseUrl) throw new Error('--replicas needs the real PostgreSQL (DATABASE_URL) and no --urls');
      scratch = await createScratchDatabase();
      const heartbeat = { MM_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_INTERVAL_MS), MM_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) };
      const startReplica = async (i: number) => {
        // 'embedded' keeps the cluster from making a database of its own: DATABASE_URL names the shared one.
        const c = await serverCluster('embedded', { LOG_LEVEL: 'warn', ...heartbeat, DATABASE_URL: scratch!.url, MM_REPLICA_ID: `replica-${i + 1}` }, nodeArgs);
        replicaClusters[i] = c;
        return c.start({ LOG_LEVEL: 'info' });
      };
      // The first one migrates the database; the others start together.
      const replicaServers = [await startReplica(0)];
      replicaServers.push(...(await Promise.all(Array.from({ length: replicaCount - 1 }, (_, i) => startReplica(i + 1)))));
      say(`${replicaCount} replicas on the real PostgreSQL: ${replicaServers.map((r) => `${r.url} (pid ${r.pid})`).join(', ')}`);
      tokens = await insertBoards(scratch.url, agents);
      say(`registered ${agents} boards in the database (load ${load()})`);
      await runReplicas(replicaServers, replicaClusters, scratch.url, tokens, { generators, restSeconds, children, say, load, sleep });
      return;
    }
    if (urlsArg) {
      urls = urlsArg.split(',');
      tokens = (await fs.readFile(arg('tokens', 'tokens.txt'), 'utf8')).split('\n').filter(Boolean).slice(0, agents);
    } else {
      // The server is started as 'embedded' with DATABASE_URL set: the scratch database is ours, to insert into.
      scratch = realDatabaseUrl ? await createScratchDatabase() : undefined;
      const heartbeat = { MM_HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_INTERVAL_MS), MM_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS) };
      cluster = await serverCluster('embedded', { LOG_LEVEL: 'warn', ...heartbeat, ...(scratch ? { DATABASE_URL: scratch.url } : {}) }, nodeArgs);
      // 'control plane listening' is an info line: the test support waits for it.
      server = await cluster.start({ LOG_LEVEL: 'info' });
      say(`server pid ${server.pid} on the ${scratch ? 'real PostgreSQL' : 'embedded database'} at ${server.url}${nodeArgs.length ? ` (node ${nodeArgs.join(' ')})` : ''}`);
      urls = [server.url];
      tokens = [];
      const t0 = performance.now();
      if (scratch) {
        tokens = await insertBoards(scratch.url, agents);
      } else {
        let next = 0;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < agents) {
              const i = next++;
              const res = await server!.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `load-${i}` }) });
              if (res.status !== 201) throw new Error(`registering board ${i} answered ${res.status}: ${await res.text()}`);
              tokens[i] = ((await res.json()) as { token: string }).token;
            }
          }),
        );
      }
      say(`registered ${agents} boards ${scratch ? 'in the database' : 'through the API'} in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${load()})`);
    }

    const totals = startGenerators(urls, tokens, generators, children);
    const waitAll = (since: number, what: string, timeoutMs?: number) => waitAllLinked(totals, tokens.length, since, what, say, timeoutMs);

    const t1 = performance.now();
    const cpuL0 = server ? await cpuSeconds(server.pid) : undefined;
    const linkMs = await waitAll(t1, 'first linking');
    const cpuL = server && cpuL0 ? cpuSince(cpuL0, await cpuSeconds(server.pid)) : undefined;
    say(
      `all ${tokens.length} linked in ${(linkMs / 1000).toFixed(1)} s (at most 100 handshakes in flight per generator)` +
        (cpuL ? `; server CPU ${(cpuL.user + cpuL.sys).toFixed(1)} s, ${(((cpuL.user + cpuL.sys) / tokens.length) * 1000).toFixed(2)} ms per link` : '') +
        ` (load ${load()})`,
    );
    if (!server || !cluster) return;

    await sleep(10_000);
    const mem = await treeMemory(server.pid);
    say(`server with ${tokens.length} links: RSS ${mem.rssMB} MB, PSS ${mem.pssMB} MB (load ${load()})`);
    const cpu0 = await cpuSeconds(server.pid);
    const attempts0 = sumAttempts(totals);
    await sleep(restSeconds * 1000);
    const cpu = cpuSince(cpu0, await cpuSeconds(server.pid));
    const perMinute = (s: number) => ((s / restSeconds) * 60).toFixed(1);
    say(
      `at rest for ${restSeconds} s: server CPU ${(cpu.user + cpu.sys).toFixed(1)} s (user ${cpu.user.toFixed(1)}, sys ${cpu.sys.toFixed(1)}) = ` +
        `${perMinute(cpu.user + cpu.sys)} CPU-s per minute, ${(((cpu.user + cpu.sys) / restSeconds) * 100).toFixed(1)}% of one core; ` +
        `${sumAttempts(totals) - attempts0} reconnects meanwhile (load ${load()})`,
    );
    const memRest = await treeMemory(server.pid);
    say(`server after the rest: RSS ${memRest.rssMB} MB, PSS ${memRest.pssMB} MB`);

    // Restart: the boards see their links drop and come back by their backoff.
    const tKill = performance.now();
    const killAt = Date.now();
    if (restart === 'term') await server.stop();
    else await server.kill();
    say(`server stopped (${restart}); starting it again`);
    server = await cluster.start({ LOG_LEVEL: 'info' });
    const upMs = performance.now() - tKill;
    say(`server back (pid ${server.pid}) ${(upMs / 1000).toFixed(1)} s after the ${restart}`);
    const cpuR0 = await cpuSeconds(server.pid);
    const relinkMs = await waitAll(tKill, 'relinking');
    const cpuR = cpuSince(cpuR0, await cpuSeconds(server.pid));
    say(
      `all ${tokens.length} linked again ${(relinkMs / 1000).toFixed(1)} s after the ${restart} (${((relinkMs - upMs) / 1000).toFixed(1)} s after the server was back); ` +
        `server CPU meanwhile ${(cpuR.user + cpuR.sys).toFixed(1)} s, ${(((cpuR.user + cpuR.sys) / tokens.length) * 1000).toFixed(2)} ms per board (load ${load()})`,
    );
    await sleep(1500);
    // Per second from the kill on (reports arrive every 250 ms; a second with none counts 0).
    const killSecond = Math.floor(killAt / 1000);
    const lastSecond = Math.max(...totals.attemptsPerBucket.keys());
    const series: number[] = [];
    for (let sec = killSecond; sec <= lastSecond; sec++) series.push(totals.attemptsPerBucket.get(sec) ?? 0);
    const backAt = Math.ceil(upMs / 1000);
    const afterBack = series.slice(backAt);
    say(
      `connection attempts per second from the ${restart} on (the server answered again from second ${backAt}): ${series.join(' ')}; ` +
        `while down: ${series.slice(0, backAt).reduce((a, n) => a + n, 0)} (refused, cheap); once back: peak ${Math.max(0, ...afterBack)}/s, ` +
        `${afterBack.reduce((a, n) => a + n, 0)} attempts for ${tokens.length} boards`,
    );
    const memAfter = await treeMemory(server.pid);
    say(`server after relinking: RSS ${memAfter.rssMB} MB, PSS ${memAfter.pssMB} MB (load ${load()})`);
  } finally {
    for (const c of children) c.disconnect();
    await cluster?.cleanup();
    for (const c of replicaClusters) await c?.cleanup();
    await scratch?.drop();
  }
}

/** Boards `load-0…` inserted straight into the database, tokens hashed as the API does (10,000 API calls would take minutes). */
export async function insertBoards(databaseUrl: string, agents: number): Promise<string[]> {
  const tokens: string[] = [];
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    for (let from = 0; from < agents; from += 1000) {
      const rows = [];
      for (let i = from; i < Math.min(agents, from + 1000); i++) {
        tokens[i] = randomBytes(32).toString('base64url');
        rows.push({ name: `load-${i}`, token_hash: createHash('sha256').update(tokens[i]!).digest('hex') });
      }
      await sql`insert into boards ${sql(rows, 'name', 'token_hash')}`;
    }
  } finally {
    await sql.end();
  }
  return tokens;
}

/** Forks the generators, each with its share of the tokens; their reports add up in the returned totals. */
export function startGenerators(urls: string[], tokens: string[], generators: number, children: ChildProcess[], opts: { answerOps?: boolean; runMs?: number } = {}): Totals {
  const totals: Totals = { ready: 0, attemptsPerBucket: new Map(), failures: 0 };
  const readyBy = new Map<ChildProcess, number>();
  const per = Math.ceil(tokens.length / generators);
  for (let g = 0; g < generators; g++) {
    const child = fork(self, ['--generator'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    readyBy.set(child, 0);
    child.on('message', (m: GeneratorReport) => {
      readyBy.set(child, m.ready);
      totals.ready = [...readyBy.values()].reduce((a, b) => a + b, 0);
      for (const [second, n] of m.attemptsBySecond) totals.attemptsPerBucket.set(second, (totals.attemptsPerBucket.get(second) ?? 0) + n);
      totals.failures += m.failures;
    });
    const slice = tokens.slice(g * per, (g + 1) * per);
    const start: GeneratorStart = {
      kind: 'start',
      urls,
      tokens: slice,
      firstIndex: g * per,
      localAddress: `127.0.0.${10 + g}`,
      rampConcurrency: 100,
      ...(opts.answerOps ? { answerOps: true } : {}),
      ...(opts.runMs ? { runMs: opts.runMs } : {}),
    };
    child.send(start);
  }
  return totals;
}

/** Waits until the generators report every board linked; the time since `since` (ms). */
export async function waitAllLinked(totals: Totals, count: number, since: number, what: string, say: (line: string) => void, timeoutMs = 600_000): Promise<number> {
  let lastSay = performance.now();
  while (totals.ready < count) {
    if (performance.now() - since > timeoutMs) throw new Error(`${what}: only ${totals.ready} of ${count} linked after ${timeoutMs / 1000} s`);
    if (performance.now() - lastSay > 10_000) {
      say(`  ${what}: ${totals.ready} linked`);
      lastSay = performance.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return performance.now() - since;
}

/** Connection attempts per second from `fromMs` (epoch) on, as the generators counted them. */
function attemptsSeries(totals: Totals, fromMs: number): number[] {
  const first = Math.floor(fromMs / 1000);
  const last = Math.max(first, ...totals.attemptsPerBucket.keys());
  const series: number[] = [];
  for (let sec = first; sec <= last; sec++) series.push(totals.attemptsPerBucket.get(sec) ?? 0);
  return series;
}

interface ReplicaRunTools {
  generators: number;
  restSeconds: number;
  children: ChildProcess[];
  say: (line: string) => void;
  load: () => string;
  sleep: (ms: number) => Promise<unknown>;
}

/** `--replicas N`: the agents spread over N replicas, then the first replica killed (see the header). */
async function runReplicas(servers: ServerProcess[], clusters: ServerCluster[], databaseUrl: string, tokens: string[], t: ReplicaRunTools): Promise<void> {
  const { say, load, sleep } = t;
  const names = servers.map((_, i) => `replica-${i + 1}`);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const placement = async () => {
    const rows = await sql<Array<{ replica_id: string; n: number }>>`select replica_id, count(*)::int as n from board_sessions group by replica_id order by replica_id`;
    return rows.map((r) => `${r.replica_id} ${r.n}`).join(', ');
  };
  const cpuOf = async (list: ServerProcess[]) => Promise.all(list.map((s) => cpuSeconds(s.pid)));
  try {
    const totals = startGenerators(servers.map((s) => s.url), tokens, t.generators, t.children);
    const t1 = performance.now();
    const cpu0 = await cpuOf(servers);
    const linkMs = await waitAllLinked(totals, tokens.length, t1, 'first linking', say);
    const cpu1 = await cpuOf(servers);
    const spent = servers.map((_, i) => cpuSince(cpu0[i]!, cpu1[i]!)).map((c) => c.user + c.sys);
    say(
      `all ${tokens.length} linked over ${servers.length} replicas in ${(linkMs / 1000).toFixed(1)} s (at most 100 handshakes in flight per generator); ` +
        `CPU ${spent.map((c, i) => `${names[i]} ${c.toFixed(1)} s`).join(', ')} = ${((spent.reduce((a, b) => a + b, 0) / tokens.length) * 1000).toFixed(2)} ms per link (load ${load()})`,
    );
    await sleep(10_000);
    say(`links per replica (board_sessions): ${await placement()}`);
    for (const [i, s] of servers.entries()) {
      const mem = await treeMemory(s.pid);
      say(`${names[i]}: RSS ${mem.rssMB} MB, PSS ${mem.pssMB} MB`);
    }
    const rest0 = await cpuOf(servers);
    const attemptsAtRest0 = sumAttempts(totals);
    await sleep(t.restSeconds * 1000);
    const rest1 = await cpuOf(servers);
    for (const [i] of servers.entries()) {
      const c = cpuSince(rest0[i]!, rest1[i]!);
      const s = c.user + c.sys;
      say(`${names[i]} at rest for ${t.restSeconds} s: CPU ${s.toFixed(1)} s = ${((s / t.restSeconds) * 60).toFixed(1)} CPU-s per minute, ${((s / t.restSeconds) * 100).toFixed(1)}% of one core`);
    }
    say(`${sumAttempts(totals) - attemptsAtRest0} reconnects while at rest (load ${load()})`);

    // replica-1 dies and stays dead: its boards relink to the others (backoff, next URL after a failure).
    const victim = servers[0]!;
    const survivors = servers.slice(1);
    const [victimRows] = await sql<Array<{ n: number }>>`select count(*)::int as n from board_sessions where replica_id = ${names[0]!}`;
    const sCpu0 = await cpuOf(survivors);
    const killAt = Date.now();
    const tKill = performance.now();
    await clusters[0]!.current().kill();
    say(`${names[0]} (pid ${victim.pid}, ${victimRows?.n ?? '?'} boards) killed with SIGKILL`);
    // The generators notice the drop within a report or two; then wait for all of them back.
    const dropDeadline = performance.now() + 30_000;
    while (totals.ready === tokens.length && performance.now() < dropDeadline) await sleep(50);
    const lowest = { n: totals.ready };
    const watchLow = setInterval(() => (lowest.n = Math.min(lowest.n, totals.ready)), 100);
    const relinkMs = await waitAllLinked(totals, tokens.length, tKill, 'relinking', say);
    clearInterval(watchLow);
    const sCpu1 = await cpuOf(survivors);
    const sSpent = survivors.map((_, i) => cpuSince(sCpu0[i]!, sCpu1[i]!)).map((c) => c.user + c.sys);
    say(
      `all ${tokens.length} linked again ${(relinkMs / 1000).toFixed(1)} s after the kill (at the lowest ${tokens.length - lowest.n} were down); ` +
        `survivors' CPU meanwhile ${sSpent.map((c, i) => `${names[i + 1]} ${c.toFixed(1)} s`).join(', ')} (load ${load()})`,
    );
    await sleep(1500);
    const series = attemptsSeries(totals, killAt);
    const total = series.reduce((a, n) => a + n, 0);
    say(`connection attempts per second from the kill on: ${series.join(' ')}; ${total} in all (peak ${Math.max(0, ...series)}/s) for ${victimRows?.n ?? '?'} boards moved`);
    // The dead replica's rows are taken over by the new holders' hellos (and expire after 15 s otherwise).
    say(`links per replica now (board_sessions): ${await placement()}`);
    for (const [i, s] of survivors.entries()) {
      const mem = await treeMemory(s.pid);
      say(`${names[i + 1]} after relinking: RSS ${mem.rssMB} MB, PSS ${mem.pssMB} MB`);
    }
  } finally {
    await sql.end();
  }
}

function sumAttempts(t: Totals): number {
  let n = 0;
  for (const v of t.attemptsPerBucket.values()) n += v;
  return n;
}

async function treeMemory(pid: number): Promise<{ rssMB: number; pssMB: number }> {
  const text = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { rssMB: Math.round(kb('Rss') / 1024), pssMB: Math.round(kb('Pss') / 1024) };
}

// Run as a script (or as a forked generator); bench/scheduler.ts imports its helpers.
const isEntry = process.argv[1] !== undefined && fs.realpath(process.argv[1]).then((p) => p === self, () => false);
if (await isEntry) {
  if (process.argv.includes('--generator')) await generator();
  else {
    await main();
    process.exit(0);
  }
}
