import type { LogEventData } from './operation-event.ts';

type Stream = LogEventData['stream'];

/** One operation's cap: kept in its live record (live-operations.ts). */
export interface CapState {
  /** Bytes of the head stored so far. */
  headBytes: number;
  /** Bytes that arrived past the head: the tail is kept, the rest is cut. */
  overflowBytes: number;
  /** The most recent chunks past the head, at most `tailMax` bytes in all. */
  tail: Array<{ stream: Stream; data: string; bytes: number }>;
  tailBytes: number;
}

export function newCapState(): CapState {
  return { headBytes: 0, overflowBytes: 0, tail: [], tailBytes: 0 };
}

/**
 * Caps the log bytes stored per operation (MM_LOG_MAX_BYTES): the first half is stored as it
 * comes, the last half is held in memory (a rolling tail) and stored when the operation ends,
 * after a line saying how many bytes were cut in between. The state of each operation is
 * its own CapState (newCapState), kept with the rest of what the operation holds.
 */
export class LogCap {
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(maxBytes: number) {
    this.headMax = Math.ceil(maxBytes / 2);
    this.tailMax = maxBytes - this.headMax;
  }

  /** The part of this chunk to store now ('' when it goes to the tail). */
  admit(s: CapState, stream: Stream, data: string): string {
    const bytes = Buffer.byteLength(data);
    if (s.overflowBytes === 0 && s.headBytes + bytes <= this.headMax) {
      s.headBytes += bytes;
      return data;
    }
    let rest = data;
    let stored = '';
    if (s.overflowBytes === 0) {
      const room = this.headMax - s.headBytes;
      stored = utf8Prefix(data, room);
      s.headBytes += Buffer.byteLength(stored);
      rest = data.slice(stored.length);
    }
    const restBytes = Buffer.byteLength(rest);
    if (restBytes > 0) {
      s.overflowBytes += restBytes;
      s.tail.push({ stream, data: rest, bytes: restBytes });
      s.tailBytes += restBytes;
      this.trimTail(s);
    }
    return stored;
  }

  /** The operation ended: what to store after its head (the cut line and the tail), in order. */
  finish(s: CapState | undefined): Array<{ stream: Stream; data: string }> {
    if (!s || s.overflowBytes === 0) return [];
    const cut = s.overflowBytes - s.tailBytes;
    if (cut === 0) return s.tail.map(({ stream, data }) => ({ stream, data }));
    const line = `\n[log cut: ${cut} bytes left out here; this operation's log is kept to its first ${s.headBytes} and last ${s.tailBytes} bytes (MM_LOG_MAX_BYTES)]\n`;
    return [{ stream: 'server', data: line }, ...s.tail.map(({ stream, data }) => ({ stream, data }))];
  }

  private trimTail(s: CapState): void {
    while (s.tailBytes > this.tailMax) {
      const first = s.tail[0]!;
      const excess = s.tailBytes - this.tailMax;
      if (first.bytes <= excess) {
        s.tail.shift();
        s.tailBytes -= first.bytes;
        continue;
      }
      const kept = utf8Suffix(first.data, first.bytes - excess);
      const keptBytes = Buffer.byteLength(kept);
      s.tailBytes -= first.bytes - keptBytes;
      first.data = kept;
      first.bytes = keptBytes;
    }
  }
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, not splitting a character. */
function utf8Prefix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString();
}

/** The longest suffix of `text` of at most `maxBytes` UTF-8 bytes, not splitting a character. */
function utf8Suffix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const buf = Buffer.from(text);
  if (buf.length <= maxBytes) return text;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString();
}
