/**
 * Benchmark (run by hand, as root, never in the suite): compressed file streams on a field
 * link (issue 33, docs/compression.md).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/field-compression.ts [--bitstream-mb 20] [--weights-mb 200]
 *       [--video-mib 64] [--links 300:10,100:50] [--loopback-mib 256] [--sections wan,loopback] [--no-scp] [--bundle]
 *
 * A real server and real `mm-agent --simulate` processes; each board reaches the server
 * through bench/wan-proxy.ts with the link's shape (round trip ms : MB/s). Two boards per
 * link, used one after the other: one takes compression (`MM_LINK_COMPRESSION=1`, the
 * default), one does not (`0`: the link without compression; both take pushed streams,
 * docs/agent-link.md). For each, fresh content:
 *
 * - a transfer (server → board) of an UltraScale+-like bitstream and of int8 weights
 *   (test/support/field-data.ts): the operation's time (POST → 200, its round trips
 *   included) and the stream's (the agent's `push from the server done`: from the push's
 *   arrival, right behind op.start, to the last byte written; or `pull from the server done`,
 *   from its pull to the last byte written, when the server did not push), the effective rate
 *   (file bytes ÷ stream time), the bytes on the
 *   wire (`result.files[].wire_bytes`);
 * - an output video back (board → server; bench/output-runner.mjs leaves a copy of a random
 *   file, incompressible like H.264): from the runner's last line to the 200;
 * - scp -C of the same files through a proxy of the same shape in front of a loopback sshd.
 *
 * `loopback`: the same without a proxy (the LAN: compression must not make it slower).
 * CPU seconds of the server and of the agent per GiB of file moved, from /proc, each way.
 *
 * `--bundle`: server and agents as deployed (their bundles on plain node, with the node flags
 * of deploy/server/Dockerfile and deploy/agent/mm-agent.service); otherwise as `pnpm start`
 * runs them (the sources through tsx, ~30 MB more RSS each).
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildBundle } from '../test/deploy/bundles.ts';
import { realDatabaseUrl } from '../test/support/databases.ts';
import { writeBitstreamLike, writeWeightsLike } from '../test/support/field-data.ts';
import { repoRoot, serverCluster, startAgent, type AgentProcess, type ServerProcess } from '../test/support/processes.ts';
import { cpuSeconds, holdFreedPagesForRun, megabytes, MiB, peakRss, scp, sha256File, stamp, startSshd, upload, writeRandomFile, type Sshd } from './support/bench-kit.ts';
import { startWanProxy, type WanProxy } from './wan-proxy.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const bitstreamBytes = Number(arg('bitstream-mb', '20')) * 1e6;
const weightsBytes = Number(arg('weights-mb', '200')) * 1e6;
const videoBytes = Number(arg('video-mib', '64')) * MiB;
const loopbackBytes = Number(arg('loopback-mib', '256')) * MiB;
const links = arg('links', '300:10,100:50')
  .split(',')
  .map((s) => s.split(':').map(Number) as [number, number])
  .map(([rttMs, mbPerS]) => ({ rttMs, rateBytesPerS: mbPerS * 1e6 }));
const sections = arg('sections', 'wan,loopback').split(',');
const withScp = !process.argv.includes('--no-scp');
const asDeployed = process.argv.includes('--bundle');
const OUTPUT_RUNNER = path.join(repoRoot, 'bench/output-runner.mjs');
const GiB = 1024 ** 3;

interface Board {
  id: string;
  agent: AgentProcess;
  compression: boolean;
}

interface Moved {
  what: string;
  bytes: number;
  wireBytes: number;
  /** The whole operation (POST → 200), or for an output from the runner's last line to the 200. */
  opMs: number;
  /** The stream alone (push arrived or pull sent → last byte written), when the agent logged it. */
  streamMs: number | undefined;
  cpu: { server: number; agent: number };
  /** The sender's compression decision and where its time went, from its log line. */
  decision?: unknown;
}

const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-field-bench-'));

