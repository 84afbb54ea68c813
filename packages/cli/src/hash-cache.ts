import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cacheDir } from './settings.ts';
import { type StateFile, stateFile } from './state-file.ts';

interface CachedHash {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

export interface HashedFile {
  path: string;
  size: number;
  sha256: string;
  /** Whether the sha256 came from the cache (no byte read). */
  cached: boolean;
}

const READ_CHUNK = 1024 * 1024;

/**
 * sha256 of local files, cached by absolute path with size, mtime and inode: a file that
 * has not changed is not read again (a 5 GB weights file hashes once).
 */
export class HashCache {
  private readonly store: StateFile<CachedHash>;

  constructor(dir = cacheDir()) {
    this.store = stateFile<CachedHash>(path.join(dir, 'hashes.json'));
  }

  async hash(file: string, onBytes?: (n: number) => void, signal?: AbortSignal): Promise<HashedFile> {
    const abs = path.resolve(file);
    const st = await fs.promises.stat(abs);
    const key = abs;
    const hit = await this.store.get(key);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs && hit.ino === st.ino) {
      onBytes?.(st.size);
      return { path: abs, size: st.size, sha256: hit.sha256, cached: true };
    }
    const hash = createHash('sha256');
    const stream = fs.createReadStream(abs, { highWaterMark: READ_CHUNK, ...(signal ? { signal } : {}) });
    for await (const chunk of stream) {
      hash.update(chunk as Buffer);
      onBytes?.((chunk as Buffer).length);
    }
    const sha256 = hash.digest('hex');
    // A file changed while it was read is not cached (its stat no longer matches).
    const after = await fs.promises.stat(abs);
    if (after.size === st.size && after.mtimeMs === st.mtimeMs) {
      await this.store.set(key, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, sha256 });
    }
    return { path: abs, size: st.size, sha256, cached: false };
  }
}
