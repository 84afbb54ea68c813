import { systemClock, type Clock } from '@mm/protocol';

/**
 * Bounds the agent handshakes in progress: from the board-token lookup of an upgrade request
 * to the settled hello (or the link closing first). After a restart thousands of boards
 * come back within seconds; every handshake costs database round trips, and queued behind
 * each other in the pool they all time out together (bench/many-agents.ts, docs/perf/scale.md).
 * Over the limit, an upgrade is refused at once, before any database work, with 503 and a
 * Retry-After; the agent backs off with jitter and comes back, so the server links boards at
 * its own pace and they come online steadily from the first second.
 */
export class HandshakeGate {
  private inProgress = 0;

  constructor(
    private readonly limit: number,
    /** A handshake whose hello never comes frees its place after this long (the socket stays). */
    private readonly holdMaxMs = 10_000,
    private readonly clock: Clock = systemClock,
  ) {}

  get active(): number {
    return this.inProgress;
  }

  /** A release function (safe to call more than once), or undefined when the gate is full. */
  tryEnter(): (() => void) | undefined {
    if (this.inProgress >= this.limit) return undefined;
    this.inProgress++;
    let released = false;
    const timer = this.clock.setTimeout(() => release(), this.holdMaxMs);
    timer.unref();
    const release = () => {
      if (released) return;
      released = true;
      this.clock.clearTimeout(timer);
      this.inProgress--;
    };
    return release;
  }
}

/** Seconds a refused agent is asked to wait: spread over 1–5 s so the refused do not come back together. */
export function handshakeRetryAfterS(random: () => number = Math.random): number {
  return 1 + Math.floor(random() * 5);
}
