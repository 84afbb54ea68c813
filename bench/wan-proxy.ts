/**
 * A stand-in for a long, narrow link (this kernel has no `netem`): a TCP proxy that, in
 * each direction on its own, caps the rate with a token bucket and delays every byte by half
 * the round trip. It splits TCP (two connections per client), so what it emulates is what an
 * application's own flow control sees: a pipe with a fixed rate and a fixed latency, whose
 * capacity in flight is rate × one-way delay.
 *
 * Memory is bounded: a direction holds at most what the emulated wire holds (rate × one-way
 * delay) plus a short queue before it (`queueMs` of the rate) plus one read; past that it
 * stops reading its source (TCP backpressure then reaches the sender). A destination that
 * reads slowly stops the delivery, and so, in turn, the source.
 *
 * Half-close passes through (a FIN is delivered after the last byte, with the same delay);
 * an error or reset on one side destroys the other.
 *
 *   npx tsx bench/wan-proxy.ts --target 127.0.0.1:8000 [--listen 127.0.0.1:0] --rtt-ms 100 --rate-mb-s 50
 *
 * or `startWanProxy({ target, rttMs, rateBytesPerS })` from a benchmark.
 */
import net from 'node:net';
import { pathToFileURL } from 'node:url';

export interface WanProxyOptions {
  /** Where the proxy connects each client to. */
  target: { host: string; port: number };
  /** Where it listens; default 127.0.0.1 on a free port. */
  listen?: { host?: string; port?: number };
  /** Round trip added (each direction gets half). */
  rttMs: number;
  /** Rate cap of each direction, bytes per second (Infinity: no cap). */
  rateBytesPerS: number;
  /** Token bucket size (bytes that may leave at once after an idle spell); default 64 KiB. */
  burstBytes?: number;
  /** Queue in front of the wire, in milliseconds of the rate (a router's buffer); default 20. */
  queueMs?: number;
}

export interface DirectionStats {
  bytes: number;
  /** Most bytes this direction ever held (on the emulated wire and in its queue). */
  peakHeldBytes: number;
}

export interface WanProxy {
  port: number;
  host: string;
  /** Byte counts since start: client→target (`up`) and target→client (`down`). */
  stats(): { up: DirectionStats; down: DirectionStats; connections: number };
  close(): Promise<void>;
}

interface Piece {
  data: Buffer;
  deliverAt: number;
}

const MAX_PIECE = 64 * 1024;

/**
 * One direction of one connection: `src` → token bucket → delay line → `dst`.
 * Times are in milliseconds of `performance.now()`.
 */
class DelayedDirection {
  private readonly queue: Piece[] = [];
  private head = 0;
  private held = 0;
  /** When the emulated wire is free again (the token bucket, as a deficit in time). */
  private wireFreeAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private srcEnded = false;
  private dstBlocked = false;
  private resumeTimer: NodeJS.Timeout | undefined;
  private readonly oneWayMs: number;
  private readonly msPerByte: number;
  private readonly burstMs: number;
  private readonly queueMs: number;
  private readonly maxHeld: number;

  constructor(
    private readonly src: net.Socket,
    private readonly dst: net.Socket,
    opts: Required<Pick<WanProxyOptions, 'rttMs' | 'rateBytesPerS' | 'burstBytes' | 'queueMs'>>,
    private readonly stats: DirectionStats,
  ) {
    this.oneWayMs = opts.rttMs / 2;
    this.msPerByte = Number.isFinite(opts.rateBytesPerS) ? 1000 / opts.rateBytesPerS : 0;
    this.burstMs = opts.burstBytes * this.msPerByte;
    this.queueMs = opts.queueMs;
    // What the wire and the queue hold at full rate, plus one read of slack; with no rate
    // cap, a fixed 4 MiB (the delay line then only delays).
    this.maxHeld = Number.isFinite(opts.rateBytesPerS)
      ? Math.ceil((opts.rateBytesPerS * (this.oneWayMs + opts.queueMs)) / 1000) + 2 * MAX_PIECE
      : 4 * 1024 * 1024;
    src.on('data', (chunk: Buffer) => this.onData(chunk));
    src.on('end', () => {
      this.srcEnded = true;
      this.pump();
    });
    dst.on('drain', () => {
      this.dstBlocked = false;
      this.pump();
    });
  }

  private onData(chunk: Buffer): void {
    const now = performance.now();
    for (let at = 0; at < chunk.length; at += MAX_PIECE) {
      const data = chunk.subarray(at, Math.min(chunk.length, at + MAX_PIECE));
      // Token bucket: tokens accrue at the rate up to the burst; a piece takes len/rate of wire time.
      this.wireFreeAt = Math.max(this.wireFreeAt, now - this.burstMs) + data.length * this.msPerByte;
      this.queue.push({ data, deliverAt: Math.max(now, this.wireFreeAt) + this.oneWayMs });
      this.held += data.length;
    }
    this.stats.peakHeldBytes = Math.max(this.stats.peakHeldBytes, this.held);
    this.throttleSource(now);
    this.pump();
  }

