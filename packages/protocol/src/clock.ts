/**
 * Time as a dependency. Everything whose behaviour depends on timing (heartbeats,
 * backoff, deadlines, progress throttles, SSE grace periods) takes a `Clock`, so tests of
 * that logic advance a `ManualClock` instead of sleeping; production passes `systemClock`.
 */
export interface TimerHandle {
  /** Lets the process exit while this timer is pending (a no-op on the manual clock). */
  unref(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle | undefined): void;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout | undefined),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout | undefined),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface ManualTimer extends TimerHandle {
  id: number;
  at: number;
  every: number | undefined;
  fn: () => void;
  cleared: boolean;
}

/**
 * A clock that moves only when told (`advance`, `runAll`). Timers fire in due order, each
 * seeing `now()` at its due time; an interval re-arms itself.
 */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private timers: ManualTimer[] = [];

  /**
   * `jumps`: a long `advance` is a jump of the wall clock (as after a suspended machine), not
   * time lived through: an interval due several times on the way fires once and re-arms from
   * the jump's end, as Node's own timers do. Without it an hour's advance fires a 1 s interval
   * 3,600 times at once, which a test of a whole server (its heartbeats, sweeps and re-checks
   * on this clock, its sockets on the real one) cannot absorb.
   */
  constructor(
    start = Date.UTC(2026, 0, 1),
    private readonly opts: { jumps?: boolean } = {},
  ) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, undefined);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, Math.max(1, ms));
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) (handle as ManualTimer).cleared = true;
  }

  clearInterval(handle: TimerHandle | undefined): void {
    this.clearTimeout(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = this.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        this.clearTimeout(t);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Timers still waiting to fire. */
  get pending(): number {
    return this.timers.filter((t) => !t.cleared).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cleared);
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      if (due.every === undefined) due.cleared = true;
      else if (this.opts.jumps && due.at + due.every <= until) due.at = until + due.every;
      else due.at += due.every;
      due.fn();
    }
    this.current = until;
  }

  /** Like `advance`, then lets promise callbacks that the timers started run. */
  async advanceAsync(ms: number): Promise<void> {
    this.advance(ms);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }

  private add(fn: () => void, ms: number, every: number | undefined): TimerHandle {
    const timer: ManualTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), every, fn, cleared: false, unref: () => {} };
    this.timers.push(timer);
    return timer;
  }
}
