/**
 * Compressed file streams (docs/compression.md): the sender's per-frame decision, a
 * compressed stream through StreamSender/StreamReceiver (every byte in order, from an
 * uncompressed offset, credit counting wire bytes), frames that do not compress going raw,
 * and a receiver refusing compressed frames it did not ask for or that lie about their size.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compressChunk,
  CompressionDecider,
  decodeFrame,
  encodeCompressedFrame,
  FIELD_LINK_RTT_MS,
  measuredDecodeRate,
  QUALITY_DENSE,
  QUALITY_FAST,
  sampleCompression,
  StreamError,
  StreamReceiver,
  StreamSender,
  type ByteSink,
  type ChunkReader,
  type LinkOutput,
} from '../src/index.ts';
import { bitstreamLikeChunk, weightsLikeChunk } from '../../../test/support/field-data.ts';

const MiB = 1024 * 1024;
const bitstream = (bytes: number, seed = 1) => bitstreamLikeChunk(seed, Math.ceil(bytes / 372)).subarray(0, bytes);

function bufferReader(data: Buffer, start = 0): ChunkReader {
  let at = start;
  return {
    read: async (into, offset, length) => {
      const n = Math.min(length, data.length - at);
      data.copy(into, offset, at, at + n);
      at += n;
      return n;
    },
    readAt: async (into, offset, length, position) => data.copy(into, offset, position, Math.min(data.length, position + length)),
    close: async () => {},
  };
}

function memorySink(): ByteSink & { data(): Buffer } {
  const chunks: Buffer[] = [];
  return { write: async (c) => void chunks.push(Buffer.from(c)), writev: async (cs) => void chunks.push(...cs.map((c) => Buffer.from(c))), finish: async () => {}, destroy: () => {}, data: () => Buffer.concat(chunks) };
}

/**
 * A sender and a receiver joined in memory, each message a macrotask later; records the
 * most payload bytes in flight and the frame kinds the receiver got.
 */
function joined(opts: { acceptCompressed: boolean; window?: number }) {
  let receiver!: StreamReceiver;
  let sender!: StreamSender;
  const kinds = { compressed: 0, raw: 0 };
  let inFlight = 0;
  let maxInFlight = 0;
  const aborts: string[] = [];
  const toReceiver: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.end') setTimeout(() => receiver.end(m.size as number), 1);
    },
    sendFrame: async (frame, payload) => {
      const f = decodeFrame(Buffer.from(payload ? Buffer.concat([frame, payload]) : frame));
      if (!f.ok) throw new Error(f.error);
      if (f.rawLength === undefined) kinds.raw++;
      else kinds.compressed++;
      inFlight += f.payload.byteLength;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight -= f.payload.byteLength;
        receiver.push(f.payload, f.rawLength);
      }, 1);
    },
  };
  const toSender: LinkOutput = {
    sendMessage: (m) => {
      if (m.type === 'stream.credit') setTimeout(() => sender.addCredit(m.bytes as number), 1);
      if (m.type === 'stream.abort') {
        aborts.push((m.error as { code: string }).code);
        sender.fail(m.error as { code: string; message: string });
      }
    },
    sendFrame: async () => {},
  };
  const sink = memorySink();
  receiver = new StreamReceiver(toSender, 5, sink, { window: opts.window ?? 4 * MiB, acceptCompressed: opts.acceptCompressed });
  sender = new StreamSender(toReceiver, 5, receiver.window);
  return { sender, receiver, sink, kinds, aborts, maxInFlight: () => maxInFlight };
}

/** A decider for a field link: ~100 ms round trip, rate not yet measured. */
const fieldDecider = (hints: ConstructorParameters<typeof CompressionDecider>[0] = { decodeBps: 300e6 }) => new CompressionDecider(hints, () => undefined, () => 100);

