/**
 * Benchmark (run by hand, as root, never in the suite):
 *
 *   DATABASE_URL=postgres://… npx tsx bench/transfer-vs-scp.ts [--size-mib 1024] [--rounds 3] [--bundle]
 *
 * Copies a file of `--size-mib` MiB to a real `mm-agent --simulate` through a real transfer
 * operation (row 5: the agent pulls it over the link, writes it to disk and checks its
 * sha256 before it enters its cache; the benchmark checks the sha256 of the file the
 * operation leaves under `$MM_AGENT_DIR/invocations/<id>/` too), alternating in one run with
 * `scp` (default cipher) of the same file to a throwaway sshd on a loopback port. Each round
 * uses new content (the first bytes change), so nothing is cached; then a re-transfer of
 * content the board already holds is timed. Peak RSS is VmHWM, reset before the rounds
 * (so the uploads that prepare them do not count).
 *
 * Needs: `apt-get install -y openssh-server` (sshd, scp, ssh-keygen). With DATABASE_URL the
 * server runs on a scratch database of that PostgreSQL; without it on the embedded one,
 * whose own memory (~250–700 MB) then dominates the server's RSS.
 *
 * As root on a VM that hands freed memory back to its host, the run holds it first (bench-kit's
 * holdFreedPagesForRun: writes into returned memory cost 6× here); --keep-page-reporting does not.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildBundle, repoRoot } from '../test/deploy/bundles.ts';
import { realDatabaseUrl } from '../test/support/databases.ts';
import { eventually, serverCluster, startAgent } from '../test/support/processes.ts';
import { cpuSeconds, cpuSince, freePort, holdFreedPagesForRun, MiB, run, scp, sha256File, startSshd, upload, writeRandomFile, type Sshd } from './support/bench-kit.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const sizeMiB = arg('size-mib', 1024);
const rounds = arg('rounds', 3);
/**
 * `--bundle`: run both as they run in production, bundled on plain node (the agent's bundle
 * as on a board, the server's as in the Docker image), not through tsx.
 */
const useBundle = process.argv.includes('--bundle');

/** Makes the file new content: its first 16 bytes name the round. */
async function stamp(file: string, round: number): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.write(Buffer.from(`round-${String(round).padStart(10, '0')}`), 0, 16, 0);
  } finally {
    await handle.close();
  }
}

