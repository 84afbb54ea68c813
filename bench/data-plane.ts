/**
 * The data plane, measured in one run (by hand, as root, never in the suite):
 *
 *   DATABASE_URL=postgres://… npx tsx bench/data-plane.ts [--size-mib 1024] [--rounds 3]
 *       [--wan-mib 256] [--many-mib 256] [--boards 8] [--sections lan,output,cached,wan,tls,many,tsx]
 *       [--wan-shapes 100:50,300:10] (long links: round trip ms : MB/s) [--keep-page-reporting]
 *
 * Against the Node floor (bench/node-floor.ts) and scp to a loopback sshd, with fresh random
 * content every time:
 *
 * - lan:    the transfer operation (POST …/transfer/ → 200) of a `--size-mib` file to a
 *           board, server and agent as deployed (their bundles on plain node), and the floor
 *           and scp beside it; the product's time as a multiple of the floor.
 * - output: the output video coming back (a runner, bench/output-runner.mjs, leaves a
 *           `--size-mib` video; timed from the runner's last line to POST …/execute/ → 200).
 * - cached: a re-transfer of content the board holds (0 bytes sent).
 * - wan:    both directions and scp (push and pull) through bench/wan-proxy.ts at 100 ms /
 *           50 MB/s and 300 ms / 10 MB/s (`--wan-mib` files), as % of the link's rate; the
 *           proxy's own round trip and rate are measured and printed first.
 * - tls:    lan and output with the agent reaching the server through nginx (the site of
 *           deploy/server/nginx.conf, TLS with a self-signed certificate), against the floor
 *           and against the floor sent through the same nginx (an HTTPS POST it relays in
 *           plain HTTP to the floor's receiver: the route minus the product).
 * - caddy:  the same through Caddy (deploy/server/Caddyfile); not in the default sections.
 * - many:   `--boards` simulated boards pull the same `--many-mib` file at once: total
 *           throughput, per-board min/max, and how often the server read the file; then each
 *           sends an output video of that size at once (the server receiving them all).
 * - tsx:    lan, output and cached as `pnpm start` runs them (sources through tsx, embedded DB).
 *
 * This VM hands memory back to its host ~2 s after the kernel frees it, and writing into such
 * memory again cost 6× more system time (bench-kit's holdFreedPages). Unless
 * --keep-page-reporting, freed memory is held 5 minutes for the run (the most this kernel
 * takes; the setting is restored at exit), and each timed LAN step starts right after 2 × its
 * size of page cache was written and freed (warmFreePages).
 *
 * Agent peak RSS and server RSS growth (peak over idle) are printed per section.
 * MM_BENCH_PROFILE_DIR=dir: the deployed server and agents run with --cpu-prof into it
 * (summarize with bench/cpu-profile-summary.ts).
 * MM_BENCH_SERVER_ENV / MM_BENCH_AGENT_ENV="NAME=VALUE,…": settings for the server / agents;
 * with LOG_LEVEL=debug each stream logs where its time went (sender: waits for credit, socket
 * and reads; server as receiver: time in writes, window, round trip, rate), kept with
 * MM_BENCH_SERVER_TRACE_FILE / MM_BENCH_AGENT_TRACE_FILE.
 *
 * Needs openssh-server (sshd, scp, ssh-keygen), nginx and openssl (and caddy for `caddy`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildBundle, repoRoot } from '../test/deploy/bundles.ts';
import { realDatabaseUrl } from '../test/support/databases.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster, type ServerProcess } from '../test/support/processes.ts';
import { runFloor, type FloorProxy } from './node-floor.ts';
import {
  cpuSeconds,
  cpuSince,
  freePort,
  holdFreedPagesForRun,
  ioCounters,
  warmFreePages,
  median,
  megabytes,
  MiB,
  mbPerS,
  peakRss,
  resetPeakRss,
  rss,
  run,
  scp,
  seconds,
  sha256File,
  stamp,
  startSshd,
  writeRandomFile,
  upload,
  type Cpu,
  type Sshd,
} from './support/bench-kit.ts';
import postgres from 'postgres';
import { startWanProxy } from './wan-proxy.ts';
import { startPgCountProxy, type PgCounts } from './support/pg-count-proxy.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const sizeMiB = arg('size-mib', 1024);
const rounds = arg('rounds', 3);
const wanMiB = arg('wan-mib', 256);
const manyMiB = arg('many-mib', 256);
const boardCount = arg('boards', 8);
const sectionsArg = process.argv.indexOf('--sections');
const sections = new Set((sectionsArg >= 0 ? process.argv[sectionsArg + 1]! : 'lan,output,cached,wan,tls,many,tsx').split(','));
const profileDir = process.env.MM_BENCH_PROFILE_DIR;
/** Set when holdFreedPages took: each timed LAN step then starts on memory this VM holds. */
let holdingFreedPages = false;
const OUTPUT_RUNNER = path.join(repoRoot, 'bench/output-runner.mjs');
// `--wan-shapes 100:50,300:10`: round trip in ms and rate in MB/s of each long link.
const shapesArg = process.argv.indexOf('--wan-shapes');
const WAN_SHAPES = (shapesArg >= 0 ? process.argv[shapesArg + 1]! : '100:50,300:10').split(',').map((shape) => {
  const [rtt, rate] = shape.split(':').map(Number);
  if (!(rtt! >= 0 && rate! > 0)) throw new Error(`--wan-shapes: ${shape} is not <rtt ms>:<MB/s>`);
  return { rttMs: rtt!, rateBytesPerS: rate! * 1e6 };
});

/** Lines of the final summary (markdown), printed at the end. */
const summary: string[] = [];
const note = (line: string) => {
  console.log(line);
  summary.push(line);
};

// ── a control plane and its boards ───────────────────────────────────────────────

interface Board {
  id: string;
  agent: AgentProcess;
  agentDir: string;
}

