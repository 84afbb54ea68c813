import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { hashFdInWorker } from './hash-worker.ts';

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

/**
 * Copies everything readable from `source` (an open handle, read from its start) into
 * `target` (an open handle), hashing the very bytes it writes: what the hash names is what
 * was copied, even if someone changes the source meanwhile. Neither handle is closed.
 */
export function copyAndHash(source: FileHandle, target: FileHandle): Promise<{ sha256: string; size: number }> {
  return hashChunks(source, async (chunk) => {
    let at = 0;
    while (at < chunk.byteLength) at += (await target.write(chunk, at, chunk.byteLength - at)).bytesWritten;
  });
}

/** Files at least this large are hashed on a worker thread (starting one costs a few ms). */
export const WORKER_HASH_MIN_BYTES = 16 * 1024 * 1024;

/**
 * The sha256 and size of everything readable from `source` (an open handle, read from its
 * start). `size` (what a stat said) picks where: large files on a worker thread, so the
 * event loop is free meanwhile, small ones here.
 */
export function hashHandle(source: FileHandle, size = 0): Promise<{ sha256: string; size: number }> {
  if (size >= WORKER_HASH_MIN_BYTES) return hashFdInWorker(source.fd, READ_CHUNK_BYTES);
  return hashChunks(source);
}

/** Reads `source` from its start in READ_CHUNK_BYTES pieces, hashing each and handing it to `each` (same buffer, reused). */
async function hashChunks(source: FileHandle, each?: (chunk: Buffer) => Promise<void>): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let size = 0;
  for (;;) {
    const { bytesRead } = await source.read(buf, 0, buf.byteLength, size);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    hash.update(chunk);
    await each?.(chunk);
    size += bytesRead;
  }
  return { sha256: hash.digest('hex'), size };
}
