/**
 * Full GCs of a WebSocket receiver, in seconds instead of the data-plane bench's 12-minute
 * sequence (docs/perf/data-plane.md, "Open": the server's GC storms). By hand, never in the suite:
 *
 *   node --expose-gc --min-semi-space-size=16 --import tsx bench/ws-receive-gc.ts [--mib 1024] [--frame-kib 512] [--runs 5]
 *
 * Each run is a fresh receiver process holding ~25 MB of small live objects (a server's
 * state), with its heap limits first configured by a few forced full GCs (`--expose-gc`),
 * as a long-running server's are. A client process sends `--mib` MiB in binary messages of
 * `--frame-kib` KiB; the receiver hashes them and writes them to /dev/null in batches, and
 * prints its CPU and how many major and minor GCs ran. Node flags given to this script go to
 * the receivers too, so flags can be compared (e.g. `--no-incremental-marking`).
 *
 * What it showed: 512 and 128 KiB messages stormed in every run (32–37 full GCs per GiB, ~2.9×
 * the CPU), 64 KiB in one of three, 32 and 16 KiB in none. The product did not follow (docs/perf/data-plane.md).
 * The forced GCs are what brings the storm on: they run while nothing allocates, so V8 sets the
 * next old-generation limit only ~24 MB above the live heap. Floors on that limit
 * (`--initial-old-space-size=N`, 512 MiB, 2 runs each): 48, 64 and 80 MB still stormed, 96 MB
 * ran 3–4 full GCs, 128 MB none (user 0.7–0.8 s instead of 1.8–1.9 s); the server and the
 * agent run with 128 (docs/perf/data-plane.md, "What the data plane does, and why", point 10).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';

const MiB = 1024 * 1024;
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const role = process.argv[2] === 'receiver' || process.argv[2] === 'sender' ? process.argv[2] : 'main';
const mib = arg('mib', 1024);
const frameKiB = arg('frame-kib', 512);
const self = fileURLToPath(import.meta.url);

/** Runs this file again as `role` with the same node flags; resolves its stdout. */
function child(childRole: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = [...process.execArgv, self, childRole, '--mib', String(mib), '--frame-kib', String(frameKiB)];
    const proc = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${childRole} exited with ${code}`))));
  });
}

async function receiver(): Promise<void> {
  const state = globalThis as { live?: unknown[]; gc?: () => void };
  state.live = [];
  for (let i = 0; i < 150_000; i++) state.live.push({ id: i, name: `board-${i}`, tags: [i, `x${i}`], at: new Date() });
  if (!state.gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) state.gc();
  let majors = 0;
  let minors = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind?: number } }).detail;
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
      else minors++;
    }
  }).observe({ entryTypes: ['gc'] });
  const sink = fs.openSync('/dev/null', 'w');
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 4 * MiB });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as { port: number }).port;
  const done = new Promise<void>((resolve) => {
    wss.on('connection', (socket) => {
      const hash = createHash('sha256');
      let bytes = 0;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const [majors0, minors0] = [majors, minors];
      const queue: Buffer[] = [];
      let writing = false;
      const drain = () => {
        if (writing || queue.length === 0) return;
        writing = true;
        fs.writev(sink, queue.splice(0), () => {
          writing = false;
          drain();
        });
      };
      socket.on('message', (data: Buffer) => {
        hash.update(data);
        bytes += data.length;
        queue.push(data);
        drain();
      });
      socket.on('close', () => {
        const cpu = process.cpuUsage(cpu0);
        const figures = {
          mib: bytes / MiB,
          ms: Math.round(performance.now() - t0),
          user_s: +(cpu.user / 1e6).toFixed(2),
          sys_s: +(cpu.system / 1e6).toFixed(2),
          major_gcs: majors - majors0,
          minor_gcs: minors - minors0,
        };
        console.log(JSON.stringify(figures));
        resolve();
      });
    });
  });
  const sender = child('sender', { MM_BENCH_WS_URL: `ws://127.0.0.1:${port}` });
  await Promise.all([done, sender]);
  wss.close();
}

async function sender(): Promise<void> {
  const ws = new WebSocket(process.env.MM_BENCH_WS_URL!);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const frame = Buffer.alloc(frameKiB * 1024, 7);
  const total = mib * MiB;
  let sent = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (sent < total) {
        if (ws.bufferedAmount > 8 * MiB) return void setTimeout(pump, 1);
        ws.send(frame);
        sent += frame.length;
      }
      ws.close();
      ws.once('close', () => resolve());
    };
    pump();
  });
}

async function main(): Promise<void> {
  const runs = arg('runs', 5);
  console.log(`ws receiver: ${mib} MiB in ${frameKiB} KiB messages, ${runs} runs, node flags: ${process.execArgv.join(' ')}`);
  for (let r = 1; r <= runs; r++) console.log(`  run ${r}: ${(await child('receiver')).trim()}`);
}

await (role === 'receiver' ? receiver() : role === 'sender' ? sender() : main());
