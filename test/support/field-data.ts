/**
 * Files with the byte structure of what crosses a field link, made on the spot (tests and
 * bench/field-compression.ts): an UltraScale+-like bitstream, an int8 weights tensor.
 * Both are deterministic for a seed, so a test can regenerate what it expects.
 */
import fs from 'node:fs/promises';

/** UltraScale+ configuration frames are 93 32-bit words. */
export const ULTRASCALE_FRAME_WORDS = 93;

/** A small fast PRNG (mulberry32): reproducible bytes without node:crypto's cost. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An UltraScale+-like bitstream of `size` bytes: a header (dummy words, the bus-width
 * pattern, the sync word 0xAA995566, a few register writes, a type-2 FDRI write), then
 * configuration frames of 93 words. Most frames are empty (all zero, as an unused part of
 * the fabric is); `configured` of them (default 6 %) carry sparse settings: each word is
 * zero with probability 0.7, otherwise a few random bits set (LUT masks, routing PIPs).
 */
export function bitstreamLikeChunk(seed: number, frames: number, configured = 0.06): Buffer {
  const rnd = prng(seed);
  const out = Buffer.alloc(frames * ULTRASCALE_FRAME_WORDS * 4);
  for (let f = 0; f < frames; f++) {
    if (rnd() >= configured) continue;
    for (let w = 0; w < ULTRASCALE_FRAME_WORDS; w++) {
      if (rnd() < 0.7) continue;
      let word = 0;
      const bits = 1 + Math.floor(rnd() * 4);
      for (let b = 0; b < bits; b++) word |= 1 << Math.floor(rnd() * 32);
      out.writeUInt32BE(word >>> 0, (f * ULTRASCALE_FRAME_WORDS + w) * 4);
    }
  }
  return out;
}

const BITSTREAM_HEADER = Buffer.from(
  [
    0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x000000bb, 0x11220044, 0xffffffff, 0xffffffff, 0xaa995566, 0x20000000,
    0x30022001, 0x00000000, 0x30020001, 0x00000000, 0x30008001, 0x00000007, 0x30018001, 0x04a5a093, 0x30008001, 0x00000001,
    0x30004000, 0x50000000,
  ].flatMap((w) => [(w >>> 24) & 255, (w >>> 16) & 255, (w >>> 8) & 255, w & 255]),
);

/** Writes an UltraScale+-like bitstream of `size` bytes (see bitstreamLikeChunk). */
export async function writeBitstreamLike(file: string, size: number, seed = 1): Promise<void> {
  const framesPerChunk = 2816; // ≈ 1 MiB of frames per write
  await writeGenerated(file, size, BITSTREAM_HEADER, (i) => bitstreamLikeChunk(seed * 7919 + i, framesPerChunk));
}

/**
 * int8 weights of `size` bytes: values of a quantized, roughly normal tensor (most near
 * zero, σ ≈ 20, clipped to ±127), as a post-training-quantized layer holds them. Such data
 * compresses about 1.1–1.3× with general-purpose codecs.
 */
export function weightsLikeChunk(seed: number, bytes: number): Buffer {
  const rnd = prng(seed);
  const out = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) {
    // Sum of three uniforms: a cheap bell curve on [-1.5, 1.5), scaled to σ ≈ 20.
    const v = Math.round((rnd() + rnd() + rnd() - 1.5) * 40);
    out[i] = Math.max(-127, Math.min(127, v)) & 255;
  }
  return out;
}

export async function writeWeightsLike(file: string, size: number, seed = 1): Promise<void> {
  await writeGenerated(file, size, Buffer.alloc(0), (i) => weightsLikeChunk(seed * 104729 + i, 1024 * 1024));
}

async function writeGenerated(file: string, size: number, header: Buffer, chunk: (index: number) => Buffer): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    let at = 0;
    if (header.length > 0) {
      const head = header.subarray(0, Math.min(header.length, size));
      await handle.write(head, 0, head.length, 0);
      at = head.length;
    }
    for (let i = 0; at < size; i++) {
      const piece = chunk(i);
      const n = Math.min(piece.length, size - at);
      await handle.write(piece, 0, n, at);
      at += n;
    }
  } finally {
    await handle.close();
  }
}
