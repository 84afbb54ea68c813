import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';

/** Read size for hashing and serving files: 1 MiB chunks are markedly faster than the 64 KiB default. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** Feeds a whole file into `hash`; resolves to the number of bytes read. */
export async function hashFileInto(file: string, hash: Hash): Promise<number> {
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: READ_CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return bytes;
}

export async function sha256OfFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const size = await hashFileInto(file, hash);
  return { sha256: hash.digest('hex'), size };
}