describe('the sender’s decision (CompressionDecider)', () => {
  const observeMiB = (d: CompressionDecider, ratio: number, mbps: number) => d.observe(MiB, MiB / ratio, (MiB / (mbps * 1e6)) * 1000);

  it('probes an unknown file, then compresses what shrinks on a slow link and sends raw what does not', () => {
    const d = fieldDecider();
    expect(d.compressNext()).toBe(true);
    observeMiB(d, 40, 1000);
    expect(d.compressNext()).toBe(true);
    const video = fieldDecider();
    observeMiB(video, 1.02, 1500);
    const choices = Array.from({ length: 128 }, () => video.compressNext());
    // Raw, but probed again once every 64 frames (32 MiB) in case the file changes.
    expect(choices.filter(Boolean)).toHaveLength(2);
  });

  /** The decision on a measured link (MB/s) for a file of `ratio` compressing at `compressMBps`, decoded at `decodeMBps`. */
  const decides = (link: { mbps: number; rttMs: number }, file: { ratio: number; compressMBps: number }, decodeMBps: number) => {
    const d = new CompressionDecider({ decodeBps: decodeMBps * 1e6 }, () => link.mbps * 1e6, () => link.rttMs);
    observeMiB(d, file.ratio, file.compressMBps);
    return d.compressNext();
  };

  it('keeps a fast link raw: compressing pays only while the link, not the CPU, is the limit', () => {
    const bitstreamFile = { ratio: 46, compressMBps: 1300 };
    expect(decides({ mbps: 600, rttMs: 0.2 }, bitstreamFile, 470)).toBe(false);
    expect(decides({ mbps: 50, rttMs: 100 }, bitstreamFile, 470)).toBe(true);
    // Weights (1.25×) on a 50 MB/s link: 62 MB/s compressed beats 50 raw…
    expect(decides({ mbps: 50, rttMs: 100 }, { ratio: 1.25, compressMBps: 300 }, 300)).toBe(true);
    // …but not on a board that decodes only 80 MB/s (half of it goes to decoding).
    expect(decides({ mbps: 50, rttMs: 100 }, { ratio: 1.25, compressMBps: 300 }, 80)).toBe(false);
  });

  it('presumes a link from its round trip until it is measured, and takes the puller’s hint first', () => {
    const near = new CompressionDecider({}, () => undefined, () => FIELD_LINK_RTT_MS / 4);
    observeMiB(near, 40, 1000);
    expect(near.compressNext()).toBe(false);
    const far = new CompressionDecider({}, () => undefined, () => FIELD_LINK_RTT_MS * 5);
    observeMiB(far, 40, 1000);
    expect(far.compressNext()).toBe(true);
    const hinted = new CompressionDecider({ linkBps: 900e6, decodeBps: 400e6 }, () => undefined, () => FIELD_LINK_RTT_MS * 5);
    observeMiB(hinted, 40, 1000);
    expect(hinted.compressNext()).toBe(false);
  });

  it('MM_LINK_COMPRESSION=always compresses whatever shrinks even on a fast link, and still sends raw what does not', () => {
    const lan = (policy: 'auto' | 'always') => new CompressionDecider({ decodeBps: 470e6 }, () => 600e6, () => 0.2, policy);
    const auto = lan('auto');
    observeMiB(auto, 46, 1300);
    expect(auto.compressNext()).toBe(false);
    const always = lan('always');
    observeMiB(always, 46, 1300);
    expect(always.compressNext()).toBe(true);
    // However slow the sender's compressor looks (a starved CPU), a metered link still gets fewer bytes.
    const starved = lan('always');
    observeMiB(starved, 46, 1);
    expect(starved.compressNext()).toBe(true);
    const video = lan('always');
    observeMiB(video, 1.01, 1500);
    expect(video.compressNext()).toBe(false);
  });

  /** A decider that has measured both qualities: ratios, per-call compression rates (MB/s), how fast each decodes vs the calibration. */
  const twoQualities = (link: { mbps: number; rttMs: number }, decodeMBps: number, fast: [number, number, number], dense: [number, number, number]) => {
    const d = new CompressionDecider({ decodeBps: decodeMBps * 1e6 }, () => link.mbps * 1e6, () => link.rttMs);
    d.observe(MiB, MiB / fast[0], (MiB / (fast[1] * 1e6)) * 1000, QUALITY_FAST);
    d.observe(MiB, MiB / dense[0], (MiB / (dense[1] * 1e6)) * 1000, QUALITY_DENSE);
    d.observeDecode(QUALITY_FAST, fast[2]);
    d.observeDecode(QUALITY_DENSE, dense[2]);
    return d;
  };

  it('compresses harder when the board’s decoder sets the pace and the denser frames decode faster', () => {
    // Bitstream-like figures of this machine (bench/codec-choice.ts): quality 5 is ~15 % smaller
    // and decodes ~1.5× faster, but compresses ~4× slower. A Cortex-A53-like board: 50 MB/s.
    const bitstreamFast: [number, number, number] = [65, 800, 2.2];
    const bitstreamDense: [number, number, number] = [76, 300, 3.2];
    expect(twoQualities({ mbps: 10, rttMs: 300 }, 50, bitstreamFast, bitstreamDense).next()).toBe(QUALITY_DENSE);
    expect(twoQualities({ mbps: 50, rttMs: 100 }, 50, bitstreamFast, bitstreamDense).next()).toBe(QUALITY_DENSE);
    // A sender whose quality-5 compressor is slower than what the board decodes keeps quality 1.
    expect(twoQualities({ mbps: 50, rttMs: 100 }, 500, bitstreamFast, [76, 20, 3.2]).next()).toBe(QUALITY_FAST);
    // Weights: no smaller and no faster to decode at quality 5: quality 1 (cheaper), on a slow link.
    expect(twoQualities({ mbps: 10, rttMs: 300 }, 50, [1.25, 280, 1], [1.26, 120, 1]).next()).toBe(QUALITY_FAST);
    // A LAN stays raw whatever quality 5 would do.
    expect(twoQualities({ mbps: 600, rttMs: 0.2 }, 470, bitstreamFast, bitstreamDense).next()).toBeUndefined();
  });

  it('never picks a quality it has not measured (a source without readAt is judged at quality 1)', () => {
    const d = new CompressionDecider({ decodeBps: 50e6 }, () => 10e6, () => 300);
    observeMiB(d, 60, 800);
    expect(d.next()).toBe(QUALITY_FAST);
  });

  it('samples a file at both qualities, and an incompressible one at quality 1 only', async () => {
    const data = bitstream(4 * MiB, 5);
    const d = fieldDecider({ decodeBps: 50e6 });
    await sampleCompression(bufferReader(data), 0, data.length, d);
    const seen = d.describe();
    expect(seen.ratio).toBeGreaterThan(20);
    expect(seen.dense_ratio).toBeGreaterThan(seen.ratio!);
    // Both decode faster than the weights-like calibration sample; quality 5 faster still.
    expect(seen.dense_decode_factor).toBeGreaterThan(1);
    expect(seen.dense_compress_mbps).toBeGreaterThan(0);
    const random = fieldDecider();
    const noise = randomBytes(2 * MiB);
    await sampleCompression(bufferReader(noise), 0, noise.length, random);
    expect(random.describe().ratio).toBeLessThan(1.1);
    expect(random.describe().dense_ratio).toBeUndefined();
    expect(random.next()).toBeUndefined();
    // Weights (1.25×) are not worth quality 5's CPU: sampled at quality 1 only.
    const weights = fieldDecider();
    const tensor = weightsLikeChunk(2, 2 * MiB);
    await sampleCompression(bufferReader(tensor), 0, tensor.length, weights);
    expect(weights.describe().ratio).toBeGreaterThan(1.1);
    expect(weights.describe().dense_ratio).toBeUndefined();
  });

  it('measures this machine’s decode rate once', () => {
    const rate = measuredDecodeRate();
    expect(rate).toBeGreaterThan(1e6);
    expect(measuredDecodeRate()).toBe(rate);
  });
});

