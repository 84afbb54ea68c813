import type { ServerResponse } from 'node:http';

/**
 * One client of a relayed event stream. A write never waits, so one slow reader cannot
 * hold up the others; a client whose unread output passes `maxBufferedBytes` is cut off
 * (its EventSource reconnects and resumes with `Last-Event-ID`) instead of growing the
 * server's memory.
 *
 * The stream starts as the body of the route's Response (the Node adapter writes the
 * head, then whatever the body yields). Once the head is out and the body's queue is empty,
 * frames go straight to the Node response (`out`): a thousand clients then cost a thousand
 * socket writes per event, not a thousand trips through a web stream. The body stays open
 * and silent meanwhile, so the adapter never writes between our frames; it ends when we
 * close it, and the adapter cancels it when the client leaves.
 */
export class SseClient {
  lastWriteAt = Date.now();
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;
  private direct = false;

  constructor(
    private readonly maxBufferedBytes: number,
    private readonly onClose: (client: SseClient) => void,
    /** The client's Node response; without it every frame goes through the body stream. */
    private readonly out?: ServerResponse,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        // The adapter cancels the body when the client's connection closes.
        cancel: () => this.closeOnce(),
      },
      // desiredSize goes below 0 once more than this waits unread.
      { highWaterMark: maxBufferedBytes, size: (chunk) => chunk.byteLength },
    );
    out?.once('close', () => this.closeOnce());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** False when the client is gone or was just cut off for falling behind. */
  write(frame: Buffer): boolean {
    if (this.closed) return false;
    const out = this.out;
    // Straight to the socket once the adapter has sent the head and everything queued before.
    if (!this.direct && out?.headersSent && this.controller.desiredSize === this.maxBufferedBytes) this.direct = true;
    if (this.direct && out) {
      if (out.writableLength > this.maxBufferedBytes) return this.cut();
      out.write(frame);
    } else {
      if ((this.controller.desiredSize ?? 0) < 0) return this.cut();
      this.controller.enqueue(frame);
    }
    this.lastWriteAt = Date.now();
    return true;
  }

  /** Ends the stream politely (shutdown). */
  end(): void {
    if (this.closed) return;
    // The adapter ends the response once the body ends (after anything still queued).
    this.controller.close();
    this.closeOnce();
  }

  /** Drops the client: what it had queued is discarded; it reconnects and resumes. */
  private cut(): false {
    if (this.out) this.out.destroy();
    else this.controller.error(new Error('the client fell too far behind'));
    this.closeOnce();
    return false;
  }

  private closeOnce(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }
}
