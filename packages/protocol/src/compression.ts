import os from 'node:os';
import zlib from 'node:zlib';
import { STREAM_CHUNK_BYTES } from './limits.ts';

/**
 * Compression of file streams on the link (docs/compression.md): each data frame is
 * compressed on its own (brotli, quality 1, a 512 KiB window: one frame), so a stream
 * restarts at any uncompressed offset, a frame that does not shrink goes raw, and the
 * receiver never holds more than one frame's decompressed bytes per frame it holds.
 *
 * The codec was chosen by measurement (bench/codec-choice.ts): brotli at quality 1
 * compresses bitstreams 46–64× at 1.3 GB/s per core here, int8 weights 1.25× at 300 MB/s,
 * and gives up on incompressible bytes (video) at 1.5 GB/s; deflate level 1 compresses
 * weights at only 50 MB/s and random bytes at 55 MB/s.
 */
export const LINK_CODEC = 'br';

/**
 * The two brotli qualities a sender picks from, per frame (bench/codec-choice.ts,
 * docs/compression.md): quality 1 compresses fastest; quality 5 compresses a bitstream
 * ~15 % smaller and, what matters more on a slow board, its frames decode ~1.5× faster (fewer,
 * longer copies), for ~2.5× the sender's CPU. Both decode with the same decoder: the
 * receiver never knows which one was used.
 */
export const QUALITY_FAST = 1;
export const QUALITY_DENSE = 5;
export type LinkQuality = typeof QUALITY_FAST | typeof QUALITY_DENSE;

const BROTLI_PARAMS = {
  // One frame's window: the decoder on the board needs no more than 512 KiB of history.
  [zlib.constants.BROTLI_PARAM_LGWIN]: 19,
  [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_GENERIC,
} as const;

/** Compresses one frame's bytes (on the thread pool: the event loop goes on meanwhile). */
export function compressChunk(chunk: Uint8Array, quality: LinkQuality = QUALITY_FAST): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const params = { ...BROTLI_PARAMS, [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: chunk.byteLength };
    zlib.brotliCompress(chunk, { params }, (err, out) => (err ? reject(err) : resolve(out)));
  });
}

export class DecompressError extends Error {
  override name = 'DecompressError';
}

/** Decompresses one frame, which must come out at exactly `rawLength` bytes (≤ one chunk). */
export function decompressChunk(payload: Uint8Array, rawLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (rawLength > STREAM_CHUNK_BYTES) {
      reject(new DecompressError(`a compressed frame claims ${rawLength} bytes, more than a chunk`));
      return;
    }
    zlib.brotliDecompress(payload, { maxOutputLength: Math.max(1, rawLength), chunkSize: Math.max(64, rawLength) }, (err, out) => {
      if (err) reject(new DecompressError(`a compressed frame does not decompress: ${err.message}`));
      else if (out.byteLength !== rawLength) reject(new DecompressError(`a compressed frame gave ${out.byteLength} bytes, its header said ${rawLength}`));
      else resolve(out);
    });
  });
}

/**
 * Bytes like an int8 weights tensor (a bell curve around zero): the slowest realistic
 * input for the decoder (bitstreams decode 1.5× faster, incompressible frames are never
 * compressed), so a decode rate measured on them is what a puller can promise.
 */
function calibrationSample(bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let a = 0x9e3779b9;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < bytes; i++) out[i] = Math.round((next() + next() + next() - 1.5) * 40) & 255;
  return out;
}

let decodeRate: number | undefined;
/** Bytes of the calibration sample a decode rate is measured on. */
const CALIBRATION_BYTES = 256 * 1024;

/**
 * This machine's decompression rate (bytes of output per CPU-second, one core), measured once
 * per process on 256 KiB of weights-like bytes (a few milliseconds here, ~5× that on a
 * Cortex-A53). A puller sends it in `stream.pull` so the sender knows what the board's
 * CPU can take: compressing past it would make the board, not the link, the limit.
 */
