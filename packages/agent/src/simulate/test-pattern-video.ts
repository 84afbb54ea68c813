import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import HME from 'h264-mp4-encoder';

export interface VideoSpec {
  width: number;
  height: number;
  frameRate: number;
  frames: number;
}

export const DEFAULT_VIDEO: VideoSpec = { width: 320, height: 240, frameRate: 15, frames: 45 };

/** Bytes to draw from: samples of the input video (or of a text when there is none). */
export interface FrameSource {
  /** 32 bytes that seed the colours. */
  seed: Uint8Array;
  /** `count` bytes for frame `index` (the bar heights). */
  sample(index: number, count: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Samples spread evenly over the file: every frame shows bytes from another part of it. */
export async function fileFrameSource(file: string, frames: number): Promise<FrameSource> {
  const handle = await fsp.open(file, 'r');
  const { size } = await handle.stat();
  const head = Buffer.alloc(Math.min(size, 1024 * 1024));
  await handle.read(head, 0, head.length, 0);
  const seed = createHash('sha256').update(head).update(String(size)).digest();
  return {
    seed,
    sample: async (index, count) => {
      const out = Buffer.alloc(count);
      if (size === 0) return out;
      const at = Math.floor((size * index) / Math.max(1, frames)) % size;
      await handle.read(out, 0, Math.min(count, size - at), at);
      return out;
    },
    close: () => handle.close(),
  };
}

/** Without an input video: bytes derived from a text (the invocation's name). */
export function textFrameSource(text: string): FrameSource {
  const seed = createHash('sha256').update(text).digest();
  return {
    seed,
    sample: async (index, count) => {
      const out = Buffer.alloc(count);
      let block = Buffer.alloc(0);
      for (let i = 0; i < count; i++) {
        if (i % 32 === 0) block = createHash('sha256').update(seed).update(`${index}:${i}`).digest();
        out[i] = block[i % 32]!;
      }
      return out;
    },
    close: async () => {},
  };
}

const BARS = 16;

/**
 * One RGBA frame: a background gradient coloured by the seed that drifts over time, a row
 * of bars whose heights are this frame's sample bytes, and a white block that crosses the
 * picture once over the clip so motion is obvious when it plays.
 */
export function drawFrame(spec: VideoSpec, seed: Uint8Array, sample: Uint8Array, index: number): Uint8Array {
  const { width, height } = spec;
  const rgba = new Uint8Array(width * height * 4);
  const [r0, g0, b0] = [seed[0]!, seed[1]!, seed[2]!];
  const drift = (index * 4) % 256;
  const barWidth = Math.floor(width / BARS);
  const block = { x: Math.floor(((width - 24) * index) / Math.max(1, spec.frames - 1)), y: Math.floor(height / 8), size: 24 };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      let r = (r0 + (x * 128) / width + drift) & 255;
      let g = (g0 + (y * 128) / height) & 255;
      let b = (b0 + drift * 2) & 255;
      const bar = Math.min(BARS - 1, Math.floor(x / barWidth));
      const barHeight = Math.floor(((sample[bar] ?? 0) / 255) * (height * 0.6));
      if (height - y <= barHeight && x % barWidth > 1) {
        r = seed[3 + (bar % 8)]!;
        g = 255 - r;
        b = (bar * 16) & 255;
      }
      if (x >= block.x && x < block.x + block.size && y >= block.y && y < block.y + block.size) r = g = b = 255;
      rgba[p] = r;
      rgba[p + 1] = g;
      rgba[p + 2] = b;
      rgba[p + 3] = 255;
    }
  }
  return rgba;
}

/** Encodes the frames as an H.264 MP4 (baseline, playable in browsers) with the WASM encoder. */
export async function renderTestPatternMp4(source: FrameSource, spec: VideoSpec = DEFAULT_VIDEO): Promise<Uint8Array> {
  const encoder = await HME.createH264MP4Encoder();
  try {
    encoder.width = spec.width;
    encoder.height = spec.height;
    encoder.frameRate = spec.frameRate;
    encoder.groupOfPictures = spec.frameRate;
    // A test pattern needs no best-effort compression: 5 is ~3× faster than the default 0.
    encoder.speed = 5;
    encoder.initialize();
    try {
      for (let i = 0; i < spec.frames; i++) {
        encoder.addFrameRgba(drawFrame(spec, source.seed, await source.sample(i, BARS), i));
      }
    } finally {
      await source.close();
    }
    encoder.finalize();
    const mp4 = encoder.FS.readFile(encoder.outputFilename);
    encoder.FS.unlink(encoder.outputFilename);
    return mp4;
  } finally {
    encoder.delete();
  }
}
