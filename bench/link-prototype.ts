/**
 * Prototype (bench only): what the receive path of a file costs in three framings, over
 * loopback, with the receiver doing what the agent does (sha256 as bytes arrive, write,
 * fsync) and the sender reading the file in 512 KiB pieces:
 *
 *   ws-fragments  today's data frame: a 5-byte stream header and the payload sent as two
 *                 fragments of one WebSocket message (ws reassembles: one more copy)
 *   ws-single     the header and payload in one buffer, the payload read from the file
 *                 straight in after the header: one WebSocket frame, no reassembly
 *   http          a plain HTTP GET of the file (what a Range GET beside the link would be)
 *
 *   npx tsx bench/link-prototype.ts FILE [--modes ws-fragments,ws-single,http] [--rounds 3] [--piece-kib 512]
 *
 * Prints wall time and the receiver's and sender's CPU (user+sys) per mode. Sender and
 * receiver are child processes; the receiver's time runs from its request to its fsync.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';

/** Data frame payload size (the product's STREAM_CHUNK_BYTES is 512 KiB); the parent passes it on in MM_PIECE_KIB. */
const PIECE = Number(process.env.MM_PIECE_KIB ?? 512) * 1024;
const HEADER = 5;
const SELF = fileURLToPath(import.meta.url);
type Mode = 'ws-fragments' | 'ws-single' | 'http';

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** Sender: serves FILE once in `mode` on a free port; prints {"port"}, then {"cpu"} when done. */
async function serve(file: string, mode: Mode): Promise<void> {
  const size = (await fs.stat(file)).size;
  const server = http.createServer();
  let cpu0 = 0;
  const done = (): void => {
    process.stdout.write(`${JSON.stringify({ cpu: cpuNow() - cpu0 })}\n`);
    server.close();
    setImmediate(() => process.exit(0));
  };
  if (mode === 'http') {
    server.on('request', async (_req, res) => {
      cpu0 = cpuNow();
      res.writeHead(200, { 'content-length': size });
      const handle = await fs.open(file);
      // 1 MiB reads (the product's READ_CHUNK_BYTES)
      const stream = handle.createReadStream({ highWaterMark: 1024 * 1024 });
      stream.pipe(res);
      res.on('finish', done);
    });
  } else {
    const wss = new WebSocketServer({ server, maxPayload: PIECE + 64 * 1024 });
    wss.on('connection', async (ws) => {
      cpu0 = cpuNow();
      const handle = await fs.open(file);
      const socket = (ws as unknown as { _socket: net.Socket })._socket;
      for (let at = 0; at < size; ) {
        const n = Math.min(PIECE, size - at);
        let sent: Promise<void>;
        if (mode === 'ws-single') {
          // The header first, the file's bytes read in right after it: one frame, no copy.
          const frame = Buffer.allocUnsafe(HEADER + n);
          frame[0] = 1;
          frame.writeUInt32BE(1, 1);
          await handle.read(frame, HEADER, n, at);
          sent = new Promise((r, j) => ws.send(frame, { binary: true }, (e) => (e ? j(e) : r())));
        } else {
          const payload = Buffer.allocUnsafe(n);
          await handle.read(payload, 0, n, at);
          const header = Buffer.from([1, 0, 0, 0, 1]);
          ws.send(header, { binary: true, fin: false });
          sent = new Promise((r, j) => ws.send(payload, { binary: true, fin: true }, (e) => (e ? j(e) : r())));
        }
        at += n;
        // Backpressure: at most ~4 MiB queued on the socket (the product's window).
        if (socket.writableLength > 4 * 1024 * 1024) await sent;
      }
      await handle.close();
      ws.close(1000);
      ws.once('close', done);
    });
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as net.AddressInfo).port })}\n`);
}

/** Receiver: fetches, hashes, writes (4 MiB writes), fsyncs; prints {ms, cpu, bytes, sha256}. */
async function fetchFile(port: number, mode: Mode, dest: string): Promise<void> {
  const hash = createHash('sha256');
  let bytes = 0;
  const out = createWriteStream(dest, { highWaterMark: 4 * 1024 * 1024, flush: true });
  const cpu0 = cpuNow();
  const t0 = performance.now();
  const take = (chunk: Buffer): boolean => {
    hash.update(chunk);
    bytes += chunk.length;
    return out.write(chunk);
  };
  await new Promise<void>((resolve, reject) => {
    if (mode === 'http') {
      http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.on('data', (c: Buffer) => {
          if (!take(c)) {
            res.pause();
            out.once('drain', () => res.resume());
          }
        });
        res.on('end', resolve);
        res.on('error', reject);
      });
    } else {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { maxPayload: PIECE + 64 * 1024 });
      ws.on('message', (data: Buffer) => {
        if (!take(data.subarray(HEADER))) {
          ws.pause();
          out.once('drain', () => ws.resume());
        }
      });
      ws.on('close', () => resolve());
      ws.on('error', reject);
    }
  });
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, cpu: cpuNow() - cpu0, bytes, sha256: hash.digest('hex') })}\n`);
}

