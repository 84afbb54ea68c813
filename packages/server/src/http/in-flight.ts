import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';

/**
 * Requests whose handler is still running. A graceful stop cuts the connections of requests
 * still streaming (a large upload) and must then wait for their handlers to finish cleaning
 * up (unlinking a partial file, rolling back) before the database closes and the process
 * exits. Tracks the promise of `app.fetch`: it settles when the handler has answered or
 * failed; a streamed response body (SSE, downloads) is not waited for.
 */
export class InFlightRequests {
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly clock: Clock = systemClock) {}

  /** Wraps a fetch handler so every call is tracked until it settles. */
  wrap<A extends unknown[], R>(fetch: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
    return (...args: A) => {
      const p = Promise.resolve().then(() => fetch(...args));
      const tracked = p.then(
        () => undefined,
        () => undefined,
      );
      this.running.add(tracked);
      void tracked.finally(() => this.running.delete(tracked));
      return p;
    };
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves when every tracked handler has settled, or after `limitMs` (true if all settled). */
  async settled(limitMs: number): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const limit = new Promise<false>((resolve) => (timer = this.clock.setTimeout(() => resolve(false), limitMs)));
    try {
      while (this.running.size > 0) {
        const all = Promise.allSettled([...this.running]).then(() => true as const);
        if (!(await Promise.race([all, limit]))) return false;
      }
      return true;
    } finally {
      this.clock.clearTimeout(timer);
    }
  }
}
