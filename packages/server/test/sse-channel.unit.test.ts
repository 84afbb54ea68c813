import { ManualClock } from '@mm/protocol';
import { describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../src/events/event-bus.ts';
import { EventRing } from '../src/sse/event-ring.ts';
import { formatEvent, gapEvent } from '../src/sse/format.ts';
import { SseChannel, type SseChannelOptions } from '../src/sse/sse-channel.ts';

/**
 * The SSE channel both server streams use, on a manual clock: heartbeats, the backlog bound
 * with its grace period, Last-Event-ID from the ring. (The streams themselves are tested
 * end to end in operations.test.ts and device-script-relay.test.ts.)
 */
const KiB = 1024;

function channel(clock: ManualClock, opts: Partial<SseChannelOptions> = {}) {
  return new SseChannel({ clock, heartbeatMs: 15_000, ringSize: 4, retryMs: 2_000, maxBacklogBytes: 64 * KiB, graceMs: 2_000, ...opts });
}

/** Reads whatever the stream has queued right now, without waiting for more. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, bytes: number): Promise<string> {
  let text = '';
  let got = 0;
  while (got < bytes) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value.byteLength;
    text += Buffer.from(value).toString('utf8');
  }
  return text;
}

const event = (id: number, size = 10) => formatEvent({ id: String(id), data: 'x'.repeat(size) });

describe('SseChannel', () => {
  it('starts with retry:, then heartbeats an idle client every heartbeat period, and stops when it leaves', async () => {
    const clock = new ManualClock();
    const ch = channel(clock);
    const client = ch.attach();
    const reader = client.body.getReader();
    expect(await drain(reader, 1)).toBe('retry: 2000\n\n');
    clock.advance(14_000);
    ch.publish(event(1));
    expect(await drain(reader, 1)).toContain('id: 1\n');
    clock.advance(14_000); // 14 s since the last write: not idle long enough
    clock.advance(2_000);
    expect(await drain(reader, 1)).toBe(': heartbeat\n\n');
    await reader.cancel();
    expect(ch.clientCount).toBe(0);
    expect(clock.pending).toBe(0); // no heartbeat loop left behind
  });

  it('gives a client that falls behind a grace period: cut when it stays behind, kept when it catches up', async () => {
    const clock = new ManualClock();
    const ch = channel(clock);
    const stalled = ch.attach();
    const reading = ch.attach();
    const reader = reading.body.getReader();
    await drain(reader, 1);
    const big = event(1, 40 * KiB);
    ch.publish(big);
    ch.publish(event(2, 40 * KiB)); // 80 KiB unread: both behind (64 KiB allowed)
    expect(stalled.isOpen && reading.isOpen).toBe(true);
    clock.advance(1_000);
    await drain(reader, 80 * KiB); // the reading one catches up within the grace
    clock.advance(1_500);
    expect(stalled.isOpen).toBe(false);
    expect(reading.isOpen).toBe(true);
    expect(ch.clientCount).toBe(1);
  });

  it('cuts a client at once past the hard limit (twice the allowance), grace or not', () => {
    const clock = new ManualClock();
    const ch = channel(clock);
    const client = ch.attach();
    for (let i = 1; i <= 3; i++) ch.publish(event(i, 40 * KiB));
    expect(client.isOpen).toBe(true); // 120 KiB: behind, in its grace
    ch.publish(event(4, 40 * KiB));
    expect(client.isOpen).toBe(false);
  });

  it('resumes from Last-Event-ID with what the ring still holds; an id it no longer holds gets event: gap first', async () => {
    const clock = new ManualClock();
    const ch = channel(clock);
    for (let i = 1; i <= 6; i++) ch.publish(event(i), { lastId: String(i) });
    const resumed = ch.attach({ lastEventId: '4' });
    const text = await drain(resumed.body.getReader(), 1 + 2 * event(5).byteLength + 'retry: 2000\n\n'.length - 1);
    expect(text.match(/^id: \d+$/gm)).toEqual(['id: 5', 'id: 6']);
    expect(text).not.toContain('event: gap');
    // An id the ring no longer holds: a gap (events were lost), then everything it has (the last 4).
    const old = ch.attach({ lastEventId: '1' });
    const gap = gapEvent('1');
    const all = await drain(old.body.getReader(), 'retry: 2000\n\n'.length + gap.byteLength + 4 * event(3).byteLength);
    expect(all.startsWith(`retry: 2000\n\n${gap.toString()}`)).toBe(true);
    expect(all).toContain('event: gap\ndata: {"last_event_id":"1",');
    expect(all.match(/^id: \d+$/gm)).toEqual(['id: 3', 'id: 4', 'id: 5', 'id: 6']);
  });

  it('replays at most one allowance of missed events: the older ones are announced as a gap, not sent to be cut for', async () => {
    const clock = new ManualClock();
    const ch = channel(clock); // 64 KiB allowance, ring of 4
    for (let i = 1; i <= 4; i++) ch.publish(event(i, 30 * KiB), { lastId: String(i) });
    const resumed = ch.attach({ lastEventId: '1' }); // missed 2, 3, 4: 90 KiB
    const gap = gapEvent('1');
    const text = await drain(resumed.body.getReader(), 'retry: 2000\n\n'.length + gap.byteLength + 2 * event(3, 30 * KiB).byteLength);
    expect(text).toContain('event: gap\n');
    expect(text.match(/^id: \d+$/gm)).toEqual(['id: 3', 'id: 4']);
    expect(resumed.isOpen).toBe(true);
  });

  it('ends every client on close, and a client joining a closed channel at once', async () => {
    const clock = new ManualClock();
    const ch = channel(clock);
    const client = ch.attach();
    ch.close();
    expect(client.isOpen).toBe(false);
    const late = ch.attach();
    const reader = late.body.getReader();
    expect(await drain(reader, 1)).toBe('retry: 2000\n\n');
    expect((await reader.read()).done).toBe(true);
  });
});

describe('EventRing', () => {
  it('keeps the last `capacity` events in order', () => {
    const ring = new EventRing(3);
    for (let i = 1; i <= 5; i++) ring.push(String(i), Buffer.from(String(i)));
    expect(ring.size).toBe(3);
    expect(ring.since('nope')).toEqual({ frames: ['3', '4', '5'].map((t) => Buffer.from(t)), complete: false });
    expect(ring.since('4')).toEqual({ frames: [Buffer.from('5')], complete: true });
    expect(ring.since('5')).toEqual({ frames: [], complete: true });
  });
});

describe('InProcessEventBus', () => {
  it('delivers to the scope and to every-scope subscribers, survives a failing listener, and unsubscribes', () => {
    const failures: unknown[] = [];
    const bus = new InProcessEventBus((err) => failures.push(err));
    const seen: string[] = [];
    const off1 = bus.subscribe('board.status', 'b1', (m) => seen.push(`b1:${m.status}`));
    bus.subscribe('board.status', 'b1', () => {
      throw new Error('listener failed');
    });
    const offAll = bus.subscribe('board.status', undefined, (m) => seen.push(`all:${m.boardId}`));
    bus.publish('board.status', 'b1', { boardId: 'b1', status: 'online' });
    bus.publish('board.status', 'b2', { boardId: 'b2', status: 'offline' });
    expect(seen).toEqual(['b1:online', 'all:b1', 'all:b2']);
    expect(failures).toHaveLength(1);
    off1();
    offAll();
    expect(bus.listenerCount('board.status', 'b1')).toBe(1);
    expect(bus.listenerCount('board.status')).toBe(0);
  });
});
