import jpeg from 'jpeg-js';
import { describe, expect, it } from 'vitest';
import { JpegSplitter, looksLikeJpeg } from '../src/jpeg-splitter.ts';
import { TestPattern } from '../src/test-pattern.ts';

const pattern = new TestPattern(64, 48);
const frames = [1, 2, 3, 4].map((n) => pattern.render(n, 1_790_000_000_000 + n));

/** Feeds `bytes` in chunks of the given sizes (cycled) and returns what came out. */
function split(bytes: Buffer, sizes: number[], maxBytes?: number): Buffer[] {
  const out: Buffer[] = [];
  const s = new JpegSplitter((f) => out.push(f), maxBytes);
  let i = 0;
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const n = sizes[k % sizes.length]!;
    s.push(bytes.subarray(at, at + n));
    at += n;
    i++;
  }
  return out;
}

/** A JPEG with an APP1 segment whose payload holds FF D9 (as an EXIF thumbnail's end does). */
function withTrickySegment(jpg: Buffer): Buffer {
  const payload = Buffer.from([0x45, 0x78, 0x69, 0x66, 0, 0, 0xff, 0xd8, 1, 2, 0xff, 0xd9, 3]);
  const seg = Buffer.alloc(4);
  seg[0] = 0xff;
  seg[1] = 0xe1;
  seg.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpg.subarray(0, 2), seg, payload, jpg.subarray(2)]);
}

describe('JpegSplitter: concatenated JPEGs into whole frames', () => {
  it('gives back every frame byte for byte whatever the chunking', () => {
    const all = Buffer.concat(frames);
    for (const sizes of [[all.length], [1], [7, 1, 300], [4096], [2, 3]]) {
      const out = split(all, sizes);
      expect(out.length).toBe(frames.length);
      out.forEach((f, i) => expect(f.equals(frames[i]!)).toBe(true));
    }
  });

  it('every frame is a decodable JPEG (SOI…EOI)', () => {
    for (const f of split(Buffer.concat(frames), [999])) {
      expect(looksLikeJpeg(f)).toBe(true);
      expect(jpeg.decode(f).width).toBe(64);
    }
  });

  it('skips garbage before and between frames, and a cut-off frame', () => {
    const garbage = Buffer.from([0x00, 0xff, 0x12, 0xff, 0xff, 0x99]);
    const cut = frames[1]!.subarray(0, 200);
    const out = split(Buffer.concat([garbage, frames[0]!, garbage, cut, frames[2]!, frames[3]!]), [13]);
    expect(out.map((f) => f.length)).toEqual([frames[0]!.length, frames[2]!.length, frames[3]!.length]);
  });

  it('does not end a frame at an FF D9 inside a header segment (EXIF thumbnail)', () => {
    const tricky = withTrickySegment(frames[0]!);
    const out = split(Buffer.concat([tricky, frames[1]!]), [5]);
    expect(out.length).toBe(2);
    expect(out[0]!.equals(tricky)).toBe(true);
    expect(jpeg.decode(out[0]!).width).toBe(64);
  });

  it('drops a frame over the size cap and keeps going, with a bounded buffer', () => {
    const big = new TestPattern(640, 480).render(1, 0);
    const out = split(Buffer.concat([big, frames[0]!, frames[1]!]), [1000], 20_000);
    expect(out.map((f) => f.length)).toEqual([frames[0]!.length, frames[1]!.length]);
  });
});
