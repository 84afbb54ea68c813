/** A frame bigger than this is not a camera frame: the splitter drops it and resynchronises. */
export const MAX_JPEG_BYTES = 8 * 1024 * 1024;

/**
 * Splits a byte stream of concatenated JPEG images (what `ffmpeg -f mjpeg -` or
 * `gst-launch-1.0 … ! fdsink` write) into whole images.
 *
 * Robust rather than naive: an `FF D9` that happens to sit inside a header segment (an EXIF
 * thumbnail ends with one) is not taken for the end of the image. After SOI the segments are
 * walked by their lengths up to SOS; only in the entropy-coded data after SOS is an `FF`
 * followed by `D9` the end (`FF 00` is a stuffed byte, `FF D0`–`FF D7` restart markers, and
 * a progressive JPEG has several SOS scans). Bytes before an SOI are skipped, and a frame
 * that grows past `maxBytes` is dropped, so garbage never grows the buffer without bound.
 */
export class JpegSplitter {
  private buf: Buffer = Buffer.alloc(0);
  /** Where the scan goes on next time (an index into `buf`). */
  private pos = 0;
  private state: 'seek' | 'segments' | 'scan' = 'seek';
  /** Frames dropped for being too big or malformed (diagnostics). */
  dropped = 0;

  constructor(
    private readonly onFrame: (jpeg: Buffer) => void,
    private readonly maxBytes = MAX_JPEG_BYTES,
  ) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    this.run();
    if (this.buf.length > this.maxBytes) {
      // One frame this big is no frame: start again at the next SOI.
      this.dropped++;
      this.reset(this.buf.subarray(this.buf.length - 1));
    }
  }

  private reset(rest: Buffer): void {
    this.buf = Buffer.from(rest);
    this.pos = 0;
    this.state = 'seek';
  }

  private run(): void {
    const b = this.buf;
    for (;;) {
      if (this.state === 'seek') {
        const soi = findSoi(b, this.pos);
        if (soi < 0) {
          // Keep a trailing FF: it may be the first half of the next SOI.
          this.reset(b.length > 0 && b[b.length - 1] === 0xff ? b.subarray(b.length - 1) : Buffer.alloc(0));
          return;
        }
        if (soi > 0) return this.restartAt(soi);
        this.pos = 2;
        this.state = 'segments';
      }
      if (this.state === 'segments') {
        // Marker segments: FF xx, then (for most) a two-byte length that counts itself.
        if (this.pos + 4 > b.length) return;
        if (b[this.pos] !== 0xff) return this.malformed();
        const marker = b[this.pos + 1]!;
        if (marker === 0xff) {
          this.pos++; // fill byte
          continue;
        }
        if (marker === 0xd8) return this.restartAt(this.pos); // a new SOI: the old image was cut
        if (marker === 0xd9) return this.emit(this.pos + 2); // an image with no scan at all
        if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
          this.pos += 2;
          continue;
        }
        const length = b.readUInt16BE(this.pos + 2);
        if (length < 2) return this.malformed();
        if (this.pos + 2 + length > b.length) return;
        this.pos += 2 + length;
        if (marker === 0xda) this.state = 'scan';
        continue;
      }
      // Entropy-coded data: look for the next real marker.
      let i = b.indexOf(0xff, this.pos);
      for (;;) {
        if (i < 0 || i + 1 >= b.length) {
          this.pos = i < 0 ? b.length : i;
          return;
        }
        const next = b[i + 1]!;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
          i = b.indexOf(0xff, i + 1);
          continue;
        }
        break;
      }
      const marker = b[i + 1]!;
      if (marker === 0xd9) return this.emit(i + 2);
      if (marker === 0xd8) return this.restartAt(i);
      // Another segment (DHT, DQT, SOS of a progressive JPEG's next scan…).
      this.pos = i;
      this.state = 'segments';
    }
  }

  private emit(end: number): void {
    const frame = Buffer.from(this.buf.subarray(0, end));
    const rest = this.buf.subarray(end);
    this.reset(rest);
    this.onFrame(frame);
    this.run();
  }

  private restartAt(index: number): void {
    if (index > 0 && this.state !== 'seek') this.dropped++;
    this.reset(this.buf.subarray(index));
    this.run();
  }

  /**
   * The segments do not add up (a frame cut short inside its headers, whose last length
   * reached into the next frame): look for the next SOI after this frame's own.
   */
  private malformed(): void {
    this.dropped++;
    this.reset(this.buf.subarray(2));
    this.run();
  }
}

function findSoi(b: Buffer, from: number): number {
  let i = b.indexOf(0xff, from);
  while (i >= 0 && i + 1 < b.length) {
    if (b[i + 1] === 0xd8) return i;
    i = b.indexOf(0xff, i + 1);
  }
  return -1;
}

/** Whether the bytes are one whole JPEG by its markers: SOI first, EOI last. */
export function looksLikeJpeg(b: Uint8Array): boolean {
  return b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9;
}
