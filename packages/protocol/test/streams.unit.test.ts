import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeFrame, type LinkOutput, StreamReceiver, StreamSender, type ByteSink } from '../src/index.ts';

/** Two stream ends joined back to back, as over a socket, counting what is in flight. */
function loopback(window: number, sinkDelayMs = 0) {
  const chunks: Buffer[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let receiver!: StreamReceiver;
  let sender!: StreamSender;
  const toReceiver: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.end') queueMicrotask(() => receiver.end(m.size as number));
    },
    sendFrame: async (frame, payload) => {
      const f = decodeFrame(payload ? Buffer.concat([frame, payload]) : frame);
      if (!f.ok) throw new Error(f.error);
      inFlight += f.payload.byteLength;
      maxInFlight = Math.max(maxInFlight, inFlight);
      receiver.push(f.payload);
    },
  };
  const toSender: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.credit') sender.addCredit(m.bytes as number);
      if (m.type === 'stream.abort') sender.fail(m.error as { code: string; message: string });
    },
    sendFrame: async () => {},
  };
  const sink: ByteSink = {
    write: async (c) => {
      if (sinkDelayMs) await new Promise((r) => setTimeout(r, sinkDelayMs));
      chunks.push(Buffer.from(c));
      inFlight -= c.byteLength;
    },
    finish: async () => {},
    destroy: () => {},
  };
  receiver = new StreamReceiver(toSender, 7, sink, { window });
  sender = new StreamSender(toReceiver, 7, window);
  return { sender, receiver, chunks, maxInFlight: () => maxInFlight };
}

async function* bytes(total: number, chunk: number) {
  for (let at = 0; at < total; at += chunk) yield Buffer.alloc(Math.min(chunk, total - at), at % 251);
}

describe('stream flow control', () => {
  it('delivers every byte in order and never exceeds the window in flight', async () => {
    const window = 1024 * 1024;
    const { sender, receiver, chunks, maxInFlight } = loopback(window, 1);
    const total = 9 * 1024 * 1024 + 123;
    const sent = await sender.pump(bytes(total, 3 * 1024 * 1024), total);
    const done = await receiver.done;
    expect(sent).toBe(total);
    expect(done).toEqual({ bytes: total, size: total, wireBytes: total });
    expect(Buffer.concat(chunks).length).toBe(total);
    expect(maxInFlight()).toBeLessThanOrEqual(window);
  });

  it('sends in pieces no larger than a credit smaller than one chunk', async () => {
    const window = 100_000;
    const { sender, receiver, chunks, maxInFlight } = loopback(window);
    const total = 3 * 1024 * 1024;
    await sender.pump(bytes(total, 1024 * 1024), total);
    expect((await receiver.done).bytes).toBe(total);
    expect(Buffer.concat(chunks).length).toBe(total);
    expect(maxInFlight()).toBeLessThanOrEqual(window);
  });

  it('rejects a sender that exceeds its credit', async () => {
    const { receiver } = loopback(1024);
    receiver.push(Buffer.alloc(2048));
    await expect(receiver.done).rejects.toThrow(/exceeded its credit/);
  });

  it('stops the sender when the receiver gives up', async () => {
    const { sender, receiver } = loopback(512 * 1024, 1);
    const pumping = sender.pump(bytes(64 * 1024 * 1024, 1024 * 1024), 64 * 1024 * 1024);
    setTimeout(() => receiver.fail({ code: 'cancelled', message: 'no longer needed' }, true), 5);
    await expect(pumping).rejects.toThrow('no longer needed');
  });

  it('passes a real Writable through writableSink', async () => {
    const { writableSink } = await import('../src/index.ts');
    const out = new PassThrough();
    const collected: Buffer[] = [];
    out.on('data', (c: Buffer) => collected.push(c));
    const sink = writableSink(out);
    await sink.write(Buffer.from('abc'));
    await sink.finish();
    expect(Buffer.concat(collected).toString()).toBe('abc');
  });
});