async function vmHWM(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

async function vmRSS(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

const fmtCpu = (c: { user: number; sys: number }) => `${(c.user + c.sys).toFixed(2)} s (user ${c.user.toFixed(2)}, sys ${c.sys.toFixed(2)})`;

/** Resets a process's peak RSS (Linux: `echo 5 > /proc/<pid>/clear_refs`). */
async function resetHWM(pid: number): Promise<void> {
  await fs.writeFile(`/proc/${pid}/clear_refs`, '5');
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rate = (ms: number) => `${((sizeMiB * MiB) / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  console.log(holdFreedPagesForRun().note);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-'));
  // (info: the helper waits for the "listening" line)
  // MM_BENCH_PROFILE_DIR: CPU profiles of both processes (node --cpu-prof) land there.
  const profileDir = process.env.MM_BENCH_PROFILE_DIR;
  const profile = (who: string) => (profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, who)}`] : []);
  let serverEntry: string | undefined;
  if (useBundle) {
    // Inside the server package: the bundle loads its dependencies from its node_modules.
    const serverBundleDir = path.join(repoRoot, 'packages/server/.tmp', `bench-${process.pid}`);
    buildBundle('server', serverBundleDir);
    serverEntry = path.join(serverBundleDir, 'mm-server.mjs');
  }
  const cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded', {}, profile('server'), serverEntry);
  let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
  let sshd: Sshd | undefined;
  try {
    console.log(`file: ${sizeMiB} MiB, rounds: ${rounds}, database: ${cluster.kind}, server and agent: ${useBundle ? 'bundled, plain node' : 'tsx'}, cpus: ${os.cpus().length}`);
    const source = path.join(work, 'payload.bin');
    await writeRandomFile(source, sizeMiB * MiB);
    const server = await cluster.start();
    const api = (p: string, init?: RequestInit) => server.api(p, init);
    const postJson = async (p: string, body: unknown) =>
      api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const board = (await (await postJson('/api/boards/', { name: 'bench' })).json()) as { id: string; token: string };
    const agentDir = path.join(work, 'agent');
    let entry: string | undefined;
    if (useBundle) {
      const bundleDir = path.join(work, 'agent-bundle');
      buildBundle('agent', bundleDir);
      entry = path.join(bundleDir, 'mm-agent.mjs');
    }
    agent = await startAgent({
      entry,
      serverUrl: server.url,
      token: board.token,
      agentDir,
      env: { LOG_LEVEL: 'warn', MM_CACHE_MAX_BYTES: String(3 * sizeMiB * MiB) },
      nodeArgs: profile('agent'),
    });
    await eventually(async () => {
      const b = (await (await api(`/api/boards/${board.id}/`)).json()) as { status: string };
      if (b.status !== 'online') throw new Error(b.status);
    }, 60_000);
    sshd = await startSshd(work);
    console.log(`idle RSS before the rounds: server ${mb(await vmRSS(server.pid))}, agent ${mb(await vmRSS(agent.pid))}`);
    const scpDest = path.join(work, 'scp-dest.bin');

    const transferMs: number[] = [];
    const opMs: number[] = [];
    const scpMs: number[] = [];
    type Cpu = { user: number; sys: number };
    const cpu: { server: Cpu; agent: Cpu }[] = [];
    let serverPeak = 0;
    let agentPeak = 0;
    let lastInvocation = 0;
    for (let r = 0; r < rounds; r++) {
      await stamp(source, r);
      const sha = await sha256File(source);
      const inv = ((await (await postJson('/api/invocations/create/', { name: `bench-${r}`, description: '' })).json()) as { id: number }).id;
      await upload(server.url, inv, 'weights', source, 'payload.bin');
      await resetHWM(server.pid);
      await resetHWM(agent.pid);

      const doTransfer = async () => {
        const cpu0 = { server: await cpuSeconds(server.pid), agent: await cpuSeconds(agent!.pid) };
        const t0 = performance.now();
        const res = await postJson(`/api/invocations/${inv}/transfer/`, { board_id: board.id });
        const ms = performance.now() - t0;
        cpu.push({ server: cpuSince(cpu0.server, await cpuSeconds(server.pid)), agent: cpuSince(cpu0.agent, await cpuSeconds(agent!.pid)) });
        const op = (await res.json()) as { status: string; started_at: string; finished_at: string; result: { bytes_sent: number } };
        if (res.status !== 200 || op.status !== 'succeeded') throw new Error(`transfer answered ${res.status}: ${JSON.stringify(op)}`);
        if (op.result.bytes_sent !== sizeMiB * MiB) throw new Error(`transfer sent ${op.result.bytes_sent} bytes`);
        transferMs.push(ms);
        opMs.push(Date.parse(op.finished_at) - Date.parse(op.started_at));
        const onBoard = await sha256File(path.join(agentDir, 'invocations', String(inv), 'payload.bin'));
        if (onBoard !== sha) throw new Error('the file on the board does not match');
      };
      const doScp = async () => {
        scpMs.push(await scp(sshd!, source, scpDest));
        if ((await sha256File(scpDest)) !== sha) throw new Error('scp copy does not match');
        await fs.rm(scpDest);
      };
      if (r % 2 === 0) {
        await doTransfer();
        await doScp();
      } else {
        await doScp();
        await doTransfer();
      }
      serverPeak = Math.max(serverPeak, await vmHWM(server.pid));
      agentPeak = Math.max(agentPeak, await vmHWM(agent.pid));
      console.log(`round ${r + 1}: transfer ${fmt(transferMs.at(-1)!)} (${rate(transferMs.at(-1)!)}), scp ${fmt(scpMs.at(-1)!)} (${rate(scpMs.at(-1)!)}); CPU during the transfer: server ${fmtCpu(cpu.at(-1)!.server)}, agent ${fmtCpu(cpu.at(-1)!.agent)}`);
      if (lastInvocation) await api(`/api/invocations/${lastInvocation}/`, { method: 'DELETE' });
      lastInvocation = inv;
    }

    // The board holds this content already: a transfer only checks and links.
    const cached: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const res = await postJson(`/api/invocations/${lastInvocation}/transfer/`, { board_id: board.id });
      cached.push(performance.now() - t0);
      const op = (await res.json()) as { status: string; result: { bytes_sent?: number } };
      if (res.status !== 200 || (op.result.bytes_sent ?? 0) !== 0) throw new Error(`cached transfer: ${res.status} ${JSON.stringify(op)}`);
    }

    const t = median(transferMs);
    const s = median(scpMs);
    console.log('');
    console.log(`transfer operation (POST → 200, median of ${rounds}): ${fmt(t)}  ${rate(t)}   [operation started→finished: ${fmt(median(opMs))}]`);
    console.log(`scp, default cipher   (median of ${rounds}):           ${fmt(s)}  ${rate(s)}`);
    console.log(`ratio scp / transfer: ${(s / t).toFixed(2)}×   (goal ≥ 2×)`);
    console.log(`peak RSS during the rounds: server ${mb(serverPeak)}, agent ${mb(agentPeak)}   (goal < 150 MB each)`);
    console.log(`cached re-transfer (median of 5): ${median(cached).toFixed(1)} ms   (goal < 100 ms)`);
  } finally {
    sshd?.proc.kill('SIGTERM');
    await agent?.stop();
    await cluster.cleanup();
    await fs.rm(work, { recursive: true, force: true });
    if (serverEntry) await fs.rm(path.dirname(serverEntry), { recursive: true, force: true });
  }
}

await main();
