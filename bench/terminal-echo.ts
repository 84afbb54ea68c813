/**
 * Terminal latency and flow control (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/terminal-echo.ts [--samples 100] [--rtt-ms 100] [--flood-s 10]
 *
 * A real control plane and real simulated boards (`mm-agent --simulate`) as child processes,
 * each board's shell `/bin/sh` in a pseudo-terminal (docs/terminal.md).
 *
 * 1. Keystroke echo round trip: one key typed into the terminal's WebSocket, until the tty's
 *    echo of it is back (client → server → link → agent → pty → agent → link → server →
 *    client), `--samples` times, for a board linked over loopback and for a board whose link
 *    goes through the WAN stand-in (bench/wan-proxy.ts, `--rtt-ms` round trip, 50 MB/s).
 *    Target: the link's round trip + < 10 ms.
 * 2. A flood: `yes` in board A's terminal for `--flood-s` seconds while the server's RSS is
 *    sampled, and meanwhile board B moves 20 MB of output through its own terminal
 *    (`head -c 15000000 /dev/urandom | base64`); its rate alone before, during the flood and
 *    alone after. The server's RSS includes its database when it runs the embedded one: set
 *    DATABASE_URL to a scratch PostgreSQL database to see the server's own memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startWanProxy } from './wan-proxy.ts';
import { openTerminal, type TerminalClient } from '../test/support/terminal-client.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOKEN = 'bench-admin-token';
const auth = { authorization: `Bearer ${TOKEN}` };

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0`);
  return v;
}
const samples = arg('samples', 100);
const rttMs = arg('rtt-ms', 100);
const floodS = arg('flood-s', 10);

const rss = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};
const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function start(bin: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        if (ready.test(line)) {
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          child.stderr!.resume();
          return resolve({ child, line });
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${bin} exited ${code}: ${buf.slice(-2000)}`)));
  });
}

async function echoRoundTrips(t: TerminalClient, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    const from = t.output().length;
    const t0 = performance.now();
    t.type(ch);
    await t.waitFor(ch, { from, timeoutMs: 10_000 });
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 10));
  }
  t.type('\x15'); // Ctrl-U: the typed line goes
  return times.sort((a, b) => a - b);
}

/**
 * Bytes/s of a command's output through a terminal, counted frame by frame as it arrives; the
 * end is the marker line the shell prints after it. (Matching the whole accumulated output
 * after every frame, as waitFor does, costs the client more than the terminal: quadratic.)
 */
function throughput(t: TerminalClient, cmd: string, until: string): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    let tail = '';
    const t0 = performance.now();
    t.keepOutput = false;
    t.onBytes = (b) => {
      bytes += b.length;
      tail = (tail + b.toString('latin1')).slice(-(until.length + 64));
      if (!tail.includes(`\n${until}`)) return;
      t.onBytes = undefined;
      t.keepOutput = true;
      resolve(bytes / ((performance.now() - t0) / 1000));
    };
    t.type(`${cmd}; echo ${until}\r`);
  });
}

