import { MAX_JPEG_BYTES } from './jpeg-splitter.ts';

/** The boundary the webcam script separates its frames with. */
export const MJPEG_BOUNDARY = 'mmframe';
/** The part header carrying a frame's capture time (ms since the epoch): latency is measured from it. */
export const CAPTURE_TIME_HEADER = 'x-capture-time';

/** One part of a `multipart/x-mixed-replace` stream: its headers (lowercased names) and body. */
export interface MjpegPart {
  headers: Record<string, string>;
  body: Buffer;
}

/** The response head of an MJPEG stream with `boundary`. */
export function mjpegContentType(boundary = MJPEG_BOUNDARY): string {
  return `multipart/x-mixed-replace; boundary=${boundary}`;
}

/** One frame as a part of the stream: boundary line, headers, the JPEG, CRLF. */
export function formatMjpegPart(jpeg: Buffer, captureTimeMs: number, boundary = MJPEG_BOUNDARY): Buffer {
  const head = `--${boundary}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\nX-Capture-Time: ${captureTimeMs}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), jpeg, CRLF]);
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
/** Part headers longer than this are not headers: the reader resynchronises. */
const MAX_PART_HEAD_BYTES = 8 * 1024;

/** The boundary of a `multipart/x-mixed-replace; boundary=…` content type (quotes allowed), if any. */
export function boundaryOf(contentType: string | null | undefined): string | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const b = m?.[1] ?? m?.[2];
  // Some cameras put the dashes into the parameter too.
  return b?.replace(/^--/, '');
}

/**
 * Reads the parts of a `multipart/x-mixed-replace` stream as the bytes arrive, in any
 * chunking. A part with `Content-Length` is read by its length; one without it ends at the
 * next boundary line. What is not a part (preamble, garbage, an oversized part) is skipped,
 * so the buffer never holds more than about one frame.
 */
export class MjpegPartReader {
  private buf: Buffer = Buffer.alloc(0);
  private readonly delimiter: Buffer;
  private readonly nextDelimiter: Buffer;
  /** Parts skipped for being malformed or too big. */
  dropped = 0;

  constructor(
    boundary: string,
    private readonly onPart: (part: MjpegPart) => void,
    private readonly maxBytes = MAX_JPEG_BYTES,
  ) {
    this.delimiter = Buffer.from(`--${boundary}`, 'latin1');
    this.nextDelimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (this.step());
    if (this.buf.length > this.maxBytes + MAX_PART_HEAD_BYTES) {
      this.dropped++;
      // Keep what could be the start of the next boundary line.
      this.buf = Buffer.from(this.buf.subarray(this.buf.length - this.nextDelimiter.length));
    }
  }

  /** One part out of the buffer if a whole one is there; false when more bytes are needed. */
  private step(): boolean {
    const start = this.buf.indexOf(this.delimiter);
    if (start < 0) {
      this.buf = Buffer.from(this.buf.subarray(Math.max(0, this.buf.length - this.delimiter.length)));
      return false;
    }
    const headStart = start + this.delimiter.length;
    const headEnd = this.buf.indexOf(HEADERS_END, headStart);
    if (headEnd < 0) {
      if (this.buf.length - headStart > MAX_PART_HEAD_BYTES) return this.skip(headStart);
      if (start > 0) this.buf = this.buf.subarray(start);
      return false;
    }
    // `--boundary--` ends the stream; anything else after the boundary is its line's end.
    const headers: Record<string, string> = {};
    for (const line of this.buf.toString('latin1', headStart, headEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = headEnd + HEADERS_END.length;
    const declared = headers['content-length'];
    if (declared !== undefined) {
      const length = Number(declared);
      if (!Number.isSafeInteger(length) || length < 0 || length > this.maxBytes) return this.skip(bodyStart);
      if (this.buf.length < bodyStart + length) {
        if (start > 0) this.buf = this.buf.subarray(start);
        return false;
      }
      const body = Buffer.from(this.buf.subarray(bodyStart, bodyStart + length));
      this.buf = this.buf.subarray(bodyStart + length);
      this.onPart({ headers, body });
      return true;
    }
    const end = this.buf.indexOf(this.nextDelimiter, bodyStart);
    if (end < 0) {
      if (this.buf.length - bodyStart > this.maxBytes) return this.skip(bodyStart);
      if (start > 0) this.buf = this.buf.subarray(start);
      return false;
    }
    const body = Buffer.from(this.buf.subarray(bodyStart, end));
    this.buf = this.buf.subarray(end + 2);
    this.onPart({ headers, body });
    return true;
  }

  private skip(from: number): boolean {
    this.dropped++;
    this.buf = this.buf.subarray(from);
    return true;
  }
}
