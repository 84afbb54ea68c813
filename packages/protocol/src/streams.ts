import type { Writable } from 'node:stream';
import { LINK_WINDOW_CAP_BYTES, MAX_WRITE_BATCH_BYTES, SENDER_FRAME_POOL, STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from './limits.ts';
import { compressChunk, DecompressError, decompressChunk, MAX_COMPRESSED_SHARE, QUALITY_DENSE, type CompressionDecider, type LinkQuality } from './compression.ts';
import { encodeCompressedFrame, encodeDataHeader, FRAME_HEADER_BYTES, writeDataHeader } from './frames.ts';
import type { ErrorInfo, MessageOf } from './messages.ts';

/**
 * Credit-based flow control for file streams over the link, the same on both ends.
 *
 * The receiver opens a stream with `stream.pull { credit }`; the sender sends data frames
 * while it has credit and waits for `stream.credit` otherwise; the receiver grants credit
 * only for bytes it has written to disk. So at most `credit` bytes of a stream are ever in
 * flight or in memory, whatever the speed of the link or of the disk.
 */

/** The messages the stream classes send. */
export type StreamControlMessage = MessageOf<'stream.credit'> | MessageOf<'stream.end'> | MessageOf<'stream.abort'>;

/** The part of a connection the stream classes need (LinkPeer implements it). */
export interface LinkOutput {
  /** Sends one message of the catalog. */
  sendMessage(message: StreamControlMessage): void;
  /**
   * Sends one binary message: `frame`, or `frame` followed by `payload` (a data frame's
   * header and its bytes, sent as two WebSocket fragments of one message so the payload is
   * never copied into a frame buffer). Resolves once the socket has taken it. `onSent`
   * runs once the socket no longer needs the buffers (undefined) or failed (an error): a
   * pooled frame buffer may be reused from then on.
   */
  sendFrame(frame: Buffer, payload?: Uint8Array, onSent?: (err: Error | undefined) => void): Promise<void>;
}

/**
 * A source the sender reads straight into its frame buffers, after the header (a file):
 * the bytes go from the page cache into the buffer the socket sends, with no copy and no
 * fresh buffer per frame.
 */
export interface ChunkReader {
  /** Reads up to `length` bytes into `into` at `offset`; resolves with how many (0 at the end). */
  read(into: Buffer, offset: number, length: number): Promise<number>;
  /**
   * Reads at `position` of the source without moving `read`'s place (a file): lets the
   * sender sample the middle of a file before deciding to compress it. Optional.
   */
  readAt?(into: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Releases the source (called once, whatever happened). */
  close(): Promise<void>;
}

export class StreamError extends Error {
  constructor(readonly info: ErrorInfo) {
    super(info.message);
    this.name = 'StreamError';
  }
}

/** The sending end of one stream: `pump()` a source through it, feed it `stream.credit`. */
export class StreamSender {
  private credit: number;
  private wake: (() => void) | undefined;
  private failure: StreamError | undefined;
  /**
   * Where a file stream's time went (pumpReader): waiting for the receiver's credit, for the
   * socket to take a frame back, and reading the source. Logged when the stream ends: a
   * sender that mostly waits for credit is held back by the receiver's window or writes.
   */
  readonly waits = { creditMs: 0, socketMs: 0, readMs: 0, compressMs: 0 };
  /** Payload bytes sent in data frames (what credit counts): below the file's bytes when frames went compressed. */
  wireBytes = 0;
  private readonly linkRate = new SenderLinkRate();

  constructor(
    private readonly link: LinkOutput,
    readonly streamId: number,
    initialCredit: number,
  ) {
    this.credit = initialCredit;
  }

  addCredit(bytes: number): void {
    this.credit += bytes;
    this.wakeUp();
  }

  /** The link's rate measured while credit held this stream back (wire bytes/s), if it was. */
  get measuredLinkBps(): number | undefined {
    return this.linkRate.bps;
  }

  /** The receiver gave up, or the link closed: `pump()` rejects with this error. */
  fail(info: ErrorInfo): void {
    this.failure ??= new StreamError(info);
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Waits until `ready()` holds or the stream failed (then throws). */
  private async until(ready: () => boolean): Promise<void> {
    while (!ready() && !this.failure) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure;
  }

  /**
   * Sends every byte of `source`, then `stream.end` with `size` (the source's total size,
   * counting bytes before the pull's offset). Reading pauses while credit is exhausted,
   * so a file source is read no faster than the receiver writes. A source whose size is
   * known only at its end (a relayed HTTP body, always pulled from offset 0) leaves `size`
   * out: `stream.end` then carries the bytes sent.
   */
  async pump(source: AsyncIterable<Uint8Array>, size?: number): Promise<number> {
    let sent = 0;
    for await (const chunk of source) {
      let at = 0;
      while (at < chunk.byteLength) {
        await this.until(() => this.credit > 0);
        // A piece never exceeds the credit: a receiver may grant less than one chunk.
        const piece = chunk.subarray(at, at + Math.min(STREAM_CHUNK_BYTES, this.credit));
        at += piece.byteLength;
        this.credit -= piece.byteLength;
        await this.link.sendFrame(encodeDataHeader(this.streamId), piece);
        sent += piece.byteLength;
      }
    }
    if (this.failure) throw this.failure;
    this.link.sendMessage({ type: 'stream.end', stream_id: this.streamId, size: size ?? sent });
    return sent;
  }

  /**
   * Like `pump`, from a ChunkReader: each data frame is one buffer, the header written in
   * front and the bytes read from the source straight in after it, so the socket sends one
   * WebSocket frame per message (the receiver never reassembles fragments) and nothing is
   * copied. The buffers come from a pool of SENDER_FRAME_POOL per stream, each reused once
   * the socket has written it: the pool bounds what this stream has queued on the socket.
   * `onRead` counts the bytes read (a stream cut short still reports what it moved).
   *
   * With `compression` (the puller offered it), each frame the decider picks is compressed
   * on its own and sent as a compressed frame if it shrank; its pooled buffer is free again
   * at once. Credit counts the payload on the wire either way.
   */
  async pumpReader(reader: ChunkReader, size?: number, onRead?: (bytes: number) => void, compression?: CompressionDecider): Promise<number> {
    const free: Buffer[] = [];
    let allocated = 0;
    let sent = 0;
    let ended = false;
    const release = (frame: Buffer) => (err: Error | undefined) => {
      // A buffer whose write failed may still be referenced by the socket: never reused.
      if (err) return;
      free.push(frame);
      this.wakeUp();
    };
    const canRead = () => this.credit > 0 && (free.length > 0 || allocated < SENDER_FRAME_POOL);
    // Frames read and being compressed (on the thread pool, several at once), sent in order.
    // Raw, one at a time: read, send. Each reserves its raw size from the credit when read;
    // a compressed one gives back what it saved when it is sent.
    const ahead: Promise<PreparedFrame>[] = [];
    // Frames go raw exactly as without compression (read one, send it) while the decider says so.
    let compressing = compression !== undefined;
    for (;;) {
      while (!ended && ahead.length < (compressing ? COMPRESS_AHEAD_FRAMES : 1) && (ahead.length === 0 || canRead())) {
        const waitedFrom = performance.now();
        const forCredit = this.credit <= 0;
        await this.until(canRead);
        const readFrom = performance.now();
        if (forCredit) this.waits.creditMs += readFrom - waitedFrom;
        else this.waits.socketMs += readFrom - waitedFrom;
        let frame = free.pop();
        if (!frame) {
          frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + STREAM_CHUNK_BYTES);
          allocated++;
        }
        let n: number;
        try {
          n = await reader.read(frame, FRAME_HEADER_BYTES, Math.min(STREAM_CHUNK_BYTES, this.credit));
        } catch (err) {
          free.push(frame);
          throw err;
        }
        this.waits.readMs += performance.now() - readFrom;
        if (n === 0) {
          free.push(frame);
          ended = true;
          break;
        }
        onRead?.(n);
        if (this.failure) throw this.failure;
        this.credit -= n;
        const read = frame;
        const quality = compression?.next();
        compressing = quality !== undefined;
        const prepared = quality !== undefined && compression
          ? this.compress(read, n, compression, quality).then((packed) => ({ frame: read, n, packed }))
          : Promise.resolve({ frame: read, n, packed: undefined });
        // Awaited in order below; a failure of one further ahead must not go unhandled meanwhile.
        prepared.catch(() => {});
        ahead.push(prepared);
      }
      const next = ahead.shift();
      if (!next) break;
      const { frame, n, packed } = await next;
      if (this.failure) throw this.failure;
      if (packed) {
        free.push(frame);
        this.credit += n - packed.byteLength;
        this.wireBytes += packed.byteLength;
        await this.link.sendFrame(encodeCompressedFrame(this.streamId, n, packed));
      } else {
        if (compression) compression.counts.rawFrames++;
        this.wireBytes += n;
        writeDataHeader(frame, this.streamId);
        await this.link.sendFrame(frame.subarray(0, FRAME_HEADER_BYTES + n), undefined, release(frame));
      }
      this.linkRate.sent(this.wireBytes, this.waits.creditMs + this.waits.socketMs);
      sent += n;
    }
    if (this.failure) throw this.failure;
    this.link.sendMessage({ type: 'stream.end', stream_id: this.streamId, size: size ?? sent });
    return sent;
  }

  /** The frame's `n` bytes compressed, or undefined when they did not shrink enough to send so. */
  private async compress(frame: Buffer, n: number, decider: CompressionDecider, quality: LinkQuality): Promise<Buffer | undefined> {
    const from = performance.now();
    const packed = await compressChunk(frame.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + n), quality);
    const ms = performance.now() - from;
    this.waits.compressMs += ms;
    decider.observe(n, packed.byteLength, ms, quality);
    if (this.failure) throw this.failure;
    if (packed.byteLength > n * MAX_COMPRESSED_SHARE) return undefined;
    decider.counts.compressedFrames++;
    if (quality === QUALITY_DENSE) decider.counts.denseFrames++;
    return packed;
  }
}

/** A frame read from the source, and its compressed bytes if it goes compressed. */
interface PreparedFrame {
  frame: Buffer;
  n: number;
  packed: Buffer | undefined;
}

/** Frames a compressing sender reads and compresses ahead of the one it sends (the thread pool runs 4). */
const COMPRESS_AHEAD_FRAMES = 4;

/** Shortest interval a sender's link-rate sample spans. */
const SENDER_RATE_INTERVAL_MS = 250;
/** Share of an interval the sender must have waited (for credit or for the socket) for its rate to be the link's. */
const CREDIT_BOUND_SHARE = 0.25;

/**
 * The link's rate as a sender sees it: wire bytes sent per interval in which it waited for
 * credit or for the socket to drain a good share of the time (so the link or the receiver,
 * not the sender, set the pace); the best of the recent such intervals.
 */
class SenderLinkRate {
  private mark: { at: number; wire: number; heldMs: number } | undefined;
  private readonly samples: number[] = [];

  sent(wireBytes: number, heldMs: number): void {
    const now = performance.now();
    if (!this.mark) {
      this.mark = { at: now, wire: wireBytes, heldMs };
      return;
    }
    const span = now - this.mark.at;
    if (span < SENDER_RATE_INTERVAL_MS) return;
    if ((heldMs - this.mark.heldMs) / span >= CREDIT_BOUND_SHARE) {
      this.samples.push(((wireBytes - this.mark.wire) / span) * 1000);
      if (this.samples.length > RATE_SAMPLES) this.samples.shift();
    }
    this.mark = { at: now, wire: wireBytes, heldMs };
  }

  get bps(): number | undefined {
    return this.samples.length > 0 ? Math.max(...this.samples) : undefined;
  }
}

/** Where a receiver writes: a file, a hashing pipeline, a socket… */
export interface ByteSink {
  /** Resolves once the bytes are written (not merely buffered). */
  write(chunk: Buffer): Promise<void>;
  /**
   * Writes several chunks in order, as one write where the sink can (a file's writev).
   * Left out, the receiver writes them one by one.
   */
  writev?(chunks: Buffer[]): Promise<void>;
  /** Called once after the last write, when the sender said `stream.end`. */
  finish(): Promise<void>;
  /** Called once if the stream fails; must release what it holds. */
  destroy(error: Error): void;
}

/**
 * The sink of a pushed stream before anything adopted it: writes wait until `attach` names
 * the real sink (the receiver writes one batch at a time, so one batch waits; the rest stays
 * within the push's credit in the receiver's queue).
 */
export class DeferredSink implements ByteSink {
  private target: ByteSink | undefined;
  private failure: Error | undefined;
  private readonly ready: Promise<ByteSink>;
  private resolveReady!: (sink: ByteSink) => void;

  constructor() {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
  }

  /** From now on bytes go to `sink` (destroyed at once if the stream already failed). */
  attach(sink: ByteSink): void {
    if (this.failure) {
      sink.destroy(this.failure);
      return;
    }
    this.target = sink;
    this.resolveReady(sink);
  }

  async write(chunk: Buffer): Promise<void> {
    return (await this.ready).write(chunk);
  }

  async writev(chunks: Buffer[]): Promise<void> {
    const sink = await this.ready;
    if (sink.writev) return sink.writev(chunks);
    for (const chunk of chunks) await sink.write(chunk);
  }

  async finish(): Promise<void> {
    return (await this.ready).finish();
  }

  destroy(error: Error): void {
    this.failure = error;
    this.target?.destroy(error);
  }
}

/** A ByteSink over a Node Writable (e.g. fs.createWriteStream). */
export function writableSink(w: Writable): ByteSink {
  return {
    write: (chunk) => new Promise((resolve, reject) => w.write(chunk, (err) => (err ? reject(err) : resolve()))),
    finish: () =>
      new Promise((resolve, reject) => {
        w.once('error', reject);
        w.end(() => resolve());
      }),
    // The failure already reaches the puller through the receiver's `done`; the 'error' the
    // writable emits on destroy must not become an uncaught exception when nobody else listens.
    destroy: (error) => {
      w.once('error', () => {});
      w.destroy(error);
    },
  };
}

/**
 * What the adaptive windows of one link may add up to (the memory cap per link): each
 * stream holds its starting window regardless, and grows only by what is left.
 *
 * A budget may have a `parent` shared by many links (the server's, for all its boards). The
 * parent counts only what windows hold beyond STREAM_WINDOW_BYTES, their growth: a stream
 * grows only by what is left in both, so however many boards send at once, their windows
 * add up to at most the parent's cap plus STREAM_WINDOW_BYTES per stream, and streams that
 * never grow (an idle relayed event stream) take nothing from the others' growth.
 */
export class WindowBudget {
  private used = 0;
  /**
   * The window the last stream of this link ended with: the next one starts there instead
   * of at STREAM_WINDOW_BYTES (as TCP keeps a route's metrics), so a long link's second
   * file does not ramp up again from a small window.
   */
  private learned = 0;
  /** The delivery rate the last stream of this link measured (wire bytes/s), a hint for the next sender. */
  learnedRate: number | undefined;
  constructor(
    readonly cap: number = LINK_WINDOW_CAP_BYTES,
    private readonly parent?: WindowBudget,
  ) {}

  /** Bytes of growth this budget (and its parent) can still give. */
  private get room(): number {
    const own = this.cap - this.used;
    return this.parent ? Math.min(own, this.parent.room) : own;
  }

  /** The window a new stream starts with: what the last one learned, within what is left of the cap. */
  startingWindow(): number {
    const parentRoom = this.parent ? STREAM_WINDOW_BYTES + this.parent.room : Number.POSITIVE_INFINITY;
    return Math.max(STREAM_WINDOW_BYTES, Math.min(this.learned, this.cap - this.used, parentRoom));
  }

  /** A stream ended with this window (its own measurement of the link). */
  learn(window: number): void {
    this.learned = window;
  }

  /** Takes up to `bytes` of growth; resolves how much was granted (0 when the cap is reached). */
  grow(bytes: number): number {
    const granted = Math.max(0, Math.min(bytes, this.room));
    this.used += granted;
    this.parent?.hold(granted);
    return granted;
  }

  /** Takes a stream's starting window, even past the cap (a stream always gets one). */
  hold(bytes: number): void {
    this.used += bytes;
    this.parent?.hold(Math.max(0, bytes - STREAM_WINDOW_BYTES));
  }

  /** A stream ended holding `bytes` (its starting window and its growth). */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    this.parent?.release(Math.max(0, bytes - STREAM_WINDOW_BYTES));
  }

  get inUse(): number {
    return this.used;
  }
}