interface Stack {
  label: string;
  cluster: ServerCluster;
  /** The running server (replaced when a section restarts it). */
  server: ServerProcess;
  agentEntry: string | undefined;
  postJson(p: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  addBoard(name: string, opts?: { serverUrl?: string; env?: Record<string, string>; profile?: boolean }): Promise<Board>;
  boards: Board[];
  cleanup(): Promise<void>;
}

async function startStack(work: string, mode: 'bundle' | 'tsx', outputSource: string): Promise<Stack> {
  const profile = (who: string) => (profileDir && mode === 'bundle' ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, who)}`] : []);
  let serverEntry: string | undefined;
  let agentEntry: string | undefined;
  if (mode === 'bundle') {
    // Inside the server package: the bundle loads its dependencies from its node_modules.
    const serverBundleDir = path.join(repoRoot, 'packages/server/.tmp', `bench-${process.pid}`);
    buildBundle('server', serverBundleDir);
    serverEntry = path.join(serverBundleDir, 'mm-server.mjs');
    const agentBundleDir = path.join(work, 'agent-bundle');
    buildBundle('agent', agentBundleDir);
    agentEntry = path.join(agentBundleDir, 'mm-agent.mjs');
  }
  const dbKind = mode === 'bundle' && realDatabaseUrl ? 'postgres' : 'embedded';
  // MM_BENCH_SERVER_ENV="LOG_LEVEL=debug,MM_RECEIVE_WINDOWS_MB=32": settings for the server
  // (at debug it logs each pull's window, round trip and rate: "pull from the agent done").
  const serverEnv = envList(process.env.MM_BENCH_SERVER_ENV);
  const cluster = await serverCluster(dbKind, serverEnv, [...profile('server'), ...serverNodeArgs], serverEntry);
  const server = await cluster.start();
  const postJson = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    stack.server.api(p, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const boards: Board[] = [];
  const stack: Stack = {
    label: `${mode === 'bundle' ? 'as deployed (bundles, plain node)' : 'pnpm start (sources through tsx)'}, ${cluster.kind} database`,
    cluster,
    server,
    agentEntry,
    postJson,
    boards,
    async addBoard(name, opts = {}) {
      const res = await postJson('/api/boards/', { name });
      const b = (await res.json()) as { id: string; token: string };
      // MM_BENCH_AGENT_ROOT (e.g. /dev/shm): the agents' folders elsewhere than the server's,
      // as on a real board, whose disk is not the server's.
      const agentDir = path.join(process.env.MM_BENCH_AGENT_ROOT ?? work, `agent-${name}-${process.pid}`);
      const agent = await startAgent({
        entry: agentEntry,
        serverUrl: opts.serverUrl ?? stack.server.url,
        token: b.token,
        agentDir,
        env: {
          LOG_LEVEL: 'warn',
          MM_CACHE_MAX_BYTES: String(4 * Math.max(sizeMiB, wanMiB, manyMiB) * MiB),
          MM_RUNNER: `${process.execPath} ${OUTPUT_RUNNER}`,
          MM_BENCH_OUTPUT_SOURCE: outputSource,
          ...agentExtraEnv,
          ...opts.env,
        },
        nodeArgs: [...(opts.profile === false ? [] : profile(`agent-${name}`)), ...agentNodeArgs],
      });
      await eventually(async () => {
        const s = (await (await stack.server.api(`/api/boards/${b.id}/`)).json()) as { status: string };
        if (s.status !== 'online') throw new Error(`board ${name} is ${s.status}`);
      }, 60_000);
      const board = { id: b.id, agent, agentDir };
      boards.push(board);
      return board;
    },
    async cleanup() {
      for (const b of boards) {
        await b.agent.stop();
        await fs.rm(b.agentDir, { recursive: true, force: true });
      }
      await cluster.cleanup();
      if (serverEntry) await fs.rm(path.dirname(serverEntry), { recursive: true, force: true });
    },
  };
  return stack;
}

async function removeBoard(stack: Stack, board: Board): Promise<void> {
  await board.agent.stop();
  stack.boards.splice(stack.boards.indexOf(board), 1);
  await stack.server.api(`/api/boards/${board.id}/`, { method: 'DELETE' });
  await fs.rm(board.agentDir, { recursive: true, force: true });
}

interface Timed {
  ms: number;
  cpu: { server: Cpu; agent: Cpu };
  bytes: number;
}

async function createInvocation(stack: Stack, name: string): Promise<number> {
  return ((await (await stack.postJson('/api/invocations/create/', { name, description: '' })).json()) as { id: number }).id;
}

/**
 * The server's node flags: those deploy/server/Dockerfile's CMD runs it with (as deployed; and
 * scripts/dev.mjs, so `pnpm start`, passes the same), then MM_BENCH_SERVER_NODE_ARGS="--flag …"
 * (e.g. `--trace-gc`).
 */
const serverNodeArgs = [
  ...deployedServerNodeFlags(),
  ...(process.env.MM_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
];

function deployedServerNodeFlags(): string[] {
  const dockerfile = readFileSync(path.join(repoRoot, 'deploy/server/Dockerfile'), 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  if (!cmd) throw new Error('deploy/server/Dockerfile has no exec-form CMD');
  return (JSON.parse(cmd[1]!) as string[]).filter((a) => a.startsWith('--'));
}

/**
 * The agents' node flags: those deploy/agent/mm-agent.service's ExecStart runs it with (as
 * deployed; scripts/dev.mjs passes the same), then MM_BENCH_AGENT_NODE_ARGS="--flag …".
 */
const agentNodeArgs = [
  ...deployedAgentNodeFlags(),
  ...(process.env.MM_BENCH_AGENT_NODE_ARGS ?? '').split(' ').filter(Boolean),
];

function deployedAgentNodeFlags(): string[] {
  const unit = readFileSync(path.join(repoRoot, 'deploy/agent/mm-agent.service'), 'utf8');
  const exec = /^ExecStart=@NODE@ (.*)\/opt\/mm-agent\/mm-agent\.mjs$/m.exec(unit);
  if (!exec) throw new Error('deploy/agent/mm-agent.service has no ExecStart=@NODE@ … /opt/mm-agent/mm-agent.mjs');
  return exec[1]!.split(' ').filter((a) => a.startsWith('--'));
}

/** "NAME=VALUE,…" as an environment. */
function envList(list: string | undefined): Record<string, string> {
  return Object.fromEntries(
    (list ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/**
 * MM_BENCH_AGENT_ENV="NAME=VALUE,…": more environment for every agent (e.g. malloc tunables;
 * LOG_LEVEL=debug logs each stream it sent with its waits for credit, socket and reads).
 */
const agentExtraEnv = envList(process.env.MM_BENCH_AGENT_ENV);

/**
 * MM_BENCH_PERF_DIR=dir: `perf record -g` of the server and agent processes during each timed
 * transfer and output (kernel and user stacks: where the system time goes, which
 * --cpu-prof does not show). Read with `perf report -i dir/<file> --sort pid,dso,sym`.
 */
const perfDir = process.env.MM_BENCH_PERF_DIR;
let perfRuns = 0;
async function perfRecord(label: string, pids: number[]): Promise<() => Promise<void>> {
  if (!perfDir) return async () => {};
  await fs.mkdir(perfDir, { recursive: true });
  const out = path.join(perfDir, `${label}-${++perfRuns}.data`);
  const perf = spawn('perf', ['record', '-g', '-F', '499', '-p', pids.join(','), '-o', out], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  return async () => {
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
  };
}

/**
 * MM_BENCH_SERVER_TRACE_FILE / MM_BENCH_AGENT_TRACE_FILE: everything the server / the board's
 * agent printed so far (e.g. with `--trace-gc-nvp` in MM_BENCH_*_NODE_ARGS), rewritten after
 * each timed step with a line `### bench: <step> done` marking where the step ended.
 */
function saveTraces(stack: Stack, board: Board, step: string): void {
  for (const [file, output] of [
    [process.env.MM_BENCH_SERVER_TRACE_FILE, stack.server.output],
    [process.env.MM_BENCH_AGENT_TRACE_FILE, board.agent.output],
  ] as const) {
    if (!file) continue;
    output.text.push(`### bench: ${step} done`);
    writeFileSync(file, output.text.join('\n') + '\n');
  }
}

/** Fresh content, uploaded, then POST …/transfer/ timed; the file on the board checked. */
async function timedTransfer(stack: Stack, board: Board, file: string, onStart?: () => void): Promise<Timed & { invocation: number }> {
  await stamp(file);
  const sha = await sha256File(file);
  const inv = await createInvocation(stack, `bench-transfer`);
  await upload(stack.server.url, inv, 'weights', file, 'payload.bin');
  const size = (await fs.stat(file)).size;
  const cpu0 = { server: await cpuSeconds(stack.server.pid), agent: await cpuSeconds(board.agent.pid) };
  const stopPerf = await perfRecord('transfer', [stack.server.pid, board.agent.pid]);
  onStart?.();
  const postedAt = Date.now();
  const t0 = performance.now();
  const res = await stack.postJson(`/api/invocations/${inv}/transfer/`, { board_id: board.id });
  const ms = performance.now() - t0;
  await stopPerf();
  const cpu = { server: cpuSince(cpu0.server, await cpuSeconds(stack.server.pid)), agent: cpuSince(cpu0.agent, await cpuSeconds(board.agent.pid)) };
  const op = (await res.json()) as { id: number; status: string; result: { bytes_sent: number } };
  if (res.status !== 200 || op.status !== 'succeeded') throw new Error(`transfer answered ${res.status}: ${JSON.stringify(op)}`);
  if (process.env.MM_BENCH_SHOW_TIMELINE && stack.cluster.kind === 'postgres') {
    // Where the time of one transfer went (read from PostgreSQL; not from the embedded database): its stored events, relative to the POST.
    const sql = postgres(stack.cluster.databaseUrl!, { max: 1, onnotice: () => {} });
    const rows = await sql<{ seq: number; type: string; data: unknown; at: Date }[]>`
      SELECT seq, type, data, created_at AS at FROM operation_events WHERE operation_id = ${op.id} ORDER BY seq`;
    await sql.end();
    console.log(`  transfer #${op.id}, answered after ${ms.toFixed(0)} ms; its events (ms after the POST, stored in batches):`);
    for (const r of rows) console.log(`    +${r.at.getTime() - postedAt} ms ${r.type} ${JSON.stringify(r.data).slice(0, 120)}`);
  }
  saveTraces(stack, board, `transfer #${op.id} (${size} bytes)`);
  if (op.result.bytes_sent !== size) throw new Error(`transfer sent ${op.result.bytes_sent} of ${size} bytes`);
  if ((await sha256File(path.join(board.agentDir, 'invocations', String(inv), 'payload.bin'))) !== sha) throw new Error('the file on the board does not match');
  return { ms, cpu, bytes: size, invocation: inv };
}

/**
 * The output video coming back: POST …/execute/ of an invocation without input files; the
 * runner copies `outputSource` (new content) and prints when it is done. Timed from that
 * line to the 200: the agent hashes the video into its cache, the server pulls, verifies
 * and stores it.
 */
async function timedOutput(stack: Stack, board: Board, size: number): Promise<Timed & { readyAtMs: number }> {
  const inv = await createInvocation(stack, 'bench-output');
  const cpu0 = { server: await cpuSeconds(stack.server.pid), agent: await cpuSeconds(board.agent.pid) };
  const stopPerf = await perfRecord('output', [stack.server.pid, board.agent.pid]);
  const res = await stack.postJson(`/api/invocations/${inv}/execute/`, { board_id: board.id });
  const doneAt = Date.now();
  await stopPerf();
  const cpu = { server: cpuSince(cpu0.server, await cpuSeconds(stack.server.pid)), agent: cpuSince(cpu0.agent, await cpuSeconds(board.agent.pid)) };
  const op = (await res.json()) as { id: number; status: string; result: { output_video?: { size: number; sha256: string } | null } };
  if (res.status !== 200 || op.status !== 'succeeded') throw new Error(`execute answered ${res.status}: ${JSON.stringify(op)}`);
  const video = op.result.output_video;
  if (!video || video.size !== size) throw new Error(`execute brought back ${JSON.stringify(video)}, not ${size} bytes`);
  const log = await (await stack.server.api(`/api/operations/${op.id}/log/`)).text();
  const ready = /bench-output-ready (\d+)/.exec(log);
  if (!ready) throw new Error(`the runner's last line is not in the log:\n${log.slice(-500)}`);
  saveTraces(stack, board, `output #${op.id} (${size} bytes)`);
  if (process.env.MM_BENCH_SHOW_TIMELINE) {
    const gcs = stack.server.output.text.filter((l) => /Mark-Compact|Scavenge/.test(l));
    if (gcs.length > 0) {
      const count = (kind: string) => gcs.filter((l) => l.includes(kind)).length;
      console.log(`  server GCs so far (--trace-gc): ${count('Mark-Compact')} mark-compact, ${count('Scavenge')} scavenge; the last three:`);
      for (const l of gcs.slice(-3)) console.log(`    ${l}`);
      const starts = stack.server.output.text.filter((l) => /IncrementalMarking.*[Ss]tart/.test(l));
      for (const l of starts.slice(-4)) console.log(`    ${l.slice(0, 200)}`);
    }
    console.log(`  output #${op.id}: the server's log lines:`);
    for (const line of log.split('\n').filter((l) => /output|bench-output-ready/.test(l))) console.log(`    ${line.slice(0, 160)}`);
  }
  // The stored video is what the runner made (the server verified its sha256 on the way in).
  const got = createHash('sha256');
  const body = await stack.server.api(`/api/invocations/${inv}/video/`);
  for await (const chunk of body.body!) got.update(chunk);
  if (got.digest('hex') !== video.sha256) throw new Error('the stored output video does not match its sha256');
  await stack.server.api(`/api/invocations/${inv}/`, { method: 'DELETE' });
  return { ms: doneAt - Number(ready[1]), cpu, bytes: size, readyAtMs: Number(ready[1]) };
}

const fmtCpu = (c: Cpu) => `${(c.user + c.sys).toFixed(2)} s (user ${c.user.toFixed(2)}, sys ${c.sys.toFixed(2)})`;

/** Peak RSS of the agents and growth of the server's over `idleServer`, since the last reset. */
async function memoryLine(stack: Stack, idleServer: number, boards: Board[]): Promise<string> {
  let agentPeak = 0;
  for (const b of boards) agentPeak = Math.max(agentPeak, await peakRss(b.agent.pid));
  const serverPeak = await peakRss(stack.server.pid);
  return `agent peak RSS ${megabytes(agentPeak)} (goal < 150 MB), server peak RSS ${megabytes(serverPeak)} = idle ${megabytes(idleServer)} + ${megabytes(serverPeak - idleServer)} (goal growth < 100 MB)`;
}

async function resetPeaks(stack: Stack, boards: Board[]): Promise<number> {
  await resetPeakRss(stack.server.pid);
  for (const b of boards) await resetPeakRss(b.agent.pid);
  return rss(stack.server.pid);
}

// ── sections ─────────────────────────────────────────────────────────────────────────

interface Files {
  work: string;
  source: string;
  outputSource: string;
  wanSource: string;
  /** What the long-link boards' runner copies as their output video (`--wan-mib`). */
  wanOutputSource: string;
  manySource: string;
  floorDest: string;
}

/**
 * Flushes every dirty page before a timed step, so that no step pays for the writeback of
 * the gigabytes the step before it wrote (the kernel starts it in the background whenever
 * it likes, and a 2-core machine feels it).
 */
function settleDisk(): void {
  execFileSync('sync');
}

/**
 * Before a timed step that writes up to `writes` bytes: settleDisk, then (with freed memory
 * held) that much page cache plus 256 MiB written and freed, so the step writes into memory
 * this VM holds (warmFreePages).
 */
async function readyForTimedStep(work: string, writes: number): Promise<void> {
  settleDisk();
  if (holdingFreedPages) await warmFreePages(work, writes + 256 * MiB);
}

/** lan (+ output, cached): rounds of product transfer, floor and scp, alternating their order. */
async function lanSection(
  stack: Stack,
  board: Board,
  files: Files,
  sshd: Sshd | undefined,
  title: string,
  encryptedFloor?: FloorProxy,
): Promise<void> {
  const bytes = sizeMiB * MiB;
  const transfer: number[] = [];
  const floor: number[] = [];
  const floorTls: number[] = [];
  const scpMs: number[] = [];
  const output: number[] = [];
  const idle = await resetPeaks(stack, [board]);
  let lastInvocation = 0;
  let dbCountNote = '';
  for (let r = 0; r < rounds; r++) {
    const steps: [string, () => Promise<string>][] = [
      [
        'transfer',
        async () => {
          const t = await timedTransfer(stack, board, files.source);
          transfer.push(t.ms);
          if (lastInvocation) await stack.server.api(`/api/invocations/${lastInvocation}/`, { method: 'DELETE' });
          lastInvocation = t.invocation;
          return `transfer ${seconds(t.ms)} (${mbPerS(bytes, t.ms)} MB/s; CPU server ${fmtCpu(t.cpu.server)}, agent ${fmtCpu(t.cpu.agent)})`;
        },
      ],
      [
        'floor',
        async () => {
          await stamp(files.source);
          const f = await runFloor(files.source, files.floorDest);
          floor.push(f.ms);
          return `floor ${seconds(f.ms)}`;
        },
      ],
    ];
    if (encryptedFloor)
      steps.push([
        'floor through the proxy',
        async () => {
          await stamp(files.source);
          const f = await runFloor(files.source, files.floorDest, { through: encryptedFloor });
          floorTls.push(f.ms);
          return `floor through the proxy ${seconds(f.ms)}`;
        },
      ]);
    if (sshd)
      steps.push([
        'scp',
        async () => {
          await stamp(files.source);
          const dest = path.join(files.work, 'scp-dest.bin');
          const ms = await scp(sshd, files.source, dest);
          if ((await sha256File(dest)) !== (await sha256File(files.source))) throw new Error('scp copy does not match');
          await fs.rm(dest);
          scpMs.push(ms);
          return `scp ${seconds(ms)}`;
        },
      ]);
    if (sections.has('output'))
      steps.push([
        'output',
        async () => {
          const o = await timedOutput(stack, board, bytes);
          output.push(o.ms);
          return `output back ${seconds(o.ms)} (CPU server ${fmtCpu(o.cpu.server)}, agent ${fmtCpu(o.cpu.agent)})`;
        },
      ]);
    // Rotate the order, so no step always runs right after another's page-cache or disk work.
    const ordered = [...steps.slice(r % steps.length), ...steps.slice(0, r % steps.length)];
    const said: string[] = [];
    for (const [, step] of ordered) {
      // A step writes up to 2 × `bytes` (the output: the runner's file, then the server's).
      await readyForTimedStep(files.work, 2 * bytes);
      said.push(await step());
    }
    console.log(`  round ${r + 1}: ${said.join('; ')}`);
  }
  const t = median(transfer);
  const f = median(floor);
  note(`### ${title}`);
  note('');
  note(`| ${sizeMiB} MiB, median of ${rounds} | time | MB/s | × floor |${encryptedFloor ? ' × floor through the proxy |' : ''}`);
  // Through a TLS proxy a second column: × the floor sent through the same proxy.
  const ft = floorTls.length ? median(floorTls) : undefined;
  const times = (ms: number) => `${(ms / f).toFixed(2)} |${ft ? ` ${(ms / ft).toFixed(2)} |` : ''}`;
  const row = (what: string, ms: number) => note(`| ${what} | ${seconds(ms)} | ${mbPerS(bytes, ms)} | ${times(ms)}`);
  note(ft ? '|---|---|---|---|---|' : '|---|---|---|---|');
  row('transfer operation', t);
  if (output.length) row('output video back', median(output));
  if (scpMs.length) row('scp, default cipher', median(scpMs));
  row('Node floor (TCP, sha256, write, fsync)', f);
  if (ft) row('Node floor through the proxy (HTTPS POST, relayed in plain HTTP)', ft);

  if (sections.has('cached') && lastInvocation) {
    const cached: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const res = await stack.postJson(`/api/invocations/${lastInvocation}/transfer/`, { board_id: board.id });
      cached.push(performance.now() - t0);
      const op = (await res.json()) as { status: string; result: { bytes_sent?: number } };
      if (res.status !== 200 || (op.result.bytes_sent ?? 0) !== 0) throw new Error(`cached transfer: ${res.status} ${JSON.stringify(op)}`);
    }
    note(`| cached re-transfer (0 bytes, median of 5) | ${median(cached).toFixed(1)} ms | | |${encryptedFloor ? ' |' : ''}`);
    if (sections.has('dbcount') && stack.cluster.databaseUrl) dbCountNote = await countCachedTransfer(stack, board, lastInvocation);
  }
  note('');
  if (dbCountNote) {
    note(dbCountNote);
    note('');
  }
  note(`Memory: ${await memoryLine(stack, idle, [board])}`);
  note('');
}

