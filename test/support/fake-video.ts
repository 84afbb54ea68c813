/**
 * An `input_video` must start like a video container (400 `invalid_video` otherwise, issue 39):
 * tests that send made-up bytes as one give them an MP4 `ftyp` box first.
 */
export const MP4_HEAD = Buffer.from('\0\0\0\x18ftypisom\0\0\x02\0isomiso2', 'latin1');

/** The bytes with their first 24 overwritten by an MP4 head (in place, same length); shorter ones get it in front. */
export function asVideo(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < MP4_HEAD.length) return Buffer.concat([MP4_HEAD, b]);
  MP4_HEAD.copy(b, 0);
  return b;
}
