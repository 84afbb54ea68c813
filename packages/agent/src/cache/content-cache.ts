import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import { CacheError } from './cache-error.ts';
import { READ_CHUNK_BYTES, sha256OfFile } from './file-hash.ts';
import { PartialPull } from './partial-pull.ts';

const SHA256_NAME = /^[0-9a-f]{64}$/;

interface Entry {
  sha256: string;
  file: string;
  size: number;
  lastUsedMs: number;
  partial: boolean;
  ino: number;
  nlink: number;
}

/**
 * The agent's content-addressed store: `<dir>/<sha256>` holds complete, verified files
 * (read-only), `<dir>/partial/<sha256>` the bytes of unfinished pulls.
 *
 * Least recently used goes first when the total (complete and partial) exceeds the cap;
 * "use" is recorded in the file's atime, set explicitly with utimes so it works whatever
 * the mount's atime policy. Content a running operation needs, or an unacknowledged
 * output, is pinned and never evicted. Files under `invocations/` are hard links to cache
 * files; evicting content removes those links too, or the disk space would stay taken.
 */
export class ContentCache {
  readonly partialDir: string;
  private readonly pins = new Map<string, number>();
  private readonly pullLocks = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    /** Folder of per-invocation views (hard links) whose links eviction must remove. */
    private readonly linkedViewsDir: string,
    private readonly log: Logger,
  ) {
    this.partialDir = path.join(dir, 'partial');
  }

  async init(): Promise<void> {
    await fsp.mkdir(this.partialDir, { recursive: true });
  }

  pathOf(sha256: string): string {
    if (!SHA256_NAME.test(sha256)) throw new CacheError('invalid_sha256', `not a sha256: ${sha256}`);
    return path.join(this.dir, sha256);
  }

  async has(sha256: string): Promise<boolean> {
    const st = await fsp.stat(this.pathOf(sha256)).catch(() => undefined);
    return st?.isFile() ?? false;
  }

  async sizeOf(sha256: string): Promise<number | undefined> {
    const st = await fsp.stat(this.pathOf(sha256)).catch(() => undefined);
    return st?.isFile() ? st.size : undefined;
  }

  /** The sha256 of every complete file (what `hello.cached` reports). */
  async list(): Promise<string[]> {
    return (await this.entries()).filter((e) => !e.partial).map((e) => e.sha256);
  }

  /** Bytes held, complete and partial. */
  async totalBytes(): Promise<number> {
    return (await this.entries()).reduce((sum, e) => sum + e.size, 0);
  }

  /** Records a use of the content for the LRU order. */
  async touch(sha256: string): Promise<void> {
    const now = new Date();
    const file = this.pathOf(sha256);
    const st = await fsp.stat(file).catch(() => undefined);
    if (st) await fsp.utimes(file, now, st.mtime).catch(() => {});
  }

  /** Protects content from eviction until the returned release function is called. */
  pin(sha256s: Iterable<string>): () => void {
    const list = [...sha256s];
    for (const s of list) this.pins.set(s, (this.pins.get(s) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of list) {
        const n = (this.pins.get(s) ?? 1) - 1;
        if (n <= 0) this.pins.delete(s);
        else this.pins.set(s, n);
      }
    };
  }

  /**
   * Starts (or resumes) the download of `sha256`. One pull per content at a time: a second
   * caller waits for the first to close its PartialPull, then finds the content complete
   * or resumes from what the first left.
   */
  async beginPull(sha256: string, size: number): Promise<PartialPull> {
    const finalPath = this.pathOf(sha256);
    for (;;) {
      const held = this.pullLocks.get(sha256);
      if (!held) break;
      await held;
    }
    let release!: () => void;
    this.pullLocks.set(sha256, new Promise<void>((resolve) => (release = resolve)));
    const unlock = () => {
      this.pullLocks.delete(sha256);
      release();
    };
    try {
      const pull = await PartialPull.open({ sha256, size, partialPath: path.join(this.partialDir, sha256), finalPath, onClose: unlock });
      await this.ensureSpace(size - pull.offset, sha256);
      return pull;
    } catch (err) {
      unlock();
      throw err;
    }
  }

  /** Moves a finished file (e.g. a runner's output video) into the cache; the source is gone afterwards. */
  async importFile(source: string): Promise<{ sha256: string; size: number }> {
    const { sha256, size } = await sha256OfFile(source);
    const target = this.pathOf(sha256);
    if (await this.has(sha256)) {
      await fsp.rm(source, { force: true });
    } else {
      await fsp.chmod(source, 0o444);
      try {
        await fsp.rename(source, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // The source is on another file system: copy, then drop it.
        const tmp = path.join(this.partialDir, `${sha256}.import-${process.pid}`);
        await fsp.copyFile(source, tmp);
        await fsp.chmod(tmp, 0o444);
        await fsp.rename(tmp, target);
        await fsp.rm(source, { force: true });
      }
    }
    await this.touch(sha256);
    await this.ensureSpace(0, sha256);
    return { sha256, size };
  }

  /** A read stream of complete content from `offset` (for `stream.pull` of produced files). */
  openRead(sha256: string, offset: number): fs.ReadStream {
    return fs.createReadStream(this.pathOf(sha256), { start: offset, highWaterMark: READ_CHUNK_BYTES });
  }

  /**
   * Evicts least recently used, unpinned content until `incoming` more bytes fit under the
   * cap. `keep` (the content being added) is never chosen. If pinned content alone exceeds
   * the cap, the cache goes over it rather than failing the operation, and says so.
   */
  async ensureSpace(incoming: number, keep?: string): Promise<void> {
    const entries = await this.entries();
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    if (total + incoming <= this.maxBytes) return;
    const candidates = entries
      .filter((e) => e.sha256 !== keep && !this.pins.has(e.sha256) && !this.pullLocks.has(e.sha256))
      .sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    for (const e of candidates) {
      if (total + incoming <= this.maxBytes) break;
      await this.evict(e);
      total -= e.size;
    }
    if (total + incoming > this.maxBytes) {
      this.log.warn({ total_bytes: total, incoming_bytes: incoming, max_bytes: this.maxBytes }, 'cache is over its size cap: the rest is in use');
    }
  }

  private async evict(e: Entry): Promise<void> {
    this.log.info({ sha256: e.sha256, size: e.size, partial: e.partial }, 'evicting from the cache');
    if (!e.partial && e.nlink > 1) await this.removeLinkedViews(e.ino);
    await fsp.rm(e.file, { force: true });
  }

  /** Removes the invocation-folder hard links that share an evicted file's inode. */
  private async removeLinkedViews(ino: number): Promise<void> {
    const folders = await fsp.readdir(this.linkedViewsDir).catch(() => [] as string[]);
    for (const folder of folders) {
      const dir = path.join(this.linkedViewsDir, folder);
      const names = await fsp.readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        const file = path.join(dir, name);
        const st = await fsp.lstat(file).catch(() => undefined);
        if (st?.ino === ino) await fsp.rm(file, { force: true });
      }
    }
  }

  private async entries(): Promise<Entry[]> {
    const out: Entry[] = [];
    for (const [folder, partial] of [
      [this.dir, false],
      [this.partialDir, true],
    ] as const) {
      const names = await fsp.readdir(folder).catch(() => [] as string[]);
      for (const name of names) {
        if (!SHA256_NAME.test(name)) continue;
        const file = path.join(folder, name);
        const st = await fsp.stat(file).catch(() => undefined);
        if (!st?.isFile()) continue;
        out.push({ sha256: name, file, size: st.size, lastUsedMs: Math.max(st.atimeMs, st.mtimeMs), partial, ino: st.ino, nlink: st.nlink });
      }
    }
    return out;
  }
}