/**
 * `--sections …,dbcount`: the server restarted with its database behind a counting proxy
 * (bench/support/pg-count-proxy.ts); statements and round trips of one cached re-transfer,
 * median of 3 after a warm-up, then the server goes back to the direct connection.
 */
async function countCachedTransfer(stack: Stack, board: Board, invocation: number): Promise<string> {
  const direct = stack.cluster.databaseUrl!;
  const proxy = await startPgCountProxy(direct);
  const restart = async (env: Record<string, string>) => {
    await stack.server.stop();
    stack.server = await stack.cluster.start(env);
    await eventually(async () => {
      const s = (await (await stack.server.api(`/api/boards/${board.id}/`)).json()) as { status: string; busy: boolean };
      if (s.status !== 'online' || s.busy) throw new Error(`board is ${s.status}`);
    }, 60_000);
  };
  try {
    await restart({ DATABASE_URL: proxy.url });
    const runs: PgCounts[] = [];
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 1500)); // nothing else in flight (presence, sweeps)
      proxy.reset();
      const res = await stack.postJson(`/api/invocations/${invocation}/transfer/`, { board_id: board.id });
      await res.arrayBuffer();
      // Writes that follow the answer (events, progress) belong to the operation too.
      await new Promise((r) => setTimeout(r, 500));
      runs.push(proxy.counts());
    }
    const counted = runs.slice(1);
    const stmts = median(counted.map((c) => c.statements));
    const trips = median(counted.map((c) => c.roundTrips));
    const parsed = runs[0]!.texts.map((t) => `\`${t.replace(/\s+/g, ' ').slice(0, 110)}\``);
    return [
      `Database, one cached re-transfer (median of 3 after a warm-up): ${stmts} statements, ${trips} round trips.`,
      `Statements prepared on the warm-up (each once per connection): ${parsed.length ? parsed.join('; ') : 'none'}`,
    ].join('\n');
  } finally {
    await restart({});
    await proxy.close();
  }
}