async function main(): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-terminal-'));
  const children: ChildProcess[] = [];
  try {
    const server = await start(path.join(repoRoot, 'packages/server/bin/mm-server.mjs'), [], { HOST: '127.0.0.1', PORT: '0', MM_DATA_DIR: path.join(dir, 'server'), MM_API_TOKEN: TOKEN, LOG_LEVEL: 'info', DATABASE_URL: process.env.DATABASE_URL ?? '' }, /control plane listening/);
    children.push(server.child);
    const url = String((JSON.parse(server.line) as { url: string }).url);
    const port = Number(new URL(url).port);
    const mkBoard = async (name: string) =>
      (await (await fetch(`${url}/api/boards/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name }) })).json()) as { id: string; token: string };
    const wan = await startWanProxy({ target: { host: '127.0.0.1', port }, rttMs, rateBytesPerS: 50e6 });
    const boards = { a: await mkBoard('bench-a'), b: await mkBoard('bench-b'), w: await mkBoard('bench-wan') };
    const agentEnv = { MM_TERMINAL_USER: os.userInfo().username, MM_TERMINAL_SHELL: '/bin/sh', MM_SIM_GPIO_PORT: '0', LOG_LEVEL: 'warn', ...(existsSync('/usr/bin/python3') ? { MM_PYTHON: '/usr/bin/python3' } : {}) };
    for (const [key, b] of Object.entries(boards)) {
      const serverUrl = key === 'w' ? `http://127.0.0.1:${wan.port}` : url;
      const child = spawn(process.execPath, [path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs'), '--simulate'], {
        env: { ...process.env, ...agentEnv, MM_SERVER_URL: serverUrl, MM_BOARD_TOKEN: b.token, MM_AGENT_DIR: path.join(dir, key) },
        stdio: 'ignore',
      });
      children.push(child);
    }
    for (const b of Object.values(boards)) {
      for (let i = 0; ; i++) {
        const s = (await (await fetch(`${url}/api/boards/${b.id}/`, { headers: auth })).json()) as { status: string };
        if (s.status === 'online') break;
        if (i > 600) throw new Error('a board did not come online');
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const open = async (id: string) => {
      const t = await openTerminal(url, id, auth, { cols: 120, rows: 40 });
      await t.waitFor(/[#$] $/, { timeoutMs: 60_000 });
      return t;
    };
    const ta = await open(boards.a.id);
    const tb = await open(boards.b.id);
    const tw = await open(boards.w.id);
    console.log(`terminal-echo: ${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs`);
    for (const [name, t, base] of [['loopback', ta, 0], [`WAN stand-in (${rttMs} ms RTT)`, tw, rttMs]] as const) {
      const r = await echoRoundTrips(t, samples);
      console.log(`echo round trip, ${name}: p50 ${pct(r, 50).toFixed(1)} ms, p90 ${pct(r, 90).toFixed(1)} ms, p99 ${pct(r, 99).toFixed(1)} ms, max ${r[r.length - 1]!.toFixed(1)} ms; over the link's RTT at p50: ${(pct(r, 50) - base).toFixed(1)} ms (${samples} keys)`);
    }

    const transfer = 'head -c 15000000 /dev/urandom | base64';
    const rssAtStart = rss(server.child.pid!);
    let peakAlone = rssAtStart;
    const aloneSampler = setInterval(() => (peakAlone = Math.max(peakAlone, rss(server.child.pid!))), 100);
    const alone = await throughput(tb, transfer, 'DONE-ALONE');
    clearInterval(aloneSampler);
    console.log(`board B's terminal output alone: ${mb(alone)}/s; server RSS ${mb(rssAtStart)}, peak during it ${mb(peakAlone)} (+${mb(peakAlone - rssAtStart)})`);
    const before = rss(server.child.pid!);
    // The flood's samples by time: a bounded server is as big in the flood's second half as in its first.
    const samplesRss: Array<{ at: number; rss: number }> = [];
    let flooded = 0;
    ta.keepOutput = false;
    ta.onBytes = (b) => (flooded += b.length);
    // The flood lasts --flood-s in all (at least as long as board B's transfer).
    const floodStart = performance.now();
    ta.type('yes\r');
    const sampler = setInterval(() => samplesRss.push({ at: performance.now() - floodStart, rss: rss(server.child.pid!) }), 100);
    const during = await throughput(tb, transfer, 'DONE-FLOOD');
    await new Promise((r) => setTimeout(r, Math.max(0, floodS * 1000 - (performance.now() - floodStart))));
    clearInterval(sampler);
    const floodSeconds = (performance.now() - floodStart) / 1000;
    ta.onBytes = undefined;
    ta.keepOutput = true;
    ta.type('\x03');
    await ta.waitFor(/[#$] $/, { from: ta.output().length, timeoutMs: 60_000 });
    // Alone once more: the machine's load moves, and a rate alone before and after brackets it.
    const after = await throughput(tb, transfer, 'DONE-AFTER');
    console.log(`board B's terminal output during board A's yes flood: ${mb(during)}/s (${((during / alone) * 100).toFixed(0)} % of alone before, ${((during / after) * 100).toFixed(0)} % of alone after: ${mb(after)}/s)`);
    const half = (floodSeconds * 1000) / 2;
    const peakOf = (xs: Array<{ rss: number }>) => xs.reduce((m, x) => Math.max(m, x.rss), before);
    const peak = peakOf(samplesRss);
    const secondHalf = peakOf(samplesRss.filter((x) => x.at >= half));
    console.log(
      `yes flood: ${mb(flooded)} reached the client in ${floodSeconds.toFixed(1)} s (${mb(flooded / floodSeconds)}/s); server RSS before ${mb(before)}, peak during ${mb(peak)} (+${mb(peak - before)}), peak in its second half (board B done) ${mb(secondHalf)}, at its end ${mb(samplesRss.at(-1)?.rss ?? before)}`,
    );
    for (const t of [ta, tb, tw]) t.close();
    await wan.close();
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
