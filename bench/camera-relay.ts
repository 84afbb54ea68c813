/**
 * Capture-to-viewer latency of the camera relay (run by hand, prints figures; not a test):
 *
 *   npx tsx bench/camera-relay.ts [--viewers 1,10,50] [--seconds 10] [--rtt-ms 200] [--rate-mb-s 10]
 *
 * A real control plane (`mm-server`, embedded database unless DATABASE_URL is set), a real
 * simulated board (`mm-agent --simulate`) and the webcam script with its simulated camera
 * (640×480 at 15 fps) as child processes. For each viewer count, that many viewers follow
 * GET /api/device-scripts/<id>/camera/ for `--seconds`; one more viewer is throttled to one
 * frame a second (it pauses its socket after each frame). Latency is, per frame a viewer
 * gets, its arrival time minus the script's X-Capture-Time (same machine, same clock):
 * p50 / p95 over the unthrottled viewers, and their frame rate. Then the same with the
 * agent's link to the server through bench/wan-proxy.ts (`--rtt-ms` round trip, so half of
 * it one way; `--rate-mb-s` each direction). Last, the server's RSS while one viewer reads
 * nothing at all for `--seconds` (sampled every second): it must stay flat.
 *
 * Goals: loopback p95 < 100 ms at 50 viewers; over the long link, the one-way delay plus
 * less than 100 ms. The viewers live in this one process, so their own parsing is part of
 * the figure; the machine's load average is printed alongside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMjpeg, type MjpegClient } from '../packages/webcam/test/mjpeg-reader.ts';
import { freePort } from '../test/e2e/device-scripts-support.ts';
import { startWanProxy, type WanProxy } from './wan-proxy.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const viewerCounts = arg('viewers', '1,10,50').split(',').map(Number);
const seconds = Number(arg('seconds', '10'));
const rttMs = Number(arg('rtt-ms', '200'));
const rateMbS = Number(arg('rate-mb-s', '10'));

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (v: number) => `${v.toFixed(0)} ms`;
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

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
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => r(clearTimeout(t)));
  });
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
    await new Promise((r) => setTimeout(r, 200));
  }
}
const sleep = (msecs: number) => new Promise((r) => setTimeout(r, msecs));

/** Viewers for `seconds` (plus one throttled to 1 frame/s): latency of the unthrottled ones. */
async function measure(url: string, directUrl: string, count: number): Promise<string> {
  const lat: number[] = [];
  const frames: number[] = [];
  const viewers: MjpegClient[] = [];
  const throttledAges: number[] = [];
  let measuring = false;
  for (let i = 0; i < count; i++) {
    const index = i;
    frames.push(0);
    viewers.push(
      await openMjpeg(url, {}, {
        keep: 0,
        onPart: (p) => {
          if (!measuring) return;
          lat.push(Date.now() - Number(p.headers['x-capture-time']));
          frames[index]!++;
        },
      }),
    );
  }
  let throttled: MjpegClient | undefined;
  throttled = await openMjpeg(url, {}, {
    keep: 0,
    onPart: (p) => {
      if (measuring) throttledAges.push(Date.now() - Number(p.headers['x-capture-time']));
      // One frame a second: the socket is paused after each one.
      const res = throttled?.res;
      res?.pause();
      setTimeout(() => res?.resume(), 1000);
    },
  });
  // The baseline: one viewer straight on the script, no relay (encode time and load show here too).
  const direct: number[] = [];
  const baseline = await openMjpeg(directUrl, {}, { keep: 0, onPart: (p) => measuring && direct.push(Date.now() - Number(p.headers['x-capture-time'])) });
  await Promise.all(viewers.map((v) => v.waitParts(3, 60_000)));
  await sleep(1000);
  measuring = true;
  const t0 = Date.now();
  await sleep(seconds * 1000);
  measuring = false;
  const elapsed = (Date.now() - t0) / 1000;
  for (const v of [...viewers, throttled, baseline]) v.close();
  lat.sort((a, b) => a - b);
  direct.sort((a, b) => a - b);
  frames.sort((a, b) => a - b);
  const fps = (n: number) => (n / elapsed).toFixed(1);
  return (
    `${String(count).padStart(3)} viewers: p50 ${ms(percentile(lat, 50))}, p95 ${ms(percentile(lat, 95))}, max ${ms(lat.at(-1) ?? NaN)} over ${lat.length} frames; ` +
    `per viewer ${fps(frames[0] ?? 0)}–${fps(frames.at(-1) ?? 0)} fps; throttled viewer ${throttledAges.length} frames, age p50 ${ms(percentile(throttledAges.sort((a, b) => a - b), 50))}; ` +
    `straight from the script (no relay): p50 ${ms(percentile(direct, 50))}, p95 ${ms(percentile(direct, 95))}, ${fps(direct.length)} fps`
  );
}

