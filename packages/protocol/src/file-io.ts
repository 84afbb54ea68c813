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
    readAt: async (into, offset, length, at) => (await handle.read(into, offset, length, at)).bytesRead,
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

/** How much a RollingSync lets pile up unsynced before it starts the next datasync. */
export const ROLLING_SYNC_BYTES = 32 * 1024 * 1024;

/**
 * Syncs a file while it is being written, so that the fsync its writer must do before the
 * file counts (verified content is renamed into place only once it is durable) finds little
 * left to flush: without it a 256 MiB file received in 5 s is all dirty at the end and its
 * fsync adds half a second after the last byte. One datasync at a time, started on the
 * thread pool once ROLLING_SYNC_BYTES were written since the last one began; the writes go
 * on meanwhile. Its errors are left to the final fsync, which reports any.
 */
export class RollingSync {
  private unsynced = 0;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly everyBytes = ROLLING_SYNC_BYTES) {}

  /** Call after `bytes` more were written through `handle`. */
  wrote(handle: fs.FileHandle, bytes: number): void {
    this.unsynced += bytes;
    if (this.unsynced < this.everyBytes || this.inFlight) return;
    this.unsynced = 0;
    this.inFlight = handle
      .datasync()
      .catch(() => {})
      .finally(() => {
        this.inFlight = undefined;
      });
  }

  /** Waits for a datasync still running (before the final fsync or closing the handle). */
  async settle(): Promise<void> {
    await this.inFlight;
  }
}
