/**
 * Binary frames carry file data, multiplexed by stream id:
 *
 *   byte 0      frame kind (1 = data, 2 = compressed data)
 *   bytes 1..4  stream id, uint32 big-endian
 *   bytes 5..   payload (kind 1)
 *
 * A compressed data frame (kind 2, only on a stream whose `stream.pull` offered
 * `compression`) also carries its uncompressed length, and its payload is one brotli
 * stream of its own (compression.ts):
 *
 *   bytes 5..8  uncompressed length, uint32 big-endian (at most one chunk)
 *   bytes 9..   payload
 *
 * JSON messages travel in text frames (see messages.ts). Offsets are implicit: a stream's
 * data arrives in order from the offset its `stream.pull` named.
 */
export const FRAME_DATA = 1;
export const FRAME_HEADER_BYTES = 5;
export const FRAME_COMPRESSED_DATA = 2;
export const COMPRESSED_FRAME_HEADER_BYTES = 9;

/** The header of a data frame; the payload follows it in the same binary message. */
export function encodeDataHeader(streamId: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  writeDataHeader(header, streamId);
  return header;
}

/** Writes a data frame's header into the first FRAME_HEADER_BYTES of `frame` (a pooled frame buffer). */
export function writeDataHeader(frame: Buffer, streamId: number): void {
  frame[0] = FRAME_DATA;
  frame.writeUInt32BE(streamId >>> 0, 1);
}

/** A data frame as one buffer (the header and a copy of the payload). */
export function encodeDataFrame(streamId: number, payload: Uint8Array): Buffer {
  return Buffer.concat([encodeDataHeader(streamId), payload]);
}

/** A compressed data frame: header, uncompressed length and the compressed bytes, as one buffer. */
export function encodeCompressedFrame(streamId: number, rawLength: number, compressed: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(COMPRESSED_FRAME_HEADER_BYTES + compressed.byteLength);
  frame[0] = FRAME_COMPRESSED_DATA;
  frame.writeUInt32BE(streamId >>> 0, 1);
  frame.writeUInt32BE(rawLength >>> 0, 5);
  frame.set(compressed, COMPRESSED_FRAME_HEADER_BYTES);
  return frame;
}

/** `rawLength` is set for a compressed frame (its payload decompresses to that many bytes). */
export type DecodedFrame = { ok: true; streamId: number; payload: Buffer; rawLength?: number } | { ok: false; error: string };

export function decodeFrame(frame: Buffer): DecodedFrame {
  if (frame.length < FRAME_HEADER_BYTES) return { ok: false, error: `binary frame of ${frame.length} bytes is shorter than its header` };
  if (frame[0] === FRAME_COMPRESSED_DATA) {
    if (frame.length < COMPRESSED_FRAME_HEADER_BYTES) return { ok: false, error: `compressed frame of ${frame.length} bytes is shorter than its header` };
    return { ok: true, streamId: frame.readUInt32BE(1), rawLength: frame.readUInt32BE(5), payload: frame.subarray(COMPRESSED_FRAME_HEADER_BYTES) };
  }
  if (frame[0] !== FRAME_DATA) return { ok: false, error: `unknown binary frame kind ${frame[0]}` };
  return { ok: true, streamId: frame.readUInt32BE(1), payload: frame.subarray(FRAME_HEADER_BYTES) };
}