const rawSize = (f: QueuedFrame) => f.rawLength ?? f.payload.byteLength;

/** How many recent delivery-rate samples the window keeps (their maximum is the rate used). */
const RATE_SAMPLES = 8;
/** Shortest interval a delivery-rate sample spans. */
const MIN_RATE_INTERVAL_MS = 20;

/**
 * Follows the bandwidth-delay product of one stream, from the receiver's side alone:
 *
 * - the round trip: the sender cannot send a byte past the credit it held before a grant
 *   until that grant has reached it, so the first byte past that limit arrives at least one
 *   round trip after the grant left. The smallest such sample is the round trip (plus one
 *   frame's time on the wire); queueing only makes samples larger.
 * - the delivery rate: bytes received per interval of at least one round trip, the
 *   largest of the last few intervals.
 *
 * The target window is 2 × rate × round trip: while the window limits the stream, the rate
 * is window / round trip and the target doubles the window each round trip (a slow start);
 * once the link limits it, the window settles at twice the link's bandwidth-delay product.
 */
export class WindowTuner {
  private minRttMs = Number.POSITIVE_INFINITY;
  private readonly grants: { limitBefore: number; at: number }[] = [];
  private mark: { at: number; bytes: number } | undefined;
  private readonly rates: number[] = [];

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A grant left raising the sender's limit from `limitBefore`. */
  granted(limitBefore: number): void {
    this.grants.push({ limitBefore, at: this.now() });
  }

