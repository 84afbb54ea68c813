import fs from 'node:fs/promises';
import type { ChunkReader } from './streams.ts';

/**
 * A ChunkReader over a file from `start`: each read goes from the file (the page cache)
 * straight into the sender's frame buffer. Rejects (ENOENT…) when the file cannot be
 * opened; once open it keeps reading the same bytes even if the file is removed.
 */
export async function openFileReader(file: string, start = 0): Promise<ChunkReader> {
  const handle = await fs.open(file, 'r');
  let position = start;
  return {
    read: async (into, offset, length) => {
      const { bytesRead } = await handle.read(into, offset, length, position);
      position += bytesRead;
      return bytesRead;
    },
    close: () => handle.close(),
  };
}

/**
 * Writes `chunks` in order at the file's current position with as few `writev` calls as
 * the kernel allows (one, unless it writes short), no copy into one buffer.
 */
export async function writeAllv(handle: fs.FileHandle, chunks: readonly Buffer[]): Promise<void> {
  let rest = chunks;
  while (rest.length > 0) {
    let written = (await handle.writev(rest as Buffer[])).bytesWritten;
    const next: Buffer[] = [];
    for (const chunk of rest) {
      if (written >= chunk.byteLength) {
        written -= chunk.byteLength;
        continue;
      }
      next.push(written > 0 ? chunk.subarray(written) : chunk);
      written = 0;
    }
    rest = next;
  }
}
