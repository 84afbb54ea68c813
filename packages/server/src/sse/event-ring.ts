interface Buffered {
  /** The stream's last event id once this event was seen (SSE ids stick until the next one). */
  lastId: string | undefined;
  frame: Buffer;
}

/**
 * The last `capacity` events of a stream, for `Last-Event-ID` resumption. Ids are compared
 * as strings. A fixed array used as a circle: pushing never moves the others.
 */
export class EventRing {
  private readonly items: Array<Buffered | undefined>;
  /** Where the next event goes. */
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<Buffered | undefined>(Math.max(0, capacity));
  }

  get size(): number {
    return this.count;
  }

  push(lastId: string | undefined, frame: Buffer): void {
    if (this.capacity === 0) return;
    this.items[this.head] = { lastId, frame };
    this.head = (this.head + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /**
   * The events a client that last saw `lastEventId` missed: those after the newest event
   * that carried that id (`complete`). An id the buffer no longer (or never) held yields
   * everything buffered with `complete: false`: the client missed events, these are the
   * ones still known, and what came between is lost (the caller says so: a gap).
   */
  since(lastEventId: string): { frames: Buffer[]; complete: boolean } {
    const all = this.ordered();
    for (let i = all.length - 1; i >= 0; i--) {
      if (all[i]!.lastId === lastEventId) return { frames: all.slice(i + 1).map((b) => b.frame), complete: true };
    }
    return { frames: all.map((b) => b.frame), complete: false };
  }

  /** Oldest first. */
  private ordered(): Buffered[] {
    const out: Buffered[] = [];
    const start = (this.head - this.count + this.capacity) % Math.max(1, this.capacity);
    for (let i = 0; i < this.count; i++) out.push(this.items[(start + i) % this.capacity]!);
    return out;
  }
}