/** The proxy's own round trip (median of 5 one-byte pings) and rate (32 MiB one way, or less on a slow link). */
async function measureLink(shape: { rttMs: number; rateBytesPerS: number }): Promise<{ rttMs: number; rate: number }> {
  const sink = net.createServer({ allowHalfOpen: true }, (s) => {
    s.on('data', (d: Buffer) => {
      if (d.length === 1) s.write(d); // a ping: echo it
    });
    s.on('end', () => s.end('done'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const proxy = await startWanProxy({ target: { host: '127.0.0.1', port: (sink.address() as net.AddressInfo).port }, ...shape });
  try {
    const s = net.connect({ port: proxy.port, host: '127.0.0.1', allowHalfOpen: true, noDelay: true });
    await new Promise<void>((r) => s.once('connect', r));
    const pings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      s.write(Buffer.from([i]));
      await new Promise<void>((r) => s.once('data', () => r()));
      pings.push(performance.now() - t0);
    }
    const bytes = Math.min(32 * MiB, Math.round(shape.rateBytesPerS * 3));
    const block = Buffer.alloc(MiB, 7);
    const t0 = performance.now();
    const done = new Promise<void>((r) => s.once('end', () => r()));
    s.resume();
    for (let sent = 0; sent < bytes; sent += block.length) {
      if (!s.write(block)) await new Promise<void>((r) => s.once('drain', () => r()));
    }
    s.end();
    await done; // the FIN's way back adds half a round trip: take it off
    const ms = performance.now() - t0 - median(pings);
    s.destroy();
    return { rttMs: median(pings), rate: Math.ceil(bytes / MiB) * MiB / (ms / 1000) };
  } finally {
    await proxy.close();
    sink.close();
  }
}

async function wanSection(stack: Stack, files: Files, sshd: Sshd | undefined): Promise<void> {
  const bytes = wanMiB * MiB;
  note(`### Long link (bench/wan-proxy.ts), ${wanMiB} MiB each way, ${stack.label}`);
  note('');
  note('| link (set) | measured rtt / rate | board ← server (transfer) | board → server (output) | scp push | scp pull | agent / server RSS |');
  note('|---|---|---|---|---|---|---|');
  for (const shape of WAN_SHAPES) {
    const link = await measureLink(shape);
    const proxy = await startWanProxy({ target: { host: '127.0.0.1', port: stack.server.port }, ...shape });
    const sshProxy = sshd ? await startWanProxy({ target: { host: '127.0.0.1', port: sshd.port }, ...shape }) : undefined;
    try {
      const board = await stack.addBoard(`wan-${shape.rttMs}`, {
        serverUrl: `http://127.0.0.1:${proxy.port}`,
        env: { MM_BENCH_OUTPUT_SOURCE: files.wanOutputSource },
      });
      const idle = await resetPeaks(stack, [board]);
      const pct = (ms: number) => `${seconds(ms)}, ${mbPerS(bytes, ms)} MB/s = ${((bytes / (ms / 1000) / shape.rateBytesPerS) * 100).toFixed(0)} %`;
      // `rounds` of each direction on the same link (a board's link lives long: later files
      // start at the window the link learned), the median shown; scp once.
      const downs: number[] = [];
      const ups: number[] = [];
      let lastDown = 0;
      for (let r = 0; r < rounds; r++) {
        settleDisk();
        const d = await timedTransfer(stack, board, files.wanSource);
        downs.push(d.ms);
        if (lastDown) await stack.server.api(`/api/invocations/${lastDown}/`, { method: 'DELETE' });
        lastDown = d.invocation;
        settleDisk();
        ups.push((await timedOutput(stack, board, bytes)).ms);
      }
      console.log(`  ${shape.rttMs} ms: transfers ${downs.map(seconds).join(', ')}; outputs ${ups.map(seconds).join(', ')}`);
      const down = { ms: median(downs), invocation: lastDown };
      const up = { ms: median(ups) };
      settleDisk();
      let push = 'n/a';
      let pull = 'n/a';
      if (sshd && sshProxy) {
        await stamp(files.wanSource);
        const dest = path.join(files.work, 'scp-wan.bin');
        push = pct(await scp(sshd, files.wanSource, dest, { port: sshProxy.port }));
        const back = path.join(files.work, 'scp-wan-back.bin');
        pull = pct(await scp(sshd, dest, back, { port: sshProxy.port, direction: 'pull' }));
        if ((await sha256File(back)) !== (await sha256File(files.wanSource))) throw new Error('scp over the proxy does not match');
        await fs.rm(dest);
        await fs.rm(back);
      }
      const agentPeak = await peakRss(board.agent.pid);
      const serverPeak = await peakRss(stack.server.pid);
      note(
        `| ${shape.rttMs} ms, ${shape.rateBytesPerS / 1e6} MB/s | ${link.rttMs.toFixed(0)} ms, ${(link.rate / 1e6).toFixed(1)} MB/s | ${pct(down.ms)} | ${pct(up.ms)} | ${push} | ${pull} | ${megabytes(agentPeak)} / +${megabytes(serverPeak - idle)} |`,
      );
      await stack.server.api(`/api/invocations/${down.invocation}/`, { method: 'DELETE' });
      await removeBoard(stack, board);
    } finally {
      await proxy.close();
      await sshProxy?.close();
    }
  }
  note('');
  note('(% of the link rate set on the proxy; the operation times include its round trips: op.start, pulls, op.result.)');
  note('');
}

/** A TLS reverse proxy in front of the server (nginx or Caddy). */
interface ReverseProxy {
  port: number;
  cert: string;
  proc: ChildProcess;
  /** nginx only: where the encrypted floor goes through it. */
  floor?: FloorProxy;
}

/** nginx with deploy/server/nginx.conf's TLS site in front of `upstreamPort`, self-signed certificate for 127.0.0.1. */
async function startNginx(dir: string, upstreamPort: number): Promise<ReverseProxy> {
  const { cert } = await selfSignedCertificate(dir);
  const port = await freePort();
  const floorPort = await freePort();
  let site = await fs.readFile(path.join(repoRoot, 'deploy/server/nginx.conf'), 'utf8');
  // The plain-HTTP redirect server is of no use here; the TLS one listens on a free port.
  site = site.replace(/server \{\s*listen 80;[\s\S]*?\n\}\n/, '');
  site = site
    .replace(/listen 443 ssl http2;/, `listen 127.0.0.1:${port} ssl http2;`)
    .replace(/\s*listen \[::\]:443 ssl http2;/, '')
    .replace('server 127.0.0.1:8000;', `server 127.0.0.1:${upstreamPort};`)
    .replaceAll('/etc/letsencrypt/live/mm.example.org', dir);
  // The encrypted floor's receiver, behind the site's own server-wide settings (unbuffered
  // request bodies, HTTP/1.1 upstream).
  const floorLocation = `    location = /bench-floor/ {\n        proxy_pass http://127.0.0.1:${floorPort};\n        proxy_buffering off;\n    }\n\n    location / {`;
  if (!site.includes('    location / {')) throw new Error('deploy/server/nginx.conf has no `location / {` to put the floor beside');
  site = site.replace('    location / {', floorLocation);
  await fs.writeFile(path.join(dir, 'site.conf'), site);
  const conf = path.join(dir, 'nginx.conf');
  await fs.writeFile(
    conf,
    [
      'user root;',
      'worker_processes auto;', // as Debian's nginx.conf
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log warn;`,
      'events { worker_connections 1024; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
      '  sendfile on; tcp_nopush on;',
      `  include ${dir}/site.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  const proc = spawn('nginx', ['-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await listening(port);
  return { port, cert, proc, floor: { url: `https://127.0.0.1:${port}/bench-floor/`, ca: cert, port: floorPort } };
}

/** A self-signed certificate for 127.0.0.1 in `dir` (fullchain.pem, privkey.pem). */
async function selfSignedCertificate(dir: string): Promise<{ cert: string; key: string }> {
  await fs.mkdir(dir, { recursive: true });
  const cert = path.join(dir, 'fullchain.pem');
  const key = path.join(dir, 'privkey.pem');
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
  ]); // prettier-ignore
  return { cert, key };
}

async function listening(port: number): Promise<void> {
  await eventually(
    () =>
      new Promise<void>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.end();
          resolve();
        });
        s.on('error', reject);
      }),
    10_000,
  );
}

/**
 * Caddy with deploy/server/Caddyfile's site in front of `upstreamPort`: the same file, its
 * address a free port on 127.0.0.1 with a self-signed certificate instead of an automatic one.
 */
async function startCaddy(dir: string, upstreamPort: number): Promise<ReverseProxy> {
  const { cert, key } = await selfSignedCertificate(dir);
  const port = await freePort();
  let site = await fs.readFile(path.join(repoRoot, 'deploy/server/Caddyfile'), 'utf8');
  const address = '{$MM_DOMAIN:localhost} {';
  if (!site.includes(address)) throw new Error(`deploy/server/Caddyfile no longer has the site address ${address}`);
  site = site.replace(address, `https://127.0.0.1:${port} {\n\ttls ${cert} ${key}`);
  const conf = path.join(dir, 'Caddyfile');
  await fs.writeFile(conf, ['{', '\tadmin off', '\tauto_https disable_redirects', '}', '', site].join('\n'));
  const proc = spawn('caddy', ['run', '--config', conf, '--adapter', 'caddyfile'], {
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { ...process.env, MM_UPSTREAM: `127.0.0.1:${upstreamPort}`, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
  });
  const failed = new Promise<never>((_, reject) =>
    proc.once('error', (err) => reject(new Error(`could not start caddy (${err.message}); the caddy section needs it: apt-get install caddy`))),
  );
  await Promise.race([listening(port), failed]);
  return { port, cert, proc };
}

/** The processes whose parent is `pid` (nginx's workers). */
async function childPids(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(name));
  }
  return out;
}

