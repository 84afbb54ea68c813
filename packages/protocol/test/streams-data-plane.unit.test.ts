/**
 * The data plane's stream mechanics: a file sent from pooled frame buffers (one buffer per
 * data frame, reused once written), frames gathered into one write while a write runs,
 * and the adaptive window (measured round trip and rate, under a per-link cap).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodeFrame,
  MAX_WRITE_BATCH_BYTES,
  openFileReader,
  SENDER_FRAME_POOL,
  STREAM_CHUNK_BYTES,
  STREAM_WINDOW_BYTES,
  StreamReceiver,
  StreamSender,
  WindowBudget,
  WindowTuner,
  type ByteSink,
  type ChunkReader,
  type LinkOutput,
} from '../src/index.ts';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A ChunkReader over a buffer, counting reads. */
function bufferReader(data: Buffer): ChunkReader & { closed: boolean } {
  let at = 0;
  const r = {
    closed: false,
    read: async (into: Buffer, offset: number, length: number) => {
      const n = Math.min(length, data.length - at);
      data.copy(into, offset, at, at + n);
      at += n;
      return n;
    },
    close: async () => void (r.closed = true),
  };
  return r;
}

/**
 * Sender and receiver joined by a fake link: each direction delayed by `oneWayMs`; the
 * "socket" copies a frame (as a real one does on the wire) and reports it written after
 * `writeMs`, which is when the sender may reuse the buffer.
 */
function delayedLink(opts: { oneWayMs: number; writeMs?: number; window?: number; budget?: WindowBudget; sink: ByteSink; streamId?: number }) {
  const id = opts.streamId ?? 3;
  let receiver!: StreamReceiver;
  let sender!: StreamSender;
  const frameBuffers = new Set<ArrayBufferLike>();
  let fragmented = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let maxWindow = 0;
  const credits: number[] = [];
  const toReceiver: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.end') setTimeout(() => receiver.end(m.size as number), opts.oneWayMs);
    },
    sendFrame: async (frame, payload, onSent) => {
      if (payload) fragmented++;
      frameBuffers.add(frame.buffer);
      const copy = Buffer.from(payload ? Buffer.concat([frame, payload]) : frame);
      setTimeout(() => onSent?.(undefined), opts.writeMs ?? 0);
      const f = decodeFrame(copy);
      if (!f.ok) throw new Error(f.error);
      inFlight += f.payload.byteLength;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight -= f.payload.byteLength;
        receiver.push(f.payload);
        maxWindow = Math.max(maxWindow, receiver.window);
      }, opts.oneWayMs);
    },
  };
  const toSender: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.credit') {
        credits.push(m.bytes as number);
        setTimeout(() => sender.addCredit(m.bytes as number), opts.oneWayMs);
      }
      if (m.type === 'stream.abort') setTimeout(() => sender.fail(m.error as { code: string; message: string }), opts.oneWayMs);
    },
    sendFrame: async () => {},
  };
  receiver = new StreamReceiver(toSender, id, opts.sink, {
    ...(opts.window !== undefined ? { window: opts.window } : {}),
    ...(opts.budget ? { budget: opts.budget } : {}),
  });
  sender = new StreamSender(toReceiver, id, receiver.window);
  return {
    sender,
    receiver,
    credits,
    stats: () => ({ frameBuffers: frameBuffers.size, fragmented, maxInFlight, maxWindow }),
  };
}

/** A sink that keeps what it gets, writes take `writeMs`, with or without writev. */
function recordingSink(opts: { writeMs?: number; writev?: boolean } = {}) {
  const chunks: Buffer[] = [];
  const batches: number[] = [];
  const sink: ByteSink & { data(): Buffer; batches: number[] } = {
    batches,
    write: async (c) => {
      await sleep(opts.writeMs ?? 0);
      chunks.push(Buffer.from(c));
      batches.push(c.byteLength);
    },
    ...(opts.writev === false
      ? {}
      : {
          writev: async (cs: Buffer[]) => {
            await sleep(opts.writeMs ?? 0);
            for (const c of cs) chunks.push(Buffer.from(c));
            batches.push(cs.reduce((n, c) => n + c.byteLength, 0));
          },
        }),
    finish: async () => {},
    destroy: () => {},
    data: () => Buffer.concat(chunks),
  };
  return sink;
}