  /** `received` bytes in total have arrived. */
  arrived(received: number): void {
    const now = this.now();
    while (this.grants.length > 0 && received > this.grants[0]!.limitBefore) {
      const grant = this.grants.shift()!;
      this.minRttMs = Math.min(this.minRttMs, now - grant.at);
    }
    if (!this.mark) {
      this.mark = { at: now, bytes: received };
      return;
    }
    const span = now - this.mark.at;
    if (span >= Math.max(MIN_RATE_INTERVAL_MS, Number.isFinite(this.minRttMs) ? this.minRttMs : 0)) {
      this.rates.push(((received - this.mark.bytes) / span) * 1000);
      if (this.rates.length > RATE_SAMPLES) this.rates.shift();
      this.mark = { at: now, bytes: received };
    }
  }

  /** The measured round trip in ms (undefined before the first sample). */
  get rttMs(): number | undefined {
    return Number.isFinite(this.minRttMs) ? this.minRttMs : undefined;
  }

  /** Bytes per second (undefined before the first sample). */
  get rate(): number | undefined {
    return this.rates.length > 0 ? Math.max(...this.rates) : undefined;
  }

  /** The window this stream should have now (0 while nothing is measured yet). */
  target(): number {
    const rtt = this.rttMs;
    const rate = this.rate;
    if (rtt === undefined || rate === undefined) return 0;
    return 2 * rate * (rtt / 1000);
  }
}