/** The server's and the agent's bundles, and the node flags each runs with as deployed. */
function deployedBundles(work: string) {
  const serverDir = path.join(repoRoot, 'packages/server/.tmp', `field-bench-${process.pid}`);
  buildBundle('server', serverDir);
  const agentDir = path.join(work, 'agent-bundle');
  buildBundle('agent', agentDir);
  const dockerfile = readFileSync(path.join(repoRoot, 'deploy/server/Dockerfile'), 'utf8');
  const unit = readFileSync(path.join(repoRoot, 'deploy/agent/mm-agent.service'), 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  const exec = /^ExecStart=@NODE@ (.*)\/opt\/mm-agent\/mm-agent\.mjs$/m.exec(unit);
  if (!cmd || !exec) throw new Error('no node flags found in deploy/server/Dockerfile or deploy/agent/mm-agent.service');
  return {
    serverEntry: path.join(serverDir, 'mm-server.mjs'),
    serverDir,
    serverNodeArgs: (JSON.parse(cmd[1]!) as string[]).filter((a) => a.startsWith('--')),
    agentEntry: path.join(agentDir, 'mm-agent.mjs'),
    agentNodeArgs: exec[1]!.split(' ').filter((a) => a.startsWith('--')),
  };
}
const held = holdFreedPagesForRun();
// Debug: the server's 'stream to the agent sent' lines carry the compression decision (printed per transfer).
const bundles = asDeployed ? deployedBundles(scratch) : undefined;
const cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded', { LOG_LEVEL: 'debug' }, bundles?.serverNodeArgs ?? [], bundles?.serverEntry);
let server: ServerProcess;
const cleanups: Array<() => Promise<unknown>> = [];
/** Peak RSS of each board's agent (VmHWM) and of the server so far, after the board's runs. */
const memory: string[] = [];

const post = async (p: string, body?: unknown) => {
  const res = await server.api(p, { method: 'POST', ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};
const cpuOf = async (pid: number) => {
  const c = await cpuSeconds(pid);
  return c.user + c.sys;
};

async function addBoard(name: string, serverUrl: string, compression: boolean): Promise<Board> {
  const { body } = await post('/api/boards/', { name });
  const agent = await startAgent({
    serverUrl,
    token: body.token,
    ...(bundles ? { entry: bundles.agentEntry, nodeArgs: bundles.agentNodeArgs } : {}),
    agentDir: path.join(scratch, name),
    env: {
      LOG_LEVEL: 'debug',
      MM_LINK_COMPRESSION: compression ? '1' : '0',
      MM_RUNNER: `${process.execPath} ${OUTPUT_RUNNER}`,
      MM_BENCH_OUTPUT_SOURCE: files.video,
    },
  });
  cleanups.push(() => agent.stop());
  for (let i = 0; i < 600; i++) {
    const b = (await (await server.api(`/api/boards/${body.id}/`)).json()) as { status: string };
    if (b.status === 'online') return { id: body.id, agent, compression };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`board ${name} never came online`);
}

/** Transfers `file` (fresh content) to `board`; checks it arrived whole. */
async function transfer(board: Board, file: string, what: string): Promise<Moved> {
  await stamp(file);
  const inv = (await post('/api/invocations/create/', { name: `bench-${what}`, description: '' })).body.id as number;
  await upload(server.url, inv, 'parameter', file, path.basename(file));
  const bytes = (await fs.stat(file)).size;
  const linesBefore = board.agent.output.lines.length;
  const serverLinesBefore = server.output.lines.length;
  const cpu0 = { server: await cpuOf(server.pid), agent: await cpuOf(board.agent.pid) };
  const t0 = performance.now();
  const res = await post(`/api/invocations/${inv}/transfer/`, { board_id: board.id });
  const opMs = performance.now() - t0;
  const cpu = { server: (await cpuOf(server.pid)) - cpu0.server, agent: (await cpuOf(board.agent.pid)) - cpu0.agent };
  if (res.status !== 200) throw new Error(`transfer answered ${res.status}: ${JSON.stringify(res.body)}`);
  const arrived = path.join(board.agent.agentDir, 'invocations', String(inv), path.basename(file));
  if ((await sha256File(arrived)) !== (await sha256File(file))) throw new Error(`${what}: the board's copy differs`);
  const pulled = board.agent.output.lines.slice(linesBefore).find((l) => (l.msg === 'pull from the server done' || l.msg === 'push from the server done') && l.bytes === bytes);
  await server.api(`/api/invocations/${inv}/`, { method: 'DELETE' });
  const served = server.output.lines.slice(serverLinesBefore).find((l) => l.msg === 'stream to the agent sent' && l.bytes === bytes);
  const decision = served ? { ms: served.ms, sample_ms: served.sample_ms, credit_wait_ms: served.credit_wait_ms, socket_wait_ms: served.socket_wait_ms, compress_ms: served.compress_ms, ...(served.compression as object) } : undefined;
  const agentSide = pulled ? { write_ms: pulled.write_ms, writes: pulled.writes } : {};
  return { what, bytes, wireBytes: res.body.result.wire_bytes as number, opMs, streamMs: pulled ? Number(pulled.ms) : undefined, cpu, decision: { ...decision, ...agentSide } };
}

/** An execute whose runner leaves a copy of files.video: timed from its last line to the 200. */
async function outputBack(board: Board): Promise<Moved> {
  await stamp(files.video);
  const inv = (await post('/api/invocations/create/', { name: 'bench-output', description: '' })).body.id as number;
  const linesBefore = board.agent.output.lines.length;
  const cpu0 = { server: await cpuOf(server.pid), agent: await cpuOf(board.agent.pid) };
  const res = await post(`/api/invocations/${inv}/execute/`, { board_id: board.id });
  const doneAt = Date.now();
  const cpu = { server: (await cpuOf(server.pid)) - cpu0.server, agent: (await cpuOf(board.agent.pid)) - cpu0.agent };
  if (res.status !== 200 || res.body.result.output_video?.size !== videoBytes) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
  const log = await (await server.api(`/api/operations/${res.body.id}/log/`)).text();
  const ready = Number(/bench-output-ready (\d+)/.exec(log)?.[1]);
  const sent = board.agent.output.lines.slice(linesBefore).filter((l) => l.msg === 'stream to the server sent' && l.bytes === videoBytes);
  const wireBytes = sent.reduce((n, l) => n + Number(l.wire_bytes), 0);
  const stream = sent.at(-1);
  await server.api(`/api/invocations/${inv}/`, { method: 'DELETE' });
  return { what: 'video back', bytes: videoBytes, wireBytes: wireBytes || videoBytes, opMs: doneAt - ready, streamMs: stream ? Number(stream.ms) : undefined, cpu };
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(bytes < 10e6 ? 2 : 1);
const rate = (bytes: number, ms: number | undefined) => (ms ? ((bytes / 1e6) / (ms / 1000)).toFixed(1) : 'n/a');
const cpuPerGiB = (m: Moved) => `${((m.cpu.server / m.bytes) * GiB).toFixed(2)} / ${((m.cpu.agent / m.bytes) * GiB).toFixed(2)}`;

function row(link: string, board: Board, m: Moved, linkRate?: number): string {
  const effective = m.bytes / 1e6 / ((m.streamMs ?? m.opMs) / 1000);
  const times = linkRate ? ` ${(effective / (linkRate / 1e6)).toFixed(2)}× |` : '';
  return `| ${link} | ${m.what} | ${board.compression ? 'on' : 'off'} | ${mb(m.bytes)} MB | ${mb(m.wireBytes)} MB (${(m.bytes / m.wireBytes).toFixed(1)}×) | ${(m.opMs / 1000).toFixed(2)} s | ${m.streamMs !== undefined ? `${(m.streamMs / 1000).toFixed(2)} s` : 'n/a'} | ${rate(m.bytes, m.streamMs ?? m.opMs)} MB/s |${times} ${cpuPerGiB(m)} |`;
}

async function scpRow(sshd: Sshd, port: number, file: string, what: string, link: string, linkRate: number): Promise<string> {
  await stamp(file);
  const dest = path.join(scratch, `scp-${path.basename(file)}`);
  const ms = await scp(sshd, file, dest, { port, compress: true });
  if ((await sha256File(dest)) !== (await sha256File(file))) throw new Error('scp -C copy differs');
  await fs.rm(dest);
  const bytes = (await fs.stat(file)).size;
  return `| ${link} | ${what} | scp -C | ${mb(bytes)} MB | (inside SSH) | ${(ms / 1000).toFixed(2)} s | | ${rate(bytes, ms)} MB/s | ${(bytes / 1e6 / (ms / 1000) / (linkRate / 1e6)).toFixed(2)}× | |`;
}

const files = {
  bitstream: path.join(scratch, 'design.bit'),
  weights: path.join(scratch, 'weights.bin'),
  video: path.join(scratch, 'video.mp4'),
  loopRandom: path.join(scratch, 'loop-random.bin'),
  loopBitstream: path.join(scratch, 'loop-design.bit'),
};

try {
  console.log(`${held.note}; cpus: ${os.cpus().length}, load: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await writeBitstreamLike(files.bitstream, bitstreamBytes);
  await writeWeightsLike(files.weights, weightsBytes);
  await writeRandomFile(files.video, videoBytes);
  server = await cluster.start();
  console.log(`server ${server.url}, database ${cluster.kind}`);
  const header = (extra: string) => [
    `| link | file | compression | file | on the wire | operation | stream | effective |${extra} CPU s/GiB server / agent |`,
    `|---|---|---|---|---|---|---|---|${extra ? '---|' : ''}---|`,
  ];

  if (sections.includes('wan')) {
    const sshd = withScp ? await startSshd(scratch).catch((err: unknown) => (console.log(`no sshd (${String(err)}): scp left out`), undefined)) : undefined;
    if (sshd) cleanups.push(async () => sshd.proc.kill());
    const out = header(' × link |');
    for (const shape of links) {
      const label = `${shape.rttMs} ms, ${shape.rateBytesPerS / 1e6} MB/s`;
      const proxy: WanProxy = await startWanProxy({ target: { host: '127.0.0.1', port: server.port }, ...shape });
      cleanups.push(() => proxy.close());
      for (const compression of [true, false]) {
        const board = await addBoard(`wan-${shape.rttMs}-${compression ? 'on' : 'off'}`, `http://127.0.0.1:${proxy.port}`, compression);
        // A first small transfer: the link measured once, as a board in service has it.
        await transfer(board, files.bitstream, 'warm-up');
        for (const [file, what] of [[files.bitstream, 'bitstream-like'], [files.weights, 'weights-like']] as const) {
          const m = await transfer(board, file, what);
          out.push(row(label, board, m, shape.rateBytesPerS));
          console.log(out.at(-1));
          console.log(`  sender: ${JSON.stringify(m.decision)}`);
        }
        const v = await outputBack(board);
        out.push(row(label, board, v, shape.rateBytesPerS));
        console.log(out.at(-1));
        memory.push(`${label}, compression ${compression ? 'on' : 'off'}: agent peak RSS ${megabytes(await peakRss(board.agent.pid))}, server peak ${megabytes(await peakRss(server.pid))}`);
        await board.agent.stop();
      }
      if (sshd) {
        const sshProxy = await startWanProxy({ target: { host: '127.0.0.1', port: sshd.port }, ...shape });
        for (const [file, what] of [[files.bitstream, 'bitstream-like'], [files.weights, 'weights-like'], [files.video, 'video']] as const) {
          out.push(await scpRow(sshd, sshProxy.port, file, what, label, shape.rateBytesPerS));
          console.log(out.at(-1));
        }
        await sshProxy.close();
      }
    }
    console.log(`\n### Field links (effective = file bytes ÷ the stream's time; × link = effective ÷ the link's rate)\n\n${out.join('\n')}\n`);
    console.log(memory.join('\n'));
  }

  if (sections.includes('loopback')) {
    await writeRandomFile(files.loopRandom, loopbackBytes);
    await writeBitstreamLike(files.loopBitstream, loopbackBytes, 9);
    const out = header('');
    for (const compression of [true, false]) {
      const board = await addBoard(`loop-${compression ? 'on' : 'off'}`, server.url, compression);
      await transfer(board, files.bitstream, 'warm-up');
      for (const [file, what] of [[files.loopRandom, 'random'], [files.loopBitstream, 'bitstream-like']] as const) {
        const m = await transfer(board, file, what);
        out.push(row('loopback', board, m));
        console.log(out.at(-1));
      }
      out.push(row('loopback', board, await outputBack(board)));
      console.log(out.at(-1));
      memory.push(`loopback, compression ${compression ? 'on' : 'off'}: agent peak RSS ${megabytes(await peakRss(board.agent.pid))}, server peak ${megabytes(await peakRss(server.pid))}`);
      await board.agent.stop();
    }
    console.log(`\n### Loopback\n\n${out.join('\n')}\n`);
    console.log(memory.join('\n'));
  }
} finally {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await cluster.cleanup();
  held.undo();
  await fs.rm(scratch, { recursive: true, force: true });
  if (bundles) await fs.rm(bundles.serverDir, { recursive: true, force: true });
}