async function tlsSection(stack: Stack, files: Files, proxy: 'nginx' | 'caddy' = 'nginx'): Promise<void> {
  const started =
    proxy === 'nginx' ? await startNginx(path.join(files.work, 'nginx'), stack.server.port) : await startCaddy(path.join(files.work, 'caddy'), stack.server.port);
  const site = proxy === 'nginx' ? 'deploy/server/nginx.conf' : 'deploy/server/Caddyfile';
  try {
    const board = await stack.addBoard(proxy === 'nginx' ? 'tls' : 'tls-caddy', {
      serverUrl: `https://127.0.0.1:${started.port}`,
      env: { NODE_EXTRA_CA_CERTS: started.cert },
    });
    // nginx works in its worker processes; Caddy is one process.
    const workers = proxy === 'nginx' ? await childPids(started.proc.pid!) : [started.proc.pid!];
    const before = await Promise.all(workers.map(cpuSeconds));
    await lanSection(stack, board, files, undefined, `Through ${proxy} with TLS (${site}), ${stack.label}; scp: see the LAN table`, started.floor);
    const after = await Promise.all(workers.map(cpuSeconds));
    const used = after.reduce((sum, c, i) => sum + c.user + c.sys - before[i]!.user - before[i]!.sys, 0);
    const who = proxy === 'nginx' ? `nginx's ${workers.length} workers` : 'Caddy';
    note(`${who} used ${used.toFixed(2)} CPU-s in all for the section's transfers and outputs (${rounds} of each, plus the cached re-transfers and the floor sent through it).`);
    note('');
    await removeBoard(stack, board);
  } finally {
    started.proc.kill('SIGTERM');
  }
}

