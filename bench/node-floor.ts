/**
 * The floor for a Node design of the data plane: one process sends a file over loopback
 * TCP, another hashes it (sha256) as it arrives, writes it and fsyncs. Nothing else: no
 * framing, no flow control above TCP's, no database. The product's transfer is measured
 * against it in the same run (bench/data-plane.ts).
 *
 *   npx tsx bench/node-floor.ts FILE [DEST]      prints the time and rate
 *
 * The encrypted floor (`runFloor(…, { through })`): the sender POSTs the file over HTTPS to a
 * TLS reverse proxy (the bench's nginx with deploy/'s site), which relays the body in plain
 * HTTP to the receiver: the product's route to a board in the field, minus the product.
 *
 * Both ends are child processes of plain node (through tsx's loader, which costs only at
 * start-up), so the caller's event loop does not share their core time. The time runs from
 * the receiver accepting the connection to its fsync returning.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MiB = 1024 * 1024;
const SELF = fileURLToPath(import.meta.url);

export interface FloorResult {
  ms: number;
  bytes: number;
  sha256: string;
}

/**
 * Receiver: listens, prints `{"port":…}`, takes one connection (or with `httpPort`, one HTTP
 * request's body on that port), prints the FloorResult.
 */
async function receive(dest: string, httpPort?: number): Promise<void> {
  const source = httpPort === undefined ? await oneConnection() : await oneRequestBody(httpPort);
  const t0 = performance.now();
  const hash = createHash('sha256');
  let bytes = 0;
  await pipeline(
    source.stream,
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
    // Writes of up to 4 MiB (writev gathers what the socket delivered meanwhile); `flush`:
    // fsync before close, and the pipeline settles after the close.
    createWriteStream(dest, { highWaterMark: 4 * MiB, flush: true }),
  );
  await source.done();
  const result: FloorResult = { ms: performance.now() - t0, bytes, sha256: hash.digest('hex') };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

interface Incoming {
  stream: NodeJS.ReadableStream;
  /** Answers the sender (HTTP: 204 once the file is synced) and stops listening. */
  done: () => Promise<void>;
}

async function oneConnection(): Promise<Incoming> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as net.AddressInfo).port })}\n`);
  const socket = await new Promise<net.Socket>((r) => server.once('connection', r));
  server.close();
  return { stream: socket, done: async () => {} };
}

async function oneRequestBody(port: number): Promise<Incoming> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const [req, res] = await new Promise<[http.IncomingMessage, http.ServerResponse]>((r) => server.once('request', (q, s) => r([q, s])));
  return {
    stream: req,
    done: async () => {
      res.writeHead(204, { connection: 'close' }).end();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Sender through a TLS proxy: one HTTPS POST of the file (1 MiB reads), trusting `ca`. */
async function sendHttps(file: string, url: string, ca: string): Promise<void> {
  const req = https.request(url, { method: 'POST', ca: readFileSync(ca), headers: { 'content-type': 'application/octet-stream' } });
  const answered = new Promise<http.IncomingMessage>((r, j) => req.once('response', r).once('error', j));
  await pipeline(createReadStream(file, { highWaterMark: MiB }), req);
  const res = await answered;
  res.resume();
  if (res.statusCode !== 204) throw new Error(`the proxy answered ${res.statusCode}`);
}

/** Sender: connects and streams the file in 1 MiB reads. */
async function send(file: string, port: number): Promise<void> {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await new Promise<void>((r, j) => socket.once('connect', r).once('error', j));
  await pipeline(createReadStream(file, { highWaterMark: MiB }), socket);
}

function child(args: string[]): { lines: AsyncIterator<string>; exited: Promise<number | null> } {
  const p = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
  async function* lines(): AsyncGenerator<string> {
    let buf = '';
    for await (const chunk of p.stdout!) {
      buf += String(chunk);
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        yield buf.slice(0, nl);
        buf = buf.slice(nl + 1);
      }
    }
  }
  return { lines: lines(), exited };
}

/** Where the encrypted floor's sender goes: `url` on a TLS proxy (certificate `ca`) that relays to `port`. */
export interface FloorProxy {
  url: string;
  ca: string;
  port: number;
}

/** Runs the floor once: `file` → `dest` (removed afterwards unless kept); `through` a TLS proxy. */
export async function runFloor(file: string, dest: string, opts: { keep?: boolean; through?: FloorProxy } = {}): Promise<FloorResult> {
  const through = opts.through;
  const receiver = child(through ? ['--receive', dest, '--http', String(through.port)] : ['--receive', dest]);
  const first = await receiver.lines.next();
  if (first.done) throw new Error('the floor receiver exited before listening');
  const { port } = JSON.parse(first.value) as { port: number };
  const sender = child(through ? ['--send-https', file, through.url, through.ca] : ['--send', file, String(port)]);
  const second = await receiver.lines.next();
  if (second.done) throw new Error('the floor receiver exited without a result');
  const [sent, received] = await Promise.all([sender.exited, receiver.exited]);
  if (sent !== 0 || received !== 0) throw new Error(`floor: sender exited ${sent}, receiver ${received}`);
  if (!opts.keep) await fs.rm(dest, { force: true });
  return JSON.parse(second.value) as FloorResult;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [a, b, c] = process.argv.slice(2);
  if (a === '--receive' && b) await receive(b, c === '--http' ? Number(process.argv[5]) : undefined);
  else if (a === '--send-https' && b && c && process.argv[5]) await sendHttps(b, c, process.argv[5]);
  else if (a === '--send' && b && c) await send(b, Number(c));
  else if (a && !a.startsWith('--')) {
    const dest = b ?? path.join(os.tmpdir(), `mm-floor-${process.pid}.bin`);
    const r = await runFloor(a, dest);
    console.log(`floor: ${r.bytes} bytes in ${(r.ms / 1000).toFixed(3)} s (${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(0)} MB/s), sha256 ${r.sha256}`);
  } else {
    console.error('usage: node-floor FILE [DEST]');
    process.exit(2);
  }
}