/** A 2 MB/s field link to a board decoding only 4 MB/s: the decoder sets the pace, so quality 5 pays (even on a loaded test machine). */
const slowBoardDecider = () => new CompressionDecider({ decodeBps: 4e6 }, () => 2e6, () => 300);

describe('a compressed stream', () => {
  it('delivers every byte from an uncompressed offset, far fewer on the wire, never past the credit', async () => {
    const data = Buffer.concat([bitstream(6 * MiB, 2), randomBytes(MiB), bitstream(MiB + 4321, 3)]);
    const offset = MiB + 123;
    const link = joined({ acceptCompressed: true, window: 2 * MiB });
    const decider = fieldDecider();
    const sent = await link.sender.pumpReader(bufferReader(data, offset), data.length, undefined, decider);
    const done = await link.receiver.done;
    expect(sent).toBe(data.length - offset);
    expect(done.bytes).toBe(data.length - offset);
    expect(done.size).toBe(data.length);
    expect(link.sink.data().equals(data.subarray(offset))).toBe(true);
    // The random MiB went raw, the bitstream compressed.
    expect(link.kinds.raw).toBeGreaterThanOrEqual(1);
    expect(link.kinds.compressed).toBeGreaterThan(10);
    expect(done.wireBytes).toBe(link.sender.wireBytes);
    expect(done.wireBytes).toBeLessThan(MiB + (data.length - offset - MiB) / 10);
    expect(link.maxInFlight()).toBeLessThanOrEqual(2 * MiB);
    expect(link.aborts).toEqual([]);
  });

  it('delivers a stream compressed at quality 5 (the decoder is the same), decompressing ahead of its writes', async () => {
    const data = bitstream(12 * MiB + 77, 4);
    const link = joined({ acceptCompressed: true, window: 2 * MiB });
    const decider = slowBoardDecider();
    await sampleCompression(bufferReader(data), 0, data.length, decider);
    // Decode speeds as measured on a quiet machine (the sample's own timing is noisy under load).
    decider.observeDecode(QUALITY_FAST, 2.2);
    decider.observeDecode(QUALITY_DENSE, 3.2);
    const done = (await Promise.all([link.sender.pumpReader(bufferReader(data), data.length, undefined, decider), link.receiver.done]))[1];
    expect(link.sink.data().equals(data)).toBe(true);
    expect(decider.counts.denseFrames).toBeGreaterThan(10);
    expect(done.wireBytes).toBeLessThan(data.length / 20);
    expect(link.aborts).toEqual([]);
  });

  it('sends raw to a pull that did not offer compression (no decider), as before', async () => {
    const data = bitstream(3 * MiB);
    const link = joined({ acceptCompressed: false });
    await link.sender.pumpReader(bufferReader(data), data.length);
    const done = await link.receiver.done;
    expect(link.kinds.compressed).toBe(0);
    expect(done).toEqual({ bytes: data.length, size: data.length, wireBytes: data.length });
  });

  it('fails a compressed frame on a stream that did not offer compression', async () => {
    // More than the window: the sender waits for credit that never comes, and hears the abort.
    const link = joined({ acceptCompressed: false });
    const pumped = link.sender.pumpReader(bufferReader(bitstream(64 * MiB)), 64 * MiB, undefined, fieldDecider());
    await expect(link.receiver.done).rejects.toMatchObject({ info: { code: 'malformed_frame' } });
    await expect(pumped).rejects.toBeInstanceOf(StreamError);
    expect(link.aborts).toEqual(['malformed_frame']);
  });

  it('fails a compressed frame whose bytes are not what its header says', async () => {
    const sink = memorySink();
    const aborts: string[] = [];
    const receiver = new StreamReceiver({ sendMessage: (m) => m.type === 'stream.abort' && aborts.push((m.error as { code: string }).code), sendFrame: async () => {} }, 9, sink, {
      window: 4 * MiB,
      acceptCompressed: true,
    });
    const chunk = weightsLikeChunk(1, 64 * 1024);
    const frame = decodeFrame(encodeCompressedFrame(9, chunk.length + 1, await compressChunk(chunk)));
    if (!frame.ok) throw new Error(frame.error);
    receiver.push(frame.payload, frame.rawLength);
    await expect(receiver.done).rejects.toMatchObject({ info: { code: 'malformed_frame' } });
    expect(aborts).toEqual(['malformed_frame']);
  });
});