export function measuredDecodeRate(): number {
  if (decodeRate !== undefined) return decodeRate;
  const sample = calibrationSample(CALIBRATION_BYTES);
  decodeRate = decodeCpuRate(compressSync(sample, QUALITY_FAST), sample.byteLength);
  return decodeRate;
}

let calibrationPacked: Buffer | undefined;
/** Bytes of the calibration sample a relative decode speed is timed against. */
const RELATIVE_CALIBRATION_BYTES = 64 * 1024;

/** The best of three decodes of `packed`, in ms. */
function bestDecodeMs(packed: Buffer): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const from = performance.now();
    zlib.brotliDecompressSync(packed);
    best = Math.min(best, performance.now() - from);
  }
  return Math.max(best, 0.001);
}

/**
 * Times the calibration sample's decode now and returns how many times faster than it a
 * `packed` (of `rawBytes`) decodes, decoded here and now, on this thread, the best of three
 * each: a ratio of timings taken together, so a loaded machine slows both alike (process CPU
 * time would also count the thread pool's work for other streams). The calibration is timed
 * once for the qualities of one file, on 64 KiB: about 2 ms for both qualities in all.
 */
function relativeDecodeSpeeds(): (packed: Buffer, rawBytes: number) => number {
  calibrationPacked ??= compressSync(calibrationSample(RELATIVE_CALIBRATION_BYTES), QUALITY_FAST);
  const calibrationRate = RELATIVE_CALIBRATION_BYTES / bestDecodeMs(calibrationPacked);
  return (packed, rawBytes) => rawBytes / bestDecodeMs(packed) / calibrationRate;
}

