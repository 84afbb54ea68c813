/**
 * Server timers on a ManualClock: the retention pruner's schedule and what "old" means to
 * it, and the shutdown's limit on waiting for requests still running.
 */
import { ManualClock } from '@mm/protocol';
import { describe, expect, it } from 'vitest';
import type { Db } from '../src/db/database.ts';
import { InFlightRequests } from '../src/http/in-flight.ts';
import { createLogger } from '../src/logger.ts';
import { PRUNE_INTERVAL_MS, RetentionPruner } from '../src/retention/retention-pruner.ts';

/** Lets the promise callbacks that fired timers started run to their end. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

describe('the retention pruner on the injected clock', () => {
  it('runs 30 s after start, then every PRUNE_INTERVAL_MS, with cutoffs from the clock; stop ends the schedule', async () => {
    const clock = new ManualClock();
    const cutoffs: number[] = [];
    const pruner = new RetentionPruner({
      // MM_RETENTION_DAYS=0: operations are kept, so no query reaches the database.
      db: undefined as unknown as Db,
      log: createLogger('silent'),
      retentionMs: 0,
      sweepContent: async () => 0,
      pruneTelemetry: async (cutoff) => {
        cutoffs.push(cutoff.getTime());
        return 0;
      },
      telemetryKeepMs: 86_400_000,
      clock,
    });
    const start = clock.now();
    pruner.start();
    clock.advance(29_999);
    await settle();
    expect(cutoffs).toEqual([]);
    clock.advance(1);
    await settle();
    expect(cutoffs).toEqual([start + 30_000 - 86_400_000]);
    clock.advance(PRUNE_INTERVAL_MS);
    await settle();
    expect(cutoffs).toEqual([start + 30_000 - 86_400_000, start + 30_000 + PRUNE_INTERVAL_MS - 86_400_000]);
    await pruner.stop();
    expect(clock.pending).toBe(0);
    clock.advance(10 * PRUNE_INTERVAL_MS);
    await settle();
    expect(cutoffs).toHaveLength(2);
  });
});

describe('requests in flight at shutdown', () => {
  it('waits for running handlers up to the limit on the clock', async () => {
    const clock = new ManualClock();
    const inFlight = new InFlightRequests(clock);
    let finish!: () => void;
    void inFlight.wrap(() => new Promise<void>((r) => (finish = r)))();
    let answer: boolean | undefined;
    void inFlight.settled(10_000).then((v) => (answer = v));
    await settle();
    clock.advance(9_999);
    await settle();
    expect(answer).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(answer).toBe(false);
    expect(inFlight.size).toBe(1);

    void inFlight.settled(10_000).then((v) => (answer = v));
    finish();
    await settle();
    expect(answer).toBe(true);
    // Settled in time: its limit's timer is gone.
    expect(clock.pending).toBe(0);
  });
});
