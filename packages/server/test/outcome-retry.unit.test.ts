import { ManualClock } from '@mm/protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { OUTCOME_MAX_TRIES, settleOutcomeWithRetries, type OutcomeSettling } from '../src/operations/outcome-retry.ts';

/**
 * An agent's outcome that fails to settle (issue 46): before, only an unreachable database was
 * tried again, so an attach that failed for any other reason left the operation running and
 * the board busy until the agent happened to reconnect. Now it is tried again whole, and
 * failed visibly when it keeps failing; never left running while the link is open.
 */
const log = pino({ level: 'silent' });
const dbDown = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const missing = () => new Error('content 00ff is missing from the store');

function settling(clock: ManualClock, fails: Array<() => Error>, opts: { linked?: () => boolean } = {}) {
  const calls = { settle: 0, giveUp: [] as unknown[] };
  const s: OutcomeSettling = {
    opId: 7,
    settle: async () => {
      const fail = fails[calls.settle++];
      if (fail) throw fail();
    },
    linked: opts.linked ?? (() => true),
    giveUp: async (err) => {
      calls.giveUp.push(err);
    },
    clock,
    log,
  };
  return { calls, done: settleOutcomeWithRetries(s) };
}

/** Lets the retry loop reach its next wait, then moves time past it. */
async function tick(clock: ManualClock, times: number): Promise<void> {
  for (let i = 0; i < times; i++) await clock.advanceAsync(10_000);
}

describe('settling an outcome', () => {
  it('tries again whole after a failure that is not the database (the output attached on the next try)', async () => {
    const clock = new ManualClock();
    const { calls, done } = settling(clock, [missing]);
    await tick(clock, 3);
    await done;
    expect(calls.settle).toBe(2);
    expect(calls.giveUp).toEqual([]);
  });

  it(`fails the operation visibly after ${OUTCOME_MAX_TRIES} failed tries, never leaving it running`, async () => {
    const clock = new ManualClock();
    const { calls, done } = settling(clock, Array.from({ length: 10 }, () => missing));
    await tick(clock, 6);
    await done;
    expect(calls.settle).toBe(OUTCOME_MAX_TRIES);
    expect(calls.giveUp).toHaveLength(1);
    expect(String(calls.giveUp[0])).toMatch(/missing from the store/);
  });

  it('keeps trying while the database is away, however many times (those tries do not count)', async () => {
    const clock = new ManualClock();
    const { calls, done } = settling(clock, [dbDown, dbDown, dbDown, dbDown, dbDown, missing, dbDown]);
    await tick(clock, 12);
    await done;
    expect(calls.settle).toBe(8);
    expect(calls.giveUp).toEqual([]);
  });

  it('leaves the outcome to the agent’s next report when the link has closed', async () => {
    const clock = new ManualClock();
    const { calls, done } = settling(clock, [missing], { linked: () => false });
    await expect(done).rejects.toThrow(/missing from the store/);
    expect(calls.settle).toBe(1);
    expect(calls.giveUp).toEqual([]);
  });
});
