import type { ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '@mm/protocol';

export interface SseClientOptions {
  clock: Clock;
  /** Unread output a client may have before it counts as behind. */
  maxBacklogBytes: number;
  /** How long a client may stay behind before it is cut off (it may catch up meanwhile). */
  graceMs: number;
  /**
   * Past this much unread output the client is cut at once, grace or not: the backlog is
   * bounded whatever the grace (default: twice `maxBacklogBytes`).
   */
  hardLimitBytes?: number;
}

/**
 * One client of an event stream. A write never waits, so one slow reader cannot hold up
 * the others (a producer that can wait, like a replay from the database, awaits `drained()`
 * between writes). A client whose unread output stays above `maxBacklogBytes` for longer
 * than `graceMs`, or ever passes the hard limit, is cut off (its EventSource reconnects and
 * resumes with `Last-Event-ID`) instead of growing the server's memory.
 *
 * The stream starts as the body of the route's Response (the Node adapter writes the
 * head, then whatever the body yields). Once the head is out and the body's queue is empty,
 * frames go straight to the Node response (`out`): a thousand clients then cost a thousand
 * socket writes per event, not a thousand trips through a web stream. The body stays open
 * and silent meanwhile, so the adapter never writes between our frames; it ends when we
 * close it, and the adapter cancels it when the client leaves.
 */
export class SseClient {
  lastWriteAt: number;
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;
  private direct = false;
  private graceTimer: TimerHandle | undefined;
  private readonly hardLimitBytes: number;
  private readonly closeListeners: Array<() => void> = [];
  private drainWaiters: Array<() => void> = [];

  constructor(
    private readonly opts: SseClientOptions,
    /** The client's Node response; without it every frame goes through the body stream. */
    private readonly out?: ServerResponse,
  ) {
    this.lastWriteAt = opts.clock.now();
    this.hardLimitBytes = opts.hardLimitBytes ?? 2 * opts.maxBacklogBytes;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: () => this.wakeDrainWaiters(),
        // The adapter cancels the body when the client's connection closes.
        cancel: () => this.closeOnce(),
      },
      // desiredSize goes below 0 once more than the hard limit waits unread.
      { highWaterMark: this.hardLimitBytes, size: (chunk) => chunk.byteLength },
    );
    out?.once('close', () => this.closeOnce());
    out?.on('drain', () => this.wakeDrainWaiters());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Calls `listener` once when the client is gone (left, cut off or ended). */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Unread output: what the body stream or the socket still holds. */
  get backlogBytes(): number {
    if (this.direct && this.out) return this.out.writableLength;
    return this.hardLimitBytes - (this.controller.desiredSize ?? 0);
  }

  /** False when the client is gone or was just cut off for falling behind. */
  write(frame: Buffer): boolean {
    if (this.closed) return false;
    const out = this.out;
    // Straight to the socket once the adapter has sent the head and everything queued before.
    if (!this.direct && out?.headersSent && this.controller.desiredSize === this.hardLimitBytes) this.direct = true;
    if (this.backlogBytes + frame.byteLength > this.hardLimitBytes) return this.cut();
    if (this.direct && out) out.write(frame);
    else this.controller.enqueue(frame);
    this.lastWriteAt = this.opts.clock.now();
    this.checkBacklog();
    return true;
  }

  /** Resolves once the backlog is under `maxBacklogBytes` (or the client is gone). */
  async drained(): Promise<void> {
    while (!this.closed && this.backlogBytes > this.opts.maxBacklogBytes) {
      await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    }
  }

  /** Ends the stream politely (the stream is over, or shutdown). */
  end(): void {
    if (this.closed) return;
    // The adapter ends the response once the body ends (after anything still queued).
    this.controller.close();
    this.closeOnce();
  }

  /** Behind for the first time: the grace period starts; caught up: it is called off. */
  private checkBacklog(): void {
    const behind = this.backlogBytes > this.opts.maxBacklogBytes;
    if (behind && !this.graceTimer) {
      this.graceTimer = this.opts.clock.setTimeout(() => {
        this.graceTimer = undefined;
        if (this.backlogBytes > this.opts.maxBacklogBytes) this.cut();
      }, this.opts.graceMs);
      this.graceTimer.unref();
    } else if (!behind && this.graceTimer) {
      this.opts.clock.clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
    }
  }

  private wakeDrainWaiters(): void {
    if (this.graceTimer && this.backlogBytes <= this.opts.maxBacklogBytes) this.checkBacklog();
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Drops the client: what it had queued is discarded; it reconnects and resumes. Its
   * connection is reset, not closed: a close would queue the FIN behind everything the
   * kernel still holds for it (megabytes for a reader that stopped), so a stalled client
   * would learn of the cut only after reading all of that, or never. A reset reaches it at
   * once and drops those bytes too.
   */
  private cut(): false {
    const socket = this.out?.socket;
    if (socket) socket.resetAndDestroy();
    else if (this.out) this.out.destroy();
    else this.controller.error(new Error('the client fell too far behind'));
    this.closeOnce();
    return false;
  }

  private closeOnce(): void {
    if (this.closed) return;
    this.closed = true;
    this.opts.clock.clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.wakeDrainWaiters();
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}
