/**
 * One client of a relayed event stream: the body of its response, fed with frames that
 * are formatted once for all clients. A write never waits, so one slow reader cannot hold
 * up the others; the Node adapter moves the body to the socket as fast as the socket takes
 * it. A client whose unread output passes `maxBufferedBytes` is cut off (its EventSource
 * reconnects and resumes with `Last-Event-ID`) instead of growing the server's memory.
 */
export class SseClient {
  lastWriteAt = Date.now();
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;

  constructor(
    maxBufferedBytes: number,
    private readonly onClose: (client: SseClient) => void,
    /** Drops the client's connection (its socket); without it the body is errored. */
    private readonly cut?: () => void,
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
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** False when the client is gone or was just cut off for falling behind. */
  write(frame: Buffer): boolean {
    if (this.closed) return false;
    if ((this.controller.desiredSize ?? 0) < 0) {
      // Dropping the socket discards what it had queued; the client reconnects and resumes.
      if (this.cut) this.cut();
      else this.controller.error(new Error('the client fell too far behind'));
      this.closeOnce();
      return false;
    }
    this.controller.enqueue(frame);
    this.lastWriteAt = Date.now();
    return true;
  }

  /** Ends the stream politely (shutdown). */
  end(): void {
    if (this.closed) return;
    this.controller.close();
    this.closeOnce();
  }

  private closeOnce(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
  }
}
