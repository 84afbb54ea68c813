import jpeg from 'jpeg-js';

/**
 * 5×7 glyphs for what the pattern writes (frame counter and ISO time): each row is five bits,
 * the most significant on the left.
 */
const GLYPHS: Record<string, readonly number[]> = {
  '0': [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
  '1': [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
  '2': [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
  '3': [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
  '4': [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
  '5': [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
  '6': [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
  '7': [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
  '8': [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
  '9': [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
  A: [0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11],
  E: [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f],
  F: [0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10],
  M: [0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11],
  R: [0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11],
  T: [0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
  Z: [0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f],
  ':': [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00],
  '.': [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c],
  '-': [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00],
  ' ': [0, 0, 0, 0, 0, 0, 0],
};

/** Eight colour bars (white, yellow, cyan, green, magenta, red, blue, black), as in a TV test card. */
const BARS: ReadonlyArray<readonly [number, number, number]> = [
  [235, 235, 235],
  [235, 235, 16],
  [16, 235, 235],
  [16, 235, 16],
  [235, 16, 235],
  [235, 16, 16],
  [16, 16, 235],
  [16, 16, 16],
];

/**
 * The simulated camera's picture: colour bars sliding sideways, a square bouncing across
 * them, and a band with the frame number and the capture time, so a person (or a test)
 * can see that frames move and how old they are. Drawn into one reused RGBA buffer and
 * encoded with jpeg-js (pure JavaScript, no native code on the board).
 */
export class TestPattern {
  private readonly rgba: Buffer;

  constructor(
    readonly width: number,
    readonly height: number,
    private readonly quality = 70,
  ) {
    this.rgba = Buffer.alloc(width * height * 4, 0xff);
  }

  /** Frame `n` captured at `captureTimeMs`, as a JPEG. */
  render(n: number, captureTimeMs: number): Buffer {
    this.draw(n, captureTimeMs);
    return jpeg.encode({ data: this.rgba, width: this.width, height: this.height }, this.quality).data;
  }

  private draw(n: number, captureTimeMs: number): void {
    const { width: w, height: h, rgba } = this;
    // Bars, shifted 4 px a frame (one row drawn, then copied down).
    const barWidth = Math.max(1, Math.ceil(w / BARS.length));
    const shift = (n * 4) % w;
    for (let x = 0; x < w; x++) {
      const [r, g, b] = BARS[Math.floor(((x + shift) % w) / barWidth) % BARS.length]!;
      const o = x * 4;
      rgba[o] = r;
      rgba[o + 1] = g;
      rgba[o + 2] = b;
    }
    const row = rgba.subarray(0, w * 4);
    for (let y = 1; y < h; y++) row.copy(rgba, y * w * 4);
    // A bouncing square.
    const size = Math.max(8, Math.floor(Math.min(w, h) / 6));
    const bx = bounce(n * 7, w - size);
    const by = bounce(n * 5, h - size);
    this.fill(bx, by, size, size, [255, 128, 0]);
    // The caption band.
    const scale = Math.max(1, Math.floor(w / 160));
    const band = 2 * (7 * scale + 2 * scale) + 2 * scale;
    const top = h - band;
    this.fill(0, top, w, band, [0, 0, 0]);
    this.text(`FRAME ${String(n).padStart(6, '0')}`, 2 * scale, top + scale, scale);
    this.text(new Date(captureTimeMs).toISOString(), 2 * scale, top + 10 * scale, scale);
  }

  private fill(x0: number, y0: number, fw: number, fh: number, [r, g, b]: readonly [number, number, number]): void {
    const { width: w, height: h, rgba } = this;
    for (let y = Math.max(0, y0); y < Math.min(h, y0 + fh); y++) {
      for (let x = Math.max(0, x0); x < Math.min(w, x0 + fw); x++) {
        const o = (y * w + x) * 4;
        rgba[o] = r;
        rgba[o + 1] = g;
        rgba[o + 2] = b;
      }
    }
  }

  private text(s: string, x0: number, y0: number, scale: number): void {
    let x = x0;
    for (const ch of s) {
      const glyph = GLYPHS[ch] ?? GLYPHS[' ']!;
      for (let gy = 0; gy < 7; gy++) {
        for (let gx = 0; gx < 5; gx++) {
          if (glyph[gy]! & (0x10 >> gx)) this.fill(x + gx * scale, y0 + gy * scale, scale, scale, [255, 255, 255]);
        }
      }
      x += 6 * scale;
    }
  }
}

/** 0 → max → 0 … as `t` grows. */
function bounce(t: number, max: number): number {
  if (max <= 0) return 0;
  const p = t % (2 * max);
  return p <= max ? p : 2 * max - p;
}

/** Decodes a JPEG (tests and benchmarks check frames with it): its size and RGBA pixels. */
export function decodeJpeg(bytes: Uint8Array): { width: number; height: number; data: Uint8Array } {
  return jpeg.decode(bytes, { useTArray: true });
}