describe('pooled frame buffers (StreamSender.pumpReader)', () => {
  it('sends a file as whole frames from at most SENDER_FRAME_POOL buffers, every byte in order', async () => {
    const data = randomBytes(13 * MiB + 777);
    const sink = recordingSink();
    const { sender, receiver, stats } = delayedLink({ oneWayMs: 0, writeMs: 2, window: 4 * MiB, sink });
    const reader = bufferReader(data);
    let read = 0;
    const sent = await sender.pumpReader(reader, data.length, (n) => (read += n));
    expect(await receiver.done).toEqual({ bytes: data.length, size: data.length, wireBytes: data.length });
    expect(sent).toBe(data.length);
    expect(read).toBe(data.length);
    expect(sink.data().equals(data)).toBe(true);
    const s = stats();
    // One buffer per frame, never header and payload as fragments, and the buffers are reused.
    expect(s.fragmented).toBe(0);
    expect(s.frameBuffers).toBeGreaterThan(0);
    expect(s.frameBuffers).toBeLessThanOrEqual(SENDER_FRAME_POOL);
    expect(s.maxInFlight).toBeLessThanOrEqual(4 * MiB);
  });

  it('reads a real file from an offset (openFileReader)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-reader-'));
    try {
      const data = randomBytes(3 * STREAM_CHUNK_BYTES + 5);
      const file = path.join(dir, 'f');
      await fs.writeFile(file, data);
      const sink = recordingSink();
      const { sender, receiver } = delayedLink({ oneWayMs: 0, window: 1 * MiB, sink });
      const reader = await openFileReader(file, 1000);
      await sender.pumpReader(reader, data.length);
      await reader.close();
      expect((await receiver.done).bytes).toBe(data.length - 1000);
      expect(sink.data().equals(data.subarray(1000))).toBe(true);
      await expect(openFileReader(path.join(dir, 'missing'), 0)).rejects.toThrow(/ENOENT/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('stops reading when the receiver gives up', async () => {
    const sink = recordingSink({ writeMs: 1 });
    const { sender, receiver } = delayedLink({ oneWayMs: 1, window: 1 * MiB, sink });
    const pumping = sender.pumpReader(bufferReader(Buffer.alloc(64 * MiB)), 64 * MiB);
    setTimeout(() => receiver.fail({ code: 'cancelled', message: 'no longer needed' }, true), 10);
    await expect(pumping).rejects.toThrow('no longer needed');
  });
});

describe('write batching (StreamReceiver)', () => {
  it('writes the frames that arrived during a write as one writev of at most MAX_WRITE_BATCH_BYTES', async () => {
    const data = randomBytes(24 * MiB);
    const sink = recordingSink({ writeMs: 15 });
    const { sender, receiver } = delayedLink({ oneWayMs: 0, window: 8 * MiB, sink });
    await sender.pumpReader(bufferReader(data), data.length);
    await receiver.done;
    expect(sink.data().equals(data)).toBe(true);
    expect(Math.max(...sink.batches)).toBeGreaterThan(STREAM_CHUNK_BYTES);
    expect(Math.max(...sink.batches)).toBeLessThanOrEqual(MAX_WRITE_BATCH_BYTES);
    // Fewer writes than frames.
    expect(sink.batches.length).toBeLessThan(data.length / STREAM_CHUNK_BYTES);
  });

  it('writes one chunk at a time into a sink without writev, in order', async () => {
    const data = randomBytes(6 * MiB + 3);
    const sink = recordingSink({ writeMs: 5, writev: false });
    const { sender, receiver } = delayedLink({ oneWayMs: 0, window: 4 * MiB, sink });
    await sender.pumpReader(bufferReader(data), data.length);
    await receiver.done;
    expect(sink.data().equals(data)).toBe(true);
    expect(Math.max(...sink.batches)).toBeLessThanOrEqual(STREAM_CHUNK_BYTES);
  });
});

describe('adaptive window', () => {
  it('WindowTuner: the round trip from grants to the bytes they unlocked, the target 2 × rate × rtt', () => {
    let now = 0;
    const tuner = new WindowTuner(() => now);
    expect(tuner.target()).toBe(0);
    tuner.arrived(1 * MiB); // the first rate mark
    tuner.granted(4 * MiB); // the sender may send past 4 MiB only once this grant reached it
    now = 50;
    tuner.arrived(4 * MiB); // not past the limit: no round-trip sample; 3 MiB in 50 ms
    expect(tuner.rttMs).toBeUndefined();
    expect(tuner.rate).toBe((3 * MiB) / 0.05);
    now = 100;
    tuner.arrived(4 * MiB + 1);
    expect(tuner.rttMs).toBe(100);
    now = 300;
    tuner.arrived(9 * MiB); // a slower interval (5 MiB in 250 ms): the rate is the best recent one
    expect(tuner.rate).toBe((3 * MiB) / 0.05);
    expect(tuner.target()).toBeCloseTo(2 * ((3 * MiB) / 0.05) * 0.1, 0);
  });

  it('WindowBudget: growth stops at the cap; a stream always holds its starting window', () => {
    const b = new WindowBudget(10 * MiB);
    b.hold(4 * MiB);
    b.hold(4 * MiB);
    expect(b.grow(5 * MiB)).toBe(2 * MiB);
    expect(b.grow(1)).toBe(0);
    b.hold(4 * MiB);
    expect(b.inUse).toBe(14 * MiB);
    b.release(4 * MiB + 2 * MiB);
    expect(b.grow(5 * MiB)).toBe(2 * MiB);
    b.release(4 * MiB);
    expect(b.grow(5 * MiB)).toBe(4 * MiB);
    expect(b.inUse).toBe(10 * MiB);
  });

  it('grows past the starting window on a long round trip, never past the cap, and never has more than its window in flight', async () => {
    const data = randomBytes(48 * MiB);
    const sink = recordingSink();
    const budget = new WindowBudget(12 * MiB);
    const { sender, receiver, stats, credits } = delayedLink({ oneWayMs: 40, sink, budget });
    await sender.pumpReader(bufferReader(data), data.length);
    await receiver.done;
    expect(sink.data().equals(data)).toBe(true);
    const s = stats();
    expect(s.maxWindow).toBeGreaterThan(STREAM_WINDOW_BYTES);
    expect(s.maxWindow).toBeLessThanOrEqual(12 * MiB);
    expect(s.maxInFlight).toBeLessThanOrEqual(s.maxWindow);
    // Grants of about an eighth of the window, not one per frame.
    expect(credits.length).toBeLessThan((data.length / STREAM_CHUNK_BYTES) * 1.5);
    expect(receiver.measured?.rttMs).toBeGreaterThanOrEqual(79);
    // The stream gave its window back when it ended.
    expect(budget.inUse).toBe(0);
  });

  it('starts the next stream of a link at the window the last one reached, within what is left of the cap', async () => {
    const budget = new WindowBudget(12 * MiB);
    expect(budget.startingWindow()).toBe(STREAM_WINDOW_BYTES);
    const data = randomBytes(48 * MiB);
    const first = delayedLink({ oneWayMs: 40, sink: recordingSink(), budget });
    await first.sender.pumpReader(bufferReader(data), data.length);
    await first.receiver.done;
    const reached = first.receiver.window;
    expect(reached).toBeGreaterThan(STREAM_WINDOW_BYTES);
    expect(budget.startingWindow()).toBe(reached);
    // The second stream's first credit (its pull) is that window already.
    const second = delayedLink({ oneWayMs: 40, sink: recordingSink(), budget });
    expect(second.receiver.window).toBe(reached);
    // Another stream alongside gets what is left, never less than the usual start.
    expect(budget.startingWindow()).toBe(Math.max(STREAM_WINDOW_BYTES, 12 * MiB - reached));
    const small = randomBytes(1 * MiB);
    await second.sender.pumpReader(bufferReader(small), small.length);
    await second.receiver.done;
    expect(budget.inUse).toBe(0);
  });

  it('WindowBudget with a parent: growth comes from what is left in both; starting windows take none of the parent', () => {
    const shared = new WindowBudget(6 * MiB);
    const a = new WindowBudget(32 * MiB, shared);
    const b = new WindowBudget(32 * MiB, shared);
    a.hold(STREAM_WINDOW_BYTES);
    b.hold(STREAM_WINDOW_BYTES);
    expect(shared.inUse).toBe(0);
    expect(a.grow(10 * MiB)).toBe(6 * MiB);
    expect(b.grow(1)).toBe(0);
    // Another stream still starts with the usual window.
    expect(b.startingWindow()).toBe(STREAM_WINDOW_BYTES);
    b.hold(STREAM_WINDOW_BYTES);
    expect(shared.inUse).toBe(6 * MiB);
    a.release(STREAM_WINDOW_BYTES + 6 * MiB);
    expect(shared.inUse).toBe(0);
    // A link's learned window is cut to the usual start plus what the parent has left, and its excess counts.
    a.learn(20 * MiB);
    expect(a.startingWindow()).toBe(STREAM_WINDOW_BYTES + 6 * MiB);
    a.hold(a.startingWindow());
    expect(shared.inUse).toBe(6 * MiB);
    expect(b.grow(MiB)).toBe(0);
    a.release(STREAM_WINDOW_BYTES + 6 * MiB);
    b.release(2 * STREAM_WINDOW_BYTES);
    expect(shared.inUse).toBe(0);
  });

  it('two long-link streams of different links share the parent budget: neither grows past what is left of it', async () => {
    const shared = new WindowBudget(12 * MiB);
    const data = randomBytes(48 * MiB);
    const links = [0, 1].map((i) => delayedLink({ oneWayMs: 40, sink: recordingSink(), budget: new WindowBudget(32 * MiB, shared), streamId: 3 + i }));
    let maxShared = 0;
    const watch = setInterval(() => (maxShared = Math.max(maxShared, shared.inUse)), 5);
    try {
      await Promise.all(
        links.map(async (l) => {
          await l.sender.pumpReader(bufferReader(data), data.length);
          await l.receiver.done;
        }),
      );
    } finally {
      clearInterval(watch);
    }
    // Without the shared budget these two grew by ~43 MiB together (measured); with it, their
    // growth stayed within its 12 MiB, and they grew into it.
    expect(maxShared).toBeLessThanOrEqual(12 * MiB);
    expect(maxShared).toBeGreaterThan(STREAM_WINDOW_BYTES);
    expect(Math.max(...links.map((l) => l.stats().maxWindow))).toBeGreaterThan(STREAM_WINDOW_BYTES);
    for (const l of links) expect(l.stats().maxInFlight).toBeLessThanOrEqual(l.stats().maxWindow);
    expect(shared.inUse).toBe(0);
  });

  it('a fixed window stays fixed', async () => {
    const data = randomBytes(8 * MiB);
    const sink = recordingSink();
    const { sender, receiver, stats, credits } = delayedLink({ oneWayMs: 20, sink, window: 2 * MiB });
    await sender.pumpReader(bufferReader(data), data.length);
    await receiver.done;
    expect(stats().maxWindow).toBe(2 * MiB);
    expect(credits.every((c) => c <= 2 * MiB)).toBe(true);
    expect(receiver.measured).toBeUndefined();
  });
});
