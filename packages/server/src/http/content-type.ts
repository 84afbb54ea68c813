import fsp from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore } from '../storage/blob-store.ts';

export const OCTET_STREAM = 'application/octet-stream';

/** Bytes `sniffContentType` needs from the start of a file. */
export const SNIFF_BYTES = 16;

/**
 * Types by extension for content the magic numbers below do not recognise. Deliberately
 * no HTML, SVG or script types: uploaded files must never render as a page.
 */
const BY_EXTENSION: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.avi': 'video/x-msvideo',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.xml': 'application/xml',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tgz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.subarray(start, end)).toString('latin1');
}

/** The type the content's magic number names, or undefined. */
function typeFromMagic(head: Uint8Array): string | undefined {
  // ISO base media file (MP4): a box of type `ftyp` first.
  if (head.length >= 8 && ascii(head, 4, 8) === 'ftyp') return 'video/mp4';
  // AVI: a RIFF container of form type `AVI `.
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'AVI ') return 'video/x-msvideo';
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'application/zip';
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'application/gzip';
  if (head.length >= 8 && ascii(head, 0, 8) === '\x89PNG\r\n\x1a\n') return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  return undefined;
}

/**
 * The Content-Type of a file: from its first bytes when they are recognisable (MP4, AVI,
 * a few containers), else from its extension, else application/octet-stream.
 */
export function sniffContentType(head: Uint8Array, filename: string): string {
  const magic = typeFromMagic(head);
  if (magic) return magic;
  return BY_EXTENSION[path.extname(filename).toLowerCase()] ?? OCTET_STREAM;
}

/** The type of stored content, from its first bytes and the filename. */
export async function sniffBlobContentType(blobs: BlobStore, sha256: string, filename: string): Promise<string> {
  const stream = await blobs.open(sha256, { start: 0, end: SNIFF_BYTES - 1 });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return sniffContentType(Buffer.concat(chunks), filename);
}

export async function sniffFileContentType(file: string, filename: string): Promise<string> {
  const handle = await fsp.open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return sniffContentType(head.subarray(0, bytesRead), filename);
  } finally {
    await handle.close();
  }
}

/** A results-folder video's type by extension alone (listing does not open every file). */
export function videoTypeFromExtension(filename: string): string {
  return path.extname(filename).toLowerCase() === '.avi' ? 'video/x-msvideo' : 'video/mp4';
}