async function main(): Promise<void> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-bench-camera-'));
  const port = await freePort();
  const webcamPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  let wan: WanProxy | undefined;
  try {
    const server = start('mm-server', ['packages/server/bin/mm-server.mjs'], { PORT: String(port), MM_DATA_DIR: dataDir, LOG_LEVEL: 'warn', MM_CAMERA_LINGER_MS: '0' });
    children.push(server);
    const webcam = start('mm-webcam', ['packages/webcam/bin/mm-webcam.mjs', '--simulate', '--port', String(webcamPort)], {});
    children.push(webcam);
    await until('the server', async () => ((await fetch(`${base}/api/health/`)).ok ? true : undefined));
    const board = (await (await fetch(`${base}/api/boards/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })).json()) as { id: string; token: string };
    const { scripts } = (await (await fetch(`${base}/api/device-scripts/?device_type=webcam`)).json()) as { scripts: Array<{ id: string }> };
    const camId = scripts[0]!.id;
    await fetch(`${base}/api/device-scripts/${camId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: webcamPort }) });
    const url = `${base}/api/device-scripts/${camId}/camera/?board_id=${board.id}`;
    const directUrl = `http://127.0.0.1:${webcamPort}/stream.mjpg`;

    const startAgent = (serverUrl: string, dir: string) =>
      start('mm-agent', ['packages/agent/bin/mm-agent.mjs', '--simulate'], {
        MM_SERVER_URL: serverUrl,
        MM_BOARD_TOKEN: board.token,
        MM_AGENT_DIR: path.join(dataDir, dir),
        MM_SIM_GPIO_PORT: String(0),
        MM_SCRIPT_PORTS: String(webcamPort),
        LOG_LEVEL: 'warn',
      });
    const online = () => until('the board', async () => ((await (await fetch(`${base}/api/boards/${board.id}/`)).json()) as { status: string }).status === 'online' || undefined);

    let agent = startAgent(base, 'agent');
    children.push(agent);
    await online();
    await until('the camera', async () => ((await fetch(`http://127.0.0.1:${webcamPort}/state`)).ok ? true : undefined));

    console.log(`camera-relay: 640x480 at 15 fps (simulated camera), ${seconds} s per run, on ${os.cpus().length} cores`);
    console.log('loopback (one more viewer throttled to 1 frame/s in each run):');
    for (const n of viewerCounts) console.log(`  ${await measure(url, directUrl, n)}`);

    // The long link: the agent reaches the server through the WAN stand-in.
    await stop(agent);
    wan = await startWanProxy({ target: { host: '127.0.0.1', port }, rttMs, rateBytesPerS: rateMbS * 1e6 });
    agent = startAgent(`http://127.0.0.1:${wan.port}`, 'agent-wan');
    children.push(agent);
    await sleep(1000);
    await online();
    console.log(`through the WAN stand-in (${rttMs} ms round trip = ${rttMs / 2} ms one way, ${rateMbS} MB/s; goal p95 < ${rttMs / 2 + 100} ms):`);
    for (const n of viewerCounts) console.log(`  ${await measure(url, directUrl, n)}`);
    await stop(agent);
    await wan.close();
    wan = undefined;
    agent = startAgent(base, 'agent-2');
    children.push(agent);
    await online();

    // Memory with a viewer that reads nothing at all, beside one that reads.
    const live = await openMjpeg(url, {}, { keep: 1 });
    const stalled = await openMjpeg(url, {}, { keep: 1 });
    await Promise.all([live.waitParts(3, 60_000), stalled.waitParts(1, 60_000)]);
    stalled.res.pause();
    const samples: number[] = [];
    for (let s = 0; s <= seconds * 2; s++) {
      samples.push(rss(server.pid!));
      await sleep(1000);
    }
    const liveFrames = live.count();
    live.close();
    stalled.close();
    const [l1, l5] = os.loadavg();
    console.log(
      `server RSS with a stalled viewer over ${seconds * 2} s: first ${mb(samples[0]!)}, last ${mb(samples.at(-1)!)}, min ${mb(Math.min(...samples))}, max ${mb(Math.max(...samples))} ` +
        `(the live viewer beside it got ${liveFrames} frames; the stalled one ${stalled.count()})`,
    );
    console.log(`load average at the end: ${l1!.toFixed(2)} / ${l5!.toFixed(2)} (1 / 5 min)`);
  } finally {
    stopping = true;
    await wan?.close();
    for (const child of children.reverse()) await stop(child);
    await fsp.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