async function manySection(stack: Stack, files: Files): Promise<void> {
  const bytes = manyMiB * MiB;
  const boards: Board[] = [];
  // Their runners make output videos of the same size (the second half below).
  for (let i = 0; i < boardCount; i++) boards.push(await stack.addBoard(`many-${i}`, { profile: false, env: { MM_BENCH_OUTPUT_SOURCE: files.manySource } }));
  await stamp(files.manySource);
  const inv = await createInvocation(stack, 'bench-many');
  await upload(stack.server.url, inv, 'weights', files.manySource, 'payload.bin');
  const idle = await resetPeaks(stack, boards);
  // Each board writes the file once.
  await readyForTimedStep(files.work, boardCount * bytes);
  const io0 = await ioCounters(stack.server.pid);
  const cpu0 = await cpuSeconds(stack.server.pid);
  const t0 = performance.now();
  const perBoard = await Promise.all(
    boards.map(async (b) => {
      const res = await stack.postJson(`/api/invocations/${inv}/transfer/`, { board_id: b.id });
      const ms = performance.now() - t0;
      const op = (await res.json()) as { status: string; result: { bytes_sent: number } };
      if (res.status !== 200 || op.status !== 'succeeded' || op.result.bytes_sent !== bytes) throw new Error(`board transfer: ${res.status} ${JSON.stringify(op)}`);
      return ms;
    }),
  );
  const wall = performance.now() - t0;
  const io = await ioCounters(stack.server.pid);
  const cpu = cpuSince(cpu0, await cpuSeconds(stack.server.pid));
  const sha = await sha256File(files.manySource);
  for (const b of boards) if ((await sha256File(path.join(b.agentDir, 'invocations', String(inv), 'payload.bin'))) !== sha) throw new Error('a board got other bytes');
  note(`### ${boardCount} boards pull the same ${manyMiB} MiB file at once, ${stack.label}`);
  note('');
  note(`- all done in ${seconds(wall)}: total ${mbPerS(bytes * boardCount, wall)} MB/s; per board ${seconds(Math.min(...perBoard))} … ${seconds(Math.max(...perBoard))}`);
  note(`- server read ${((io.rchar - io0.rchar) / bytes).toFixed(2)}× the file through syscalls (rchar), ${megabytes(io.readBytes - io0.readBytes)} from the block device; server CPU ${fmtCpu(cpu)}`);
  note(`- ${await memoryLine(stack, idle, boards)}`);
  note('');
  await stack.server.api(`/api/invocations/${inv}/`, { method: 'DELETE' });

  // Then the other way: every board sends an output video of that size at once, so the server
  // receives N streams together (its GC with many frames in flight; fresh content per board).
  const idleOut = await resetPeaks(stack, boards);
  const outputInvocations = await Promise.all(boards.map(() => createInvocation(stack, 'bench-many-output')));
  // Each runner writes its video, then the server its copy.
  await readyForTimedStep(files.work, 2 * boardCount * bytes);
  const cpuOut0 = await cpuSeconds(stack.server.pid);
  const tOut = performance.now();
  const outputMs = await Promise.all(
    boards.map(async (b, i) => {
      const res = await stack.postJson(`/api/invocations/${outputInvocations[i]}/execute/`, { board_id: b.id });
      const ms = performance.now() - tOut;
      const op = (await res.json()) as { status: string; result: { output_video?: { size: number } | null } };
      if (res.status !== 200 || op.status !== 'succeeded' || op.result.output_video?.size !== bytes) throw new Error(`board output: ${res.status} ${JSON.stringify(op)}`);
      return ms;
    }),
  );
  const wallOut = performance.now() - tOut;
  const cpuOut = cpuSince(cpuOut0, await cpuSeconds(stack.server.pid));
  saveTraces(stack, boards[0]!, `${boardCount} outputs at once (${bytes} bytes each)`);
  note(`- then every board sent an output video of ${manyMiB} MiB at once: all stored in ${seconds(wallOut)} from the POSTs (the runners' copies included): total ${mbPerS(bytes * boardCount, wallOut)} MB/s; per board ${seconds(Math.min(...outputMs))} … ${seconds(Math.max(...outputMs))}; server CPU ${fmtCpu(cpuOut)}`);
  note(`- ${await memoryLine(stack, idleOut, boards)}`);
  note('');
  for (const b of boards) await removeBoard(stack, b);
  for (const o of outputInvocations) await stack.server.api(`/api/invocations/${o}/`, { method: 'DELETE' });
}