function compressSync(chunk: Uint8Array, quality: LinkQuality): Buffer {
  return zlib.brotliCompressSync(chunk, { params: { ...BROTLI_PARAMS, [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: chunk.byteLength } });
}

/**
 * Bytes of output per CPU-second decoding `packed` (best of three). CPU time, not wall time:
 * on a busy machine a wall clock measures the other processes too, and one slow sample would
 * keep a board from ever taking compressed streams.
 */
function decodeCpuRate(packed: Buffer, rawBytes: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const from = process.cpuUsage();
    zlib.brotliDecompressSync(packed);
    const used = process.cpuUsage(from);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return Math.round(rawBytes / (Math.max(best, 0.05) / 1000));
}

/**
 * When a sender compresses a file once compression is negotiated: `auto` when that moves it
 * faster than raw, `always` whenever it shrinks (MM_LINK_COMPRESSION=always, metered links).
 */
export type CompressPolicy = 'auto' | 'always';

/** The MM_LINK_COMPRESSION setting (server and agent alike): `0` off, `1` auto, `always`. */
export function linkCompressionOf(setting: '0' | '1' | 'always'): 'off' | CompressPolicy {
  return setting === '0' ? 'off' : setting === '1' ? 'auto' : 'always';
}

/** What the puller tells the sender in `stream.pull.compression`. */
export interface CompressionHints {
  /** The puller's decompression rate (bytes of output per second). */
  decodeBps?: number | undefined;
  /** The link's delivery rate the puller measured on an earlier stream (wire bytes per second). */
  linkBps?: number | undefined;
}

/** Below this ratio (raw ÷ wire) a file is sent raw: its saving would not pay for the CPU. */
export const MIN_COMPRESSION_RATIO = 1.1;
/** Compressing must beat raw by this factor (estimates are rough; raw is the safe choice). */
const REQUIRED_GAIN = 1.15;
/**
 * Frames a sender compresses at once: its read-ahead (streams.ts), within the cores it has.
 * A call's rate is measured alone (the samples) or beside the others (the frames, each then
 * slower), so this many of them is about what the sender's CPU does in all.
 */
const COMPRESS_PARALLEL = Math.max(1, Math.min(4, os.availableParallelism()));
/** QUALITY_DENSE must beat QUALITY_FAST's pace by this factor: it costs the sender ~2.5× the CPU. */
const DENSE_GAIN = 1.1;
/** A file that looked incompressible is probed again once per this many frames (32 MiB). */
const PROBE_EVERY_FRAMES = 64;
/** The share of the puller's decode rate a compressed stream may count on (it also hashes and writes). */
const DECODE_SHARE = 0.5;
/** A link whose round trip is at least this long is presumed slow until measured. */
export const FIELD_LINK_RTT_MS = 20;
/**
 * A frame is sent compressed only if it shrank by at least MIN_COMPRESSION_RATIO: a probe
 * of a video that saves a few percent (its container's headers) still goes raw, so the
 * receiver never spends a decompression on it.
 */
export const MAX_COMPRESSED_SHARE = 1 / MIN_COMPRESSION_RATIO;

/** What the sender has measured of one quality on this file. */
interface QualityEstimate {
  /** raw ÷ wire, a moving average over samples and frames. */
  ratio: number | undefined;
  /** Recent compression rates (bytes in per second of the call); the best of them is what the CPU can do. */
  rates: number[];
  /**
   * How fast this file's frames at this quality decode, relative to the calibration sample
   * the puller's `decodeBps` was measured on (both decoded on the sender's CPU, from the
   * samples): bitstreams decode faster than weights, and faster still at QUALITY_DENSE.
   */
  decodeFactor: number;
}

/**
 * The sender's per-stream choice, frame by frame: compress while that moves the file
 * faster than raw, and at which quality, from what it measures.
 *
 * - per quality, the ratio: from a sample (the first and a middle 256 KiB of the file), then
 *   every frame compressed at it (a moving average, so a file whose middle differs is followed);
 * - per quality, its own compression rate (bytes in per second of wall time of the compress
 *   call, the best of the last eight);
 * - the puller's decompression rate (`decodeBps`, measured on the board on a calibration
 *   sample), scaled by how much faster this file decodes at that quality than the
 *   calibration sample does on the sender's CPU (measured on the samples);
 * - the link's rate: measured on this stream while credit held the sender back (then the
 *   link, or the receiver, is the limit), else the last such measurement on this link,
 *   else the puller's hint; with none of these, a link whose ping round trip is at least
 *   FIELD_LINK_RTT_MS is presumed slow (compress) and any other fast (raw) until measured.
 *
 * Compressed at quality q, a stream moves at min(compress_q, decode_q ÷ 2, link × ratio_q)
 * (the puller also hashes and writes every byte, so half its decode rate is what it can give
 * to decoding); raw at the link rate. It compresses when the better quality beats raw by
 * REQUIRED_GAIN, so a LAN (hundreds of MB/s, as fast as the decoder) stays raw and a field
 * link (1–50 MB/s) compresses; QUALITY_DENSE is taken when it is faster by DENSE_GAIN (it
 * costs the sender more CPU), which is when the board's decoder or the link sets the pace,
 * not the sender's compressor. A quality never sampled (a source without `readAt`) is not used.
 */
export class CompressionDecider {
  private readonly estimates: Record<LinkQuality, QualityEstimate> = {
    [QUALITY_FAST]: { ratio: undefined, rates: [], decodeFactor: 1 },
    [QUALITY_DENSE]: { ratio: undefined, rates: [], decodeFactor: 1 },
  };
  private framesSinceProbe = 0;
  /** Frames sent compressed (per quality) and raw. */
  readonly counts = { compressedFrames: 0, denseFrames: 0, rawFrames: 0 };

  constructor(
    private readonly hints: CompressionHints,
    /** The link rate measured so far (this stream, else this link), if any. */
    private readonly measuredLinkBps: () => number | undefined,
    /** The link's round trip from pings, if any. */
    private readonly rttMs: () => number | undefined,
    /**
     * `always` (MM_LINK_COMPRESSION=always): every frame of a file that shrinks goes
     * compressed, whatever the link's rate, as on a link presumed slow: a metered link, where
     * bytes cost money even when sending them raw would be as fast. The sampling, the probes
     * of incompressible files and the choice of quality stay as in `auto`.
     */
    private readonly policy: CompressPolicy = 'auto',
  ) {}

  /** A frame (or a sample) of `raw` bytes compressed at `quality` to `wire` bytes in `ms`. */
  observe(raw: number, wire: number, ms: number, quality: LinkQuality = QUALITY_FAST): void {
    if (raw <= 0) return;
    const e = this.estimates[quality];
    const ratio = raw / Math.max(1, wire);
    e.ratio = e.ratio === undefined ? ratio : e.ratio * 0.75 + ratio * 0.25;
    e.rates.push(raw / (Math.max(ms, 0.05) / 1000));
    if (e.rates.length > 8) e.rates.shift();
  }

  /** A sample at `quality` decoded `factor` × as fast as the calibration sample (both on the sender's CPU). */
  observeDecode(quality: LinkQuality, factor: number): void {
    if (Number.isFinite(factor) && factor > 0) this.estimates[quality].decodeFactor = factor;
  }

  /**
   * A quality's compression rate: the best recent one, since a call's wall time also counts
   * its wait for a thread of the pool and for the CPU on a loaded machine.
   */
  private compressBps(quality: LinkQuality): number | undefined {
    const rates = this.estimates[quality].rates;
    const own = rates.length > 0 ? Math.max(...rates) : undefined;
    // Quality 1 never compresses slower than quality 5: a first sample slowed by a loaded
    // machine (or the pool's first start) must not hide that, once frames go at 5 only.
    if (quality === QUALITY_FAST && own !== undefined) {
      const dense = this.estimates[QUALITY_DENSE].rates;
      return dense.length > 0 ? Math.max(own, ...dense) : own;
    }
    return own;
  }

  /** The link rate the decision uses: measured, learned, hinted, or presumed from the round trip (0: slow, compress). */
  linkBps(): number {
    if (this.policy === 'always') return 0;
    const measured = this.measuredLinkBps() ?? this.hints.linkBps;
    if (measured !== undefined) return measured;
    const rtt = this.rttMs();
    return rtt !== undefined && rtt >= FIELD_LINK_RTT_MS ? 0 : Number.POSITIVE_INFINITY;
  }

  /**
   * The file bytes per second a stream compressed at `quality` would move (a link presumed
   * slow counts as no limit: the CPUs decide), or undefined when the quality is unmeasured.
   */
  private pace(quality: LinkQuality, link: number): number | undefined {
    const e = this.estimates[quality];
    const perCall = this.compressBps(quality);
    if (e.ratio === undefined || perCall === undefined) return undefined;
    // The sender compresses up to COMPRESS_PARALLEL frames at once on the thread pool.
    const compress = perCall * COMPRESS_PARALLEL;
    // The board decodes besides hashing and writing every byte: count on half its decode rate.
    const decode = (this.hints.decodeBps ?? Number.POSITIVE_INFINITY) * e.decodeFactor * DECODE_SHARE;
    return Math.min(compress, decode, link === 0 ? Number.POSITIVE_INFINITY : link * e.ratio);
  }

  /** The quality for the next frame, or undefined to send it raw (a probe of an unknown file compresses). */
  next(): LinkQuality | undefined {
    const fast = this.estimates[QUALITY_FAST];
    if (fast.ratio === undefined || this.compressBps(QUALITY_FAST) === undefined) return QUALITY_FAST;
    if (fast.ratio < MIN_COMPRESSION_RATIO) {
      if (++this.framesSinceProbe < PROBE_EVERY_FRAMES) return undefined;
      this.framesSinceProbe = 0;
      return QUALITY_FAST;
    }
    const link = this.linkBps();
    const fastPace = this.pace(QUALITY_FAST, link)!;
    const densePace = this.pace(QUALITY_DENSE, link);
    const best: LinkQuality = densePace !== undefined && densePace > fastPace * DENSE_GAIN ? QUALITY_DENSE : QUALITY_FAST;
    if (link === 0) return best;
    return Math.max(fastPace, densePace ?? 0) > link * REQUIRED_GAIN ? best : undefined;
  }

  /** Whether the next frame should be compressed (at whichever quality). */
  compressNext(): boolean {
    return this.next() !== undefined;
  }

  /** For logs: the estimates behind the decision. */
  describe(): Record<string, number | undefined> {
    const link = this.linkBps();
    const mbps = (bps: number | undefined) => (bps === undefined ? undefined : Math.round(bps / 1e6));
    const round = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 100) / 100);
    const fast = this.estimates[QUALITY_FAST];
    const dense = this.estimates[QUALITY_DENSE];
    return {
      ratio: round(fast.ratio),
      compress_mbps: mbps(this.compressBps(QUALITY_FAST)),
      dense_ratio: round(dense.ratio),
      dense_compress_mbps: mbps(this.compressBps(QUALITY_DENSE)),
      decode_mbps: mbps(this.hints.decodeBps),
      decode_factor: round(fast.decodeFactor),
      dense_decode_factor: round(dense.decodeFactor),
      link_mbps: Number.isFinite(link) ? Math.round(link / 1e5) / 10 : undefined,
      compressed_frames: this.counts.compressedFrames,
      dense_frames: this.counts.denseFrames,
      raw_frames: this.counts.rawFrames,
    };
  }
}