  /** Stops reading while the queue in front of the wire is longer than `queueMs`, or too much is held. */
  private throttleSource(now: number): void {
    const backlogMs = this.wireFreeAt - now;
    if (backlogMs <= this.queueMs && this.held <= this.maxHeld) return;
    this.src.pause();
    if (this.resumeTimer) return;
    const check = () => {
      this.resumeTimer = undefined;
      const t = performance.now();
      if (this.wireFreeAt - t <= this.queueMs && this.held <= this.maxHeld) {
        this.src.resume();
        return;
      }
      // Wait for the wire to drain to the queue limit (or poll while the destination is slow).
      const wait = Math.max(1, this.wireFreeAt - t - this.queueMs);
      this.resumeTimer = setTimeout(check, Math.min(wait, 50));
    };
    this.resumeTimer = setTimeout(check, Math.max(1, backlogMs - this.queueMs));
  }

  /** Delivers every piece whose time has come, unless the destination pushes back. */
  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = performance.now();
    while (!this.dstBlocked && this.head < this.queue.length) {
      const piece = this.queue[this.head]!;
      if (piece.deliverAt > now) break;
      this.head++;
      this.held -= piece.data.length;
      this.stats.bytes += piece.data.length;
      if (!this.dst.destroyed && !this.dst.write(piece.data)) this.dstBlocked = true;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    const next = this.queue[this.head];
    if (next && !this.dstBlocked) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, next.deliverAt - now));
    } else if (!next && this.srcEnded && !this.dst.destroyed && !this.dst.writableEnded) {
      // Everything before the FIN has arrived: pass the half-close on.
      this.dst.end();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.resumeTimer);
    this.queue.length = 0;
    this.head = 0;
    this.held = 0;
  }
}

export async function startWanProxy(opts: WanProxyOptions): Promise<WanProxy> {
  if (!(opts.rttMs >= 0)) throw new RangeError('rttMs must be a number ≥ 0');
  if (!(opts.rateBytesPerS > 0)) throw new RangeError('rateBytesPerS must be > 0 (Infinity for no cap)');
  const shape = { rttMs: opts.rttMs, rateBytesPerS: opts.rateBytesPerS, burstBytes: opts.burstBytes ?? MAX_PIECE, queueMs: opts.queueMs ?? 20 };
  const up: DirectionStats = { bytes: 0, peakHeldBytes: 0 };
  const down: DirectionStats = { bytes: 0, peakHeldBytes: 0 };
  const open = new Set<net.Socket>();
  let connections = 0;

  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    connections++;
    const upstream = net.connect({ host: opts.target.host, port: opts.target.port, allowHalfOpen: true, noDelay: true });
    open.add(client);
    open.add(upstream);
    client.pause();
    const directions = [new DelayedDirection(client, upstream, shape, up), new DelayedDirection(upstream, client, shape, down)];
    upstream.once('connect', () => client.resume());
    let closed = 0;
    const onClose = (s: net.Socket, other: net.Socket) => (hadError: boolean) => {
      open.delete(s);
      // A reset or error on one side resets the other at once; a clean close waits for its own FIN.
      if (hadError && !other.destroyed) other.resetAndDestroy();
      if (++closed === 2) for (const d of directions) d.stop();
    };
    client.on('close', onClose(client, upstream));
    upstream.on('close', onClose(upstream, client));
    // Errors end in 'close' with hadError; the listener keeps them from being thrown.
    client.on('error', () => {
      if (!upstream.destroyed) upstream.resetAndDestroy();
    });
    upstream.on('error', () => {
      if (!client.destroyed) client.resetAndDestroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen?.port ?? 0, opts.listen?.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    host: address.address,
    stats: () => ({ up: { ...up }, down: { ...down }, connections }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function parseHostPort(v: string, what: string): { host: string; port: number } {
  const i = v.lastIndexOf(':');
  const port = Number(v.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what} must be host:port, got ${v}`);
  return { host: v.slice(0, i) || '127.0.0.1', port };
}

async function cli(argv: string[]): Promise<void> {
  const opt = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const target = opt('target');
  if (!target) {
    console.error('usage: wan-proxy --target HOST:PORT [--listen HOST:PORT] [--rtt-ms 100] [--rate-mb-s 50] [--queue-ms 20]');
    process.exit(2);
  }
  const rate = Number(opt('rate-mb-s') ?? 'Infinity');
  const proxy = await startWanProxy({
    target: parseHostPort(target, '--target'),
    listen: parseHostPort(opt('listen') ?? '127.0.0.1:0', '--listen'),
    rttMs: Number(opt('rtt-ms') ?? 100),
    rateBytesPerS: rate * 1e6,
    queueMs: Number(opt('queue-ms') ?? 20),
  });
  console.log(`wan-proxy ${proxy.host}:${proxy.port} -> ${target}, rtt ${opt('rtt-ms') ?? 100} ms, ${rate} MB/s each way`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await cli(process.argv.slice(2));