export interface StreamReceiverOptions {
  /** A fixed window; left out, the window starts at STREAM_WINDOW_BYTES and adapts (WindowTuner) under `budget`. */
  window?: number;
  /** Bytes of the file written, after each write. */
  onBytes?: (bytes: number) => void;
  /** The pull offered compression: compressed data frames are welcome (otherwise they fail the stream). */
  acceptCompressed?: boolean;
  /** The link's memory cap for adaptive windows; left out, a cap of this stream alone. */
  budget?: WindowBudget;
  /**
   * A pushed stream (`stream.push`): the sender holds this much credit already, and the
   * receiver grants the rest of its window only once it is adopted (`adopted()`).
   */
  pushedCredit?: number;
}

/**
 * The receiving end of one stream; created by the side that sent `stream.pull`.
 *
 * Frames that arrive while a write runs are gathered and written together (one `writev`
 * of at most MAX_WRITE_BATCH_BYTES), and credit is granted per write, once at least an
 * eighth of the window is written and not yet granted.
 */
/** How a stream ended: the file bytes it wrote, the source's size, the payload bytes that crossed the wire. */
export interface StreamDone {
  bytes: number;
  size: number;
  wireBytes: number;
}

/** A data frame waiting to be written: `rawLength` is set for a compressed one, `decoded` once its decompression started. */
interface QueuedFrame {
  payload: Buffer;
  rawLength: number | undefined;
  decoded?: Promise<Buffer>;
}

