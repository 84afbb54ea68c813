/**
 * Timing logic of the agent on a manual clock (no sleeps): the reconnect loop's backoff
 * with jitter, the progress throttle and the log batching. The sockets are real (a fake
 * control plane on loopback); only time is the test's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, type AgentMessage } from '@mm/protocol';
import type { ServerLink } from '../src/link/server-link.ts';
import { OpReporter, PROGRESS_INTERVAL_MS } from '../src/operations/op-reporter.ts';
import { LogBatcher } from '../src/runner/log-batcher.ts';
import { startBareLink, waitUntil } from './support/agent-fixture.ts';
import { FakeControlPlane } from './support/fake-control-plane.ts';

let plane: FakeControlPlane;
let link: ServerLink | undefined;
beforeEach(async () => {
  plane = await FakeControlPlane.start('test-token');
});
afterEach(async () => {
  await link?.stop();
  link = undefined;
  await plane.close();
});

function linkOn(clock: ManualClock, random: () => number): ServerLink {
  const started = startBareLink(plane.url, { reconnectBaseMs: 1000, reconnectMaxDelayMs: 8000, clock, random });
  link = started;
  return started;
}

/** The loop is waiting out its backoff: the pause is the only timer left on the clock. */
const sleeping = (clock: ManualClock) => waitUntil(() => clock.pending === 1, 'the loop to wait out its backoff');

describe('reconnect backoff (manual clock)', () => {
  it('waits a jittered, doubling, capped delay between attempts, and starts over after a good session', async () => {
    const clock = new ManualClock();
    const l = linkOn(clock, () => 0.5);
    await (await plane.link(0)).waitFor('hello');
    await waitUntil(() => l.current, 'the link to be up');

    // A session that was up ends: the backoff starts over, half of the first ceiling (1 s).
    plane.token = 'revoked-for-now';
    plane.links[0]!.ws.terminate();
    for (const [delay, rejectedAfter] of [
      [500, 1],
      [1000, 2], // refused: the ceiling doubles
      [2000, 3],
      [4000, 4], // 0.5 × the 8 s cap
      [4000, 5],
    ] as const) {
      await sleeping(clock);
      clock.advance(delay - 1);
      expect(clock.pending).toBe(1);
      expect(plane.rejected).toBe(rejectedAfter - 1);
      clock.advance(1);
      await waitUntil(() => plane.rejected === rejectedAfter, `refused attempt ${rejectedAfter}`);
    }
    // Fixed, it connects at the next attempt.
    plane.token = 'test-token';
    await sleeping(clock);
    clock.advance(4000);
    await (await plane.link(1)).waitFor('hello');
    expect(plane.links).toHaveLength(2);
  });

  it('draws each delay from the random source (full jitter)', async () => {
    const clock = new ManualClock();
    const l = linkOn(clock, () => 0);
    await (await plane.link(0)).waitFor('hello');
    await waitUntil(() => l.current, 'the link to be up');
    plane.links[0]!.ws.terminate();
    // A draw of 0: a pause of 0 ms, due at once.
    await sleeping(clock);
    clock.advance(0);
    await (await plane.link(1)).waitFor('hello');
  });
});

describe('operation reports (manual clock)', () => {
  it('sends progress at most every 250 ms per phase, the latest value last, and a new phase at once', () => {
    const clock = new ManualClock();
    const sent: AgentMessage[] = [];
    const reporter = new OpReporter({ send: (m) => sent.push(m) > 0 }, 7, clock);
    const progress = () => sent.filter((m) => m.type === 'op.progress').map((m) => (m.type === 'op.progress' ? [m.progress.phase, m.progress.bytes_done] : []));
    reporter.progress('transfer', 1, 10);
    reporter.progress('transfer', 2, 10);
    reporter.progress('transfer', 3, 10);
    expect(progress()).toEqual([['transfer', 1]]);
    clock.advance(PROGRESS_INTERVAL_MS - 1);
    expect(progress()).toEqual([['transfer', 1]]);
    clock.advance(1);
    expect(progress()).toEqual([['transfer', 1], ['transfer', 3]]);
    reporter.progress('run', 0, 0);
    expect(progress()).toEqual([['transfer', 1], ['transfer', 3], ['run', 0]]);
    reporter.close();
    expect(clock.pending).toBe(0);
  });

  it('keeps log text while the link is down and sends it in order once it is back', () => {
    const clock = new ManualClock();
    let up = false;
    const sent: AgentMessage[] = [];
    const reporter = new OpReporter({ send: (m) => up && sent.push(m) > 0 }, 7, clock);
    reporter.log('stdout', 'one ');
    reporter.log('stderr', 'two ');
    expect(reporter.hasUnsent).toBe(true);
    up = true;
    reporter.flush();
    expect(sent.map((m) => (m.type === 'op.log' ? m.data : ''))).toEqual(['one ', 'two ']);
  });

  it('numbers log text by its offset and, after a reconnect, sends what was already sent again before what is new', () => {
    const clock = new ManualClock();
    let up = true;
    const sent: AgentMessage[] = [];
    const reporter = new OpReporter({ send: (m) => up && sent.push(m) > 0 }, 7, clock);
    const logs = () => sent.flatMap((m) => (m.type === 'op.log' ? [[m.offset, m.data]] : []));
    reporter.log('stdout', 'one\n');
    reporter.log('stderr', 'two\n');
    // These two may have died in flight with the link; this one waits for the next.
    up = false;
    reporter.log('stdout', 'three\n');
    up = true;
    sent.length = 0;
    reporter.resume();
    expect(logs()).toEqual([[0, 'one\n'], [4, 'two\n'], [8, 'three\n']]);
    // Acknowledged: nothing goes again.
    reporter.forgetSent();
    sent.length = 0;
    reporter.resume();
    expect(logs()).toEqual([]);
  });

  it('batches runner output for its flush interval per stream', () => {
    const clock = new ManualClock();
    const out: string[] = [];
    const batcher = new LogBatcher((stream, text) => out.push(`${stream}:${text}`), 100, clock);
    batcher.push('stdout', Buffer.from('a'));
    batcher.push('stdout', Buffer.from('b'));
    batcher.push('stderr', Buffer.from('c'));
    clock.advance(99);
    expect(out).toEqual([]);
    clock.advance(1);
    expect(out).toEqual(['stdout:ab', 'stderr:c']);
  });
});
