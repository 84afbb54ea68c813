import type { Writable } from 'node:stream';
import { STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from './limits.ts';
import { encodeDataHeader } from './frames.ts';
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
   * never copied into a frame buffer). Resolves once the socket has taken it.
   */
  sendFrame(frame: Buffer, payload?: Uint8Array): Promise<void>;
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

  constructor(
    private readonly link: LinkOutput,
    readonly streamId: number,
    initialCredit: number,
  ) {
    this.credit = initialCredit;
  }

  addCredit(bytes: number): void {
    this.credit += bytes;
    this.wake?.();
  }

  /** The receiver gave up, or the link closed: `pump()` rejects with this error. */
  fail(info: ErrorInfo): void {
    this.failure ??= new StreamError(info);
    this.wake?.();
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
        while (this.credit <= 0 && !this.failure) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
        if (this.failure) throw this.failure;
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
}

/** Where a receiver writes: a file, a hashing pipeline, a socket… */
export interface ByteSink {
  /** Resolves once the bytes are written (not merely buffered). */
  write(chunk: Buffer): Promise<void>;
  /** Called once after the last write, when the sender said `stream.end`. */
  finish(): Promise<void>;
  /** Called once if the stream fails; must release what it holds. */
  destroy(error: Error): void;
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

/** The receiving end of one stream; created by the side that sent `stream.pull`. */
export class StreamReceiver {
  readonly done: Promise<{ bytes: number; size: number }>;
  private resolveDone!: (v: { bytes: number; size: number }) => void;
  private rejectDone!: (e: StreamError) => void;
  private received = 0;
  private outstandingCredit: number;
  private ungranted = 0;
  private writing: Promise<void> = Promise.resolve();
  private settled = false;

  constructor(
    private readonly link: LinkOutput,
    readonly streamId: number,
    private readonly sink: ByteSink,
    private readonly opts: { window?: number; onBytes?: (bytes: number) => void } = {},
  ) {
    this.outstandingCredit = this.window;
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A failed stream is reported through `done`; never leave the rejection unhandled.
    this.done.catch(() => {});
  }

  get window(): number {
    return this.opts.window ?? STREAM_WINDOW_BYTES;
  }

  /** Bytes received so far on this stream (from the pull's offset). */
  get bytes(): number {
    return this.received;
  }

  /** A data frame for this stream arrived. */
  push(payload: Buffer): void {
    if (this.settled) return;
    if (payload.byteLength > this.outstandingCredit) {
      this.fail({ code: 'flow_control_violation', message: `stream ${this.streamId}: sender exceeded its credit` }, true);
      return;
    }
    this.outstandingCredit -= payload.byteLength;
    this.received += payload.byteLength;
    // Writes are chained so they land in order; credit is granted only once written.
    this.writing = this.writing.then(async () => {
      if (this.settled) return;
      await this.sink.write(payload);
      this.opts.onBytes?.(payload.byteLength);
      this.ungranted += payload.byteLength;
      if (this.ungranted >= Math.min(this.window / 4, STREAM_CHUNK_BYTES * 2) && !this.settled) {
        const bytes = this.ungranted;
        this.ungranted = 0;
        this.outstandingCredit += bytes;
        this.link.sendMessage({ type: 'stream.credit', stream_id: this.streamId, bytes });
      }
    });
    this.writing.catch((err: unknown) =>
      this.fail({ code: 'write_failed', message: err instanceof Error ? err.message : String(err) }, true),
    );
  }

  /** The sender said `stream.end`; resolves `done` once everything is written. */
  end(size: number): void {
    if (this.settled) return;
    this.writing
      .then(() => this.sink.finish())
      .then(
        () => {
          if (this.settled) return;
          this.settled = true;
          this.resolveDone({ bytes: this.received, size });
        },
        (err: unknown) => this.fail({ code: 'write_failed', message: err instanceof Error ? err.message : String(err) }, true),
      );
  }

  /**
   * The stream failed: the sender aborted (`tellSender` false), or this side gives up
   * (`tellSender` true sends `stream.abort`). The link closing is a failure too.
   */
  fail(info: ErrorInfo, tellSender = false): void {
    if (this.settled) return;
    this.settled = true;
    const error = new StreamError(info);
    this.sink.destroy(error);
    if (tellSender) this.link.sendMessage({ type: 'stream.abort', stream_id: this.streamId, error: info });
    this.rejectDone(error);
  }
}