/**
 * Compressed frames a receiver decompresses ahead of the batch it writes (the thread pool
 * runs 4): decoding overlaps the write and hash of the batch before, and the frames of a
 * burst decode as they arrive instead of all at once when their batch is taken. Bounds the
 * decompressed bytes held beyond the batch being written to 4 × 512 KiB.
 */
const DECODE_AHEAD_FRAMES = 4;

export class StreamReceiver {
  readonly done: Promise<StreamDone>;
  private resolveDone!: (v: StreamDone) => void;
  private rejectDone!: (e: StreamError) => void;
  /** Payload bytes received (wire bytes: what credit counts). */
  private received = 0;
  /** File bytes written (decompressed). */
  private written = 0;
  /** Some frame of this stream came compressed. */
  private anyCompressed = false;
  private currentWindow: number;
  /** Credit granted in all (the first pull's included): the sender may send up to here. */
  private creditLimit: number;
  private outstandingCredit: number;
  private ungranted = 0;
  private readonly queue: QueuedFrame[] = [];
  private writing = false;
  private endSize: number | undefined;
  private settled = false;
  private readonly tuner: WindowTuner | undefined;
  private readonly budget: WindowBudget | undefined;
  /** Time spent in the sink's writes and how many there were (logged when a pull ends). */
  readonly writes = { ms: 0, count: 0 };