/** A sample is tried at QUALITY_DENSE only if it shrank at least this much at QUALITY_FAST. */
const DENSE_SAMPLE_MIN_RATIO = 2;

/** Bytes read from each sampled place of a file. */
const SAMPLE_BYTES = 256 * 1024;

/** What sampling needs of a source: a ChunkReader (streams.ts) that can read at a position. */
interface SampledSource {
  readAt?(into: Buffer, offset: number, length: number, position: number): Promise<number>;
}

/**
 * Samples a file before its first frame: compresses 256 KiB at the stream's offset and
 * 256 KiB from the middle of what is left (a bitstream's header and its frames, an
 * archive's first member and a later one) at both qualities and tells the decider; decodes
 * the first sample at each quality to learn how fast this content decodes against the
 * calibration sample (a few milliseconds in all). A sample that does not compress stops
 * there: incompressible files cost one quick compression per sample; one that shrinks less
 * than 2× (weights) is not tried at quality 5. Needs `readAt`; a
 * source without it is judged by its first frames instead (at QUALITY_FAST only).
 */
export async function sampleCompression(reader: SampledSource, offset: number, size: number, decider: CompressionDecider): Promise<void> {
  const readAt = reader.readAt?.bind(reader);
  if (!readAt || size - offset < 2 * SAMPLE_BYTES) return;
  // Both places read and compressed side by side (the thread pool runs them at once): the
  // sampling delays the stream's first frame, the one cost a small compressible file feels.
  const samples = await Promise.all(
    [offset, offset + Math.floor((size - offset) / 2)].map(async (at) => {
      const buf = Buffer.allocUnsafe(SAMPLE_BYTES);
      return buf.subarray(0, await readAt(buf, 0, SAMPLE_BYTES, at));
    }),
  );
  const timed = async (sample: Buffer, quality: LinkQuality) => {
    const from = performance.now();
    const packed = await compressChunk(sample, quality);
    decider.observe(sample.byteLength, packed.byteLength, performance.now() - from, quality);
    return packed;
  };
  const present = samples.filter((sample) => sample.byteLength > 0);
  const fast = await Promise.all(present.map((sample) => timed(sample, QUALITY_FAST)));
  const shrank = (packed: Buffer, sample: Buffer) => packed.byteLength <= sample.byteLength * MAX_COMPRESSED_SHARE;
  // Quality 5 pays on files of long repeats (bitstreams); weights (1.25×) gain nothing from it.
  const denseWorth = present.map((sample, i) => shrank(fast[i]!, sample) && fast[i]!.byteLength * DENSE_SAMPLE_MIN_RATIO <= sample.byteLength);
  const dense = await Promise.all(present.map((sample, i) => (denseWorth[i] ? timed(sample, QUALITY_DENSE) : undefined)));
  const first = present[0];
  if (!first || !shrank(fast[0]!, first)) return;
  const speedOf = relativeDecodeSpeeds();
  decider.observeDecode(QUALITY_FAST, speedOf(fast[0]!, first.byteLength));
  if (dense[0]) decider.observeDecode(QUALITY_DENSE, speedOf(dense[0], first.byteLength));
}