/**
 * `--sections profile` (with MM_BENCH_PROFILE_DIR): the server and agent run under
 * --cpu-prof; `rounds` transfers and outputs run, and the windows they took are written to
 * `windows.json` in CLOCK_MONOTONIC microseconds, the clock of V8's profile timestamps, so
 * bench/cpu-profile-summary.ts --windows can leave the uploads and start-up out.
 */
async function profileSection(stack: Stack, files: Files): Promise<void> {
  if (!profileDir) throw new Error('set MM_BENCH_PROFILE_DIR');
  const board = await stack.addBoard('profiled');
  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  const windows: { what: string; fromUs: number; toUs: number }[] = [];
  const said: string[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = monotonicUs();
    const t = await timedTransfer(stack, board, files.source, () => (t0 = monotonicUs()));
    windows.push({ what: 'transfer', fromUs: t0, toUs: t0 + Math.round(t.ms * 1000) });
    said.push(`transfer ${seconds(t.ms)}`);
    const o = await timedOutput(stack, board, sizeMiB * MiB);
    // From the runner's last line (wall clock, ms) to the answer, on the monotonic clock.
    const epochToMonotonicUs = Date.now() * 1000 - monotonicUs();
    const fromUs = o.readyAtMs * 1000 - epochToMonotonicUs;
    windows.push({ what: 'output', fromUs, toUs: fromUs + Math.round(o.ms * 1000) });
    said.push(`output ${seconds(o.ms)}`);
  }
  // The profiles themselves are written (and their folders made) only when the processes exit.
  await fs.mkdir(profileDir, { recursive: true });
  await fs.writeFile(path.join(profileDir, 'windows.json'), JSON.stringify(windows, null, 2));
  console.log(`  profiled: ${said.join(', ')}`);
  note(`CPU profiles in ${profileDir} (server/, agent-profiled/; windows.json: when the transfers and outputs ran)`);
  note('');
}