  constructor(
    private readonly link: LinkOutput,
    readonly streamId: number,
    private readonly sink: ByteSink,
    private readonly opts: StreamReceiverOptions = {},
  ) {
    this.currentWindow = opts.window ?? STREAM_WINDOW_BYTES;
    if (opts.window === undefined) {
      this.tuner = new WindowTuner();
      this.budget = opts.budget ?? new WindowBudget();
      this.currentWindow = this.budget.startingWindow();
      this.budget.hold(this.currentWindow);
    }
    this.outstandingCredit = opts.pushedCredit ?? this.currentWindow;
    this.creditLimit = this.outstandingCredit;
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A failed stream is reported through `done`; never leave the rejection unhandled.
    this.done.catch(() => {});
  }

  /** The credit this stream grants in flight (its starting window, then what it grew to). */
  get window(): number {
    return this.currentWindow;
  }

  /** File bytes written so far on this stream (from the pull's offset). */
  get bytes(): number {
    return this.written;
  }

  /** Payload bytes received so far (compressed frames count what crossed the wire). */
  get wireBytes(): number {
    return this.received;
  }

  /** The adaptive window's measurements (undefined for a fixed window). */
  get measured(): { rttMs: number | undefined; rate: number | undefined } | undefined {
    return this.tuner ? { rttMs: this.tuner.rttMs, rate: this.tuner.rate } : undefined;
  }

  /**
   * A pushed stream was adopted: grants what its window holds beyond the credit the sender
   * started with (an unadopted push keeps the sender to that credit, all of it in memory here).
   */
  adopted(): void {
    const more = this.currentWindow - this.creditLimit;
    if (this.settled || more <= 0) return;
    this.tuner?.granted(this.creditLimit);
    this.creditLimit += more;
    this.outstandingCredit += more;
    this.link.sendMessage({ type: 'stream.credit', stream_id: this.streamId, bytes: more });
  }

  /** A data frame for this stream arrived (`rawLength`: a compressed one, of that many bytes once decompressed). */
  push(payload: Buffer, rawLength?: number): void {
    if (this.settled) return;
    if (rawLength !== undefined && !this.opts.acceptCompressed) {
      this.fail({ code: 'malformed_frame', message: `stream ${this.streamId}: a compressed frame on a stream that did not offer compression` }, true);
      return;
    }
    if (payload.byteLength > this.outstandingCredit) {
      this.fail({ code: 'flow_control_violation', message: `stream ${this.streamId}: sender exceeded its credit` }, true);
      return;
    }
    this.outstandingCredit -= payload.byteLength;
    this.received += payload.byteLength;
    this.tuner?.arrived(this.received);
    if (rawLength !== undefined) this.anyCompressed = true;
    this.queue.push({ payload, rawLength });
    this.decodeAhead();
    this.writeNext();
  }

  /** Starts decompressing the first DECODE_AHEAD_FRAMES compressed frames of the queue. */
  private decodeAhead(): void {
    let started = 0;
    for (const f of this.queue) {
      if (started >= DECODE_AHEAD_FRAMES) return;
      if (f.rawLength === undefined) continue;
      if (!f.decoded) {
        f.decoded = decompressChunk(f.payload, f.rawLength);
        // Awaited when its batch is written; a failure meanwhile must not go unhandled.
        f.decoded.catch(() => {});
      }
      started++;
    }
  }

  /** The sender said `stream.end`; resolves `done` once everything is written. */
  end(size: number): void {
    if (this.settled || this.endSize !== undefined) return;
    this.endSize = size;
    this.writeNext();
  }

