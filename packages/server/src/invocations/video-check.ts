import { ApiError } from '../errors.ts';
import type { BlobStore } from '../storage/blob-store.ts';

/** Bytes of the start of a file `videoContainerOf` looks at (three MPEG-TS packets). */
export const VIDEO_SNIFF_BYTES = 3 * 188 + 1;

const ascii = (b: Uint8Array, start: number, end: number) => Buffer.from(b.subarray(start, end)).toString('latin1');

/** Top-level box types a QuickTime/MP4 file may start with (old `.mov` files start with `moov`, `mdat`, `wide`, …). */
const ISO_FIRST_BOXES = new Set(['ftyp', 'moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

/**
 * The video container the bytes start with, by its magic number (as ffprobe's probes do,
 * much reduced), or undefined: MP4/MOV (ISO base media), Matroska/WebM (EBML), AVI (RIFF),
 * MPEG transport stream (a sync byte every 188), MPEG program stream, FLV, ASF/WMV, Ogg,
 * YUV4MPEG2, and a raw H.264/H.265 stream (Annex B start code).
 */
export function videoContainerOf(head: Uint8Array): string | undefined {
  if (head.length >= 8 && ISO_FIRST_BOXES.has(ascii(head, 4, 8))) return ascii(head, 4, 8) === 'ftyp' ? 'mp4' : 'mov';
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'matroska';
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'AVI ') return 'avi';
  if (head.length >= 189 && head[0] === 0x47 && head[188] === 0x47 && (head.length < 377 || head[376] === 0x47)) return 'mpegts';
  if (head.length >= 4 && head[0] === 0 && head[1] === 0 && head[2] === 1 && (head[3] === 0xba || head[3] === 0xb3)) return 'mpeg';
  if (head.length >= 4 && ascii(head, 0, 3) === 'FLV' && head[3] === 1) return 'flv';
  if (head.length >= 8 && Buffer.from(head.subarray(0, 8)).equals(Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11]))) return 'asf';
  if (head.length >= 4 && ascii(head, 0, 4) === 'OggS') return 'ogg';
  if (head.length >= 9 && ascii(head, 0, 9) === 'YUV4MPEG2') return 'yuv4mpeg';
  // Annex B: a 4-byte start code, then a NAL header with its forbidden bit clear.
  if (head.length >= 5 && head[0] === 0 && head[1] === 0 && head[2] === 0 && head[3] === 1 && (head[4]! & 0x80) === 0) return 'h264';
  return undefined;
}

/** 400 `invalid_video`: the input video slot takes only a video container. */
export function invalidVideo(filename: string): ApiError {
  return new ApiError(
    400,
    'invalid_video',
    'Invalid Video',
    `${JSON.stringify(filename)} is not a video: its bytes start with no known video container (MP4/MOV, Matroska/WebM, AVI, MPEG-TS/PS, FLV, ASF, Ogg, Y4M, H.264). Nothing was stored.`,
    [{ field: 'input_video', message: 'not a video container' }],
  );
}

/** Throws `invalid_video` unless the stored content starts like a video container. */
export async function checkStoredVideo(files: BlobStore, sha256: string, size: number, filename: string): Promise<void> {
  if (size === 0) throw invalidVideo(filename);
  const stream = await files.open(sha256, { start: 0, end: Math.min(size, VIDEO_SNIFF_BYTES) - 1 });
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    total += (chunk as Buffer).length;
    if (total >= VIDEO_SNIFF_BYTES) break;
  }
  stream.destroy();
  if (!videoContainerOf(Buffer.concat(chunks))) throw invalidVideo(filename);
}