function child(args: string[]): { next(): Promise<Record<string, number | string>>; exited: Promise<number | null> } {
  const p = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => p.once('exit', (c) => r(c)));
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  p.stdout!.on('data', (d: Buffer) => {
    buf += String(d);
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      waiters.shift()?.();
    }
  });
  return {
    async next() {
      while (lines.length === 0) {
        const gone = await Promise.race([exited.then(() => true), new Promise<false>((r) => waiters.push(() => r(false)))]);
        if (gone && lines.length === 0) throw new Error(`child ${args.join(' ')} exited`);
      }
      return JSON.parse(lines.shift()!) as Record<string, number | string>;
    },
    exited,
  };
}

export async function runMode(file: string, mode: Mode, dest: string): Promise<{ ms: number; receiverCpu: number; senderCpu: number; sha256: string }> {
  const sender = child(['--serve', file, mode]);
  const { port } = await sender.next();
  const receiver = child(['--fetch', String(port), mode, dest]);
  const r = await receiver.next();
  const s = await sender.next();
  await Promise.all([sender.exited, receiver.exited]);
  await fs.rm(dest, { force: true });
  return { ms: Number(r.ms), receiverCpu: Number(r.cpu), senderCpu: Number(s.cpu), sha256: String(r.sha256) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [a, b, c, d] = process.argv.slice(2);
  if (a === '--serve' && b && c) await serve(b, c as Mode);
  else if (a === '--fetch' && b && c && d) await fetchFile(Number(b), c as Mode, d);
  else if (a && !a.startsWith('--')) {
    const modesAt = process.argv.indexOf('--modes');
    const modes = (modesAt >= 0 ? process.argv[modesAt + 1]! : 'ws-fragments,ws-single,http').split(',') as Mode[];
    const pieceAt = process.argv.indexOf('--piece-kib');
    if (pieceAt >= 0) process.env.MM_PIECE_KIB = process.argv[pieceAt + 1];
    const roundsAt = process.argv.indexOf('--rounds');
    const rounds = roundsAt >= 0 ? Number(process.argv[roundsAt + 1]) : 3;
    const size = (await fs.stat(a)).size;
    const dest = path.join(os.tmpdir(), `mm-link-prototype-${process.pid}.bin`);
    const results = new Map<Mode, { ms: number; receiverCpu: number; senderCpu: number }[]>();
    let expected: string | undefined;
    for (let r = 0; r < rounds; r++) {
      for (const mode of [...modes.slice(r % modes.length), ...modes.slice(0, r % modes.length)]) {
        const res = await runMode(a, mode, dest);
        expected ??= res.sha256;
        if (res.sha256 !== expected) throw new Error(`${mode}: sha256 differs`);
        results.set(mode, [...(results.get(mode) ?? []), res]);
      }
    }
    const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    console.log(`${(size / 1024 / 1024).toFixed(0)} MiB, ${process.env.MM_PIECE_KIB ?? 512} KiB frames, median of ${rounds}, load average ${os.loadavg()[0]!.toFixed(1)}`);
    console.log('| framing | wall | MB/s | receiver CPU | sender CPU |');
    console.log('|---|---|---|---|---|');
    for (const [mode, rs] of results) {
      const ms = med(rs.map((x) => x.ms));
      console.log(`| ${mode} | ${(ms / 1000).toFixed(2)} s | ${(size / 1e6 / (ms / 1000)).toFixed(0)} | ${med(rs.map((x) => x.receiverCpu)).toFixed(2)} s | ${med(rs.map((x) => x.senderCpu)).toFixed(2)} s |`);
    }
  } else {
    console.error('usage: link-prototype FILE [--modes ws-fragments,ws-single,http] [--rounds 3]');
    process.exit(2);
  }
}