async function main(): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-dataplane-'));
  const files: Files = {
    work,
    source: path.join(work, 'payload.bin'),
    outputSource: path.join(work, 'output-source.bin'),
    wanSource: path.join(work, 'wan.bin'),
    wanOutputSource: path.join(work, 'wan-output-source.bin'),
    manySource: path.join(work, 'many.bin'),
    floorDest: path.join(work, 'floor-dest.bin'),
  };
  let sshd: Sshd | undefined;
  let undoHold = () => {};
  const stacks: Stack[] = [];
  try {
    const [load1] = os.loadavg();
    note(
      `data-plane benchmark: ${sizeMiB} MiB (long link ${wanMiB} MiB, ${boardCount} boards ${manyMiB} MiB), ${rounds} rounds, ${os.cpus().length} cpus, load average ${load1!.toFixed(1)} at start, ${new Date().toISOString()}`,
    );
    const held = holdFreedPagesForRun();
    undoHold = held.undo;
    holdingFreedPages = held.held;
    note(held.note);
    note('');
    await writeRandomFile(files.source, sizeMiB * MiB);
    await writeRandomFile(files.outputSource, sizeMiB * MiB);
    if (sections.has('wan')) {
      await writeRandomFile(files.wanSource, wanMiB * MiB);
      await writeRandomFile(files.wanOutputSource, wanMiB * MiB);
    }
    if (sections.has('many')) await writeRandomFile(files.manySource, manyMiB * MiB);
    sshd = await startSshd(work);

    const wantsDeployed = ['lan', 'output', 'cached', 'wan', 'tls', 'caddy', 'many', 'profile'].some((s) => sections.has(s));
    if (wantsDeployed) {
      const stack = await startStack(work, 'bundle', files.outputSource);
      stacks.push(stack);
      const section = async (name: string, fn: () => Promise<void>) => {
        if (!sections.has(name)) return;
        try {
          await fn();
        } catch (err) {
          note(`**${name} failed:** ${err instanceof Error ? err.message : String(err)}`);
          note('');
        }
      };
      await section('lan', async () => {
        const board = await stack.addBoard('lan');
        await lanSection(stack, board, files, sshd, `LAN (loopback), ${stack.label}`);
        await removeBoard(stack, board);
      });
      await section('wan', () => wanSection(stack, files, sshd));
      await section('tls', () => tlsSection(stack, files));
      await section('caddy', () => tlsSection(stack, files, 'caddy'));
      await section('many', () => manySection(stack, files));
      await section('profile', () => profileSection(stack, files));
      await stack.cleanup();
      stacks.pop();
    }
    if (sections.has('tsx')) {
      const stack = await startStack(work, 'tsx', files.outputSource);
      stacks.push(stack);
      const board = await stack.addBoard('tsx');
      await lanSection(stack, board, files, sshd, `LAN (loopback), ${stack.label}`);
    }
    console.log('\n──── summary ────\n');
    console.log(summary.join('\n'));
  } finally {
    sshd?.proc.kill('SIGTERM');
    for (const s of stacks) await s.cleanup();
    await fs.rm(work, { recursive: true, force: true });
    undoHold();
  }
}

await main();
