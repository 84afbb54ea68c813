/**
 * Binary frames carry file data, multiplexed by stream id:
 *
 *   byte 0      frame kind (1 = data)
 *   bytes 1..4  stream id, uint32 big-endian
 *   bytes 5..   payload
 *
 * JSON messages travel in text frames (see messages.ts). Offsets are implicit: a stream's
 * data arrives in order from the offset its `stream.pull` named.
 */
export const FRAME_DATA = 1;
export const FRAME_HEADER_BYTES = 5;

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

export type DecodedFrame = { ok: true; streamId: number; payload: Buffer } | { ok: false; error: string };

export function decodeFrame(frame: Buffer): DecodedFrame {
  if (frame.length < FRAME_HEADER_BYTES) return { ok: false, error: `binary frame of ${frame.length} bytes is shorter than its header` };
  if (frame[0] !== FRAME_DATA) return { ok: false, error: `unknown binary frame kind ${frame[0]}` };
  return { ok: true, streamId: frame.readUInt32BE(1), payload: frame.subarray(FRAME_HEADER_BYTES) };
}