  /** Writes what has arrived (in order, one write at a time); finishes after the last. */
  private writeNext(): void {
    if (this.writing || this.settled) return;
    if (this.queue.length === 0) {
      if (this.endSize !== undefined) this.finish(this.endSize);
      return;
    }
    // The batch is bounded by its decompressed size: memory stays within a batch per stream.
    const batch: QueuedFrame[] = [];
    let bytes = 0;
    let wire = 0;
    while (this.queue.length > 0 && (batch.length === 0 || bytes + rawSize(this.queue[0]!) <= MAX_WRITE_BATCH_BYTES)) {
      const next = this.queue.shift()!;
      batch.push(next);
      bytes += rawSize(next);
      wire += next.payload.byteLength;
    }
    // The frames behind this batch decode while it is decoded and written.
    this.decodeAhead();
    this.writing = true;
    const writeFrom = performance.now();
    this.decodeAndWrite(batch).then(
      () => {
        this.writes.ms += performance.now() - writeFrom;
        this.writes.count++;
        this.writing = false;
        if (this.settled) return;
        this.written += bytes;
        this.opts.onBytes?.(bytes);
        this.ungranted += wire;
        this.grant();
        this.writeNext();
      },
      (err: unknown) => {
        this.writing = false;
        const code = err instanceof DecompressError ? 'malformed_frame' : 'write_failed';
        this.fail({ code, message: err instanceof Error ? err.message : String(err) }, true);
      },
    );
  }

  /** Decompresses the compressed frames of a batch (on the thread pool, in parallel; some already are), then writes it. */
  private async decodeAndWrite(batch: QueuedFrame[]): Promise<void> {
    const chunks = batch.some((f) => f.rawLength !== undefined)
      ? await Promise.all(batch.map((f) => (f.rawLength === undefined ? f.payload : (f.decoded ?? decompressChunk(f.payload, f.rawLength)))))
      : batch.map((f) => f.payload);
    if (this.settled) return;
    await this.writeBatch(chunks);
  }

  private async writeBatch(batch: Buffer[]): Promise<void> {
    if (batch.length === 1) return this.sink.write(batch[0]!);
    if (this.sink.writev) return this.sink.writev(batch);
    for (const chunk of batch) await this.sink.write(chunk);
  }

  /** Grants the written bytes back once they make an eighth of the window, plus any growth. */
  private grant(): void {
    if (this.ungranted < this.currentWindow / 8 || this.endSize !== undefined) return;
    let bytes = this.ungranted;
    this.ungranted = 0;
    if (this.tuner && this.budget) {
      const want = Math.min(this.tuner.target(), this.budget.cap) - this.currentWindow;
      const grown = want > 0 ? this.budget.grow(Math.ceil(want)) : 0;
      this.currentWindow += grown;
      bytes += grown;
      this.tuner.granted(this.creditLimit);
    }
    this.creditLimit += bytes;
    this.outstandingCredit += bytes;
    this.link.sendMessage({ type: 'stream.credit', stream_id: this.streamId, bytes });
  }

  private finish(size: number): void {
    this.writing = true;
    this.sink.finish().then(
      () => {
        if (this.settled) return;
        this.learnWindow();
        this.settle();
        this.resolveDone({ bytes: this.written, size, wireBytes: this.received });
      },
      (err: unknown) => {
        this.fail({ code: 'write_failed', message: err instanceof Error ? err.message : String(err) }, true);
      },
    );
  }

  private settle(): void {
    this.settled = true;
    this.queue.length = 0;
    if (this.tuner) this.budget?.release(this.currentWindow);
  }

  /** A stream that ran to its end teaches the link's budget the window it reached. */
  private learnWindow(): void {
    if (this.tuner && this.tuner.rate !== undefined) this.budget?.learn(this.currentWindow);
    // Only a raw stream's rate is the link's: a compressed one's wire rate is the compressor's.
    if (this.budget && this.tuner?.rate !== undefined && !this.anyCompressed) this.budget.learnedRate = this.tuner.rate;
  }

  /**
   * The stream failed: the sender aborted (`tellSender` false), or this side gives up
   * (`tellSender` true sends `stream.abort`). The link closing is a failure too.
   */
  fail(info: ErrorInfo, tellSender = false): void {
    if (this.settled) return;
    this.settle();
    const error = new StreamError(info);
    this.sink.destroy(error);
    if (tellSender) this.link.sendMessage({ type: 'stream.abort', stream_id: this.streamId, error: info });
    this.rejectDone(error);
  }
}
