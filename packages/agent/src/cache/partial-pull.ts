import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs/promises';
import { RollingSync, writeAllv, type ByteSink } from '@mm/protocol';
import { CacheError } from './cache-error.ts';
import { hashFileInto } from './file-hash.ts';

/**
 * One resumable download of a content-addressed file into `partial/<sha>`.
 *
 * `open()` re-hashes the bytes a previous attempt left on disk (so a resumed file is
 * verified as a whole, not trusted), `offset` tells where to continue, `sink` appends
 * and hashes what the stream brings, and `commit()` checks size and sha256 before the
 * file enters the cache. A mismatch deletes the partial file: it would never verify.
 */
export class PartialPull {
  private written = 0;
  private handle: fs.FileHandle | undefined;
  private pending: Promise<unknown> = Promise.resolve();
  private closed = false;
  private committed = false;
  /** Keeps the dirty part small, so the fsync at the end is short (see RollingSync). */
  private readonly rolling = new RollingSync();
  /** The first write the disk refused (ENOSPC, EIO…), if any. */
  private writeError: NodeJS.ErrnoException | undefined;

  private constructor(
    readonly sha256: string,
    readonly size: number,
    readonly partialPath: string,
    private readonly finalPath: string,
    /** Bytes already on disk when this attempt started. */
    readonly offset: number,
    private readonly hash: Hash,
    private readonly onClose: (committed: boolean) => void | Promise<void>,
  ) {}

  static async open(opts: { sha256: string; size: number; partialPath: string; finalPath: string; onClose: (committed: boolean) => void | Promise<void> }): Promise<PartialPull> {
    const hash = createHash('sha256');
    let offset = 0;
    const existing = await fs.stat(opts.partialPath).catch(() => undefined);
    if (existing && existing.size <= opts.size) {
      offset = await hashFileInto(opts.partialPath, hash);
    } else if (existing) {
      // Longer than the file can be: not a prefix of it. Start over.
      await fs.rm(opts.partialPath, { force: true });
    }
    return new PartialPull(opts.sha256, opts.size, opts.partialPath, opts.finalPath, offset, hash, opts.onClose);
  }

  /** Bytes on disk: the resumed prefix plus what this attempt wrote. */
  get bytesOnDisk(): number {
    return this.offset + this.written;
  }

  /** Where the stream's bytes go; pass it to a StreamReceiver. */
  readonly sink: ByteSink = {
    write: (chunk) => this.append([chunk]),
    writev: (chunks) => this.append(chunks),
    finish: async () => {
      await this.pending;
      await this.rolling.settle();
      if (this.handle) await this.handle.sync();
    },
    // The bytes written so far stay on disk for the next attempt.
    destroy: () => {
      void this.close();
    },
  };

  /** Appends a batch of chunks with one writev, hashing them while the write runs. */
  private append(chunks: Buffer[]): Promise<void> {
    const next = this.pending.then(async () => {
      if (this.closed) throw new Error('partial file already closed');
      let bytes = 0;
      for (const chunk of chunks) bytes += chunk.byteLength;
      if (this.offset + this.written + bytes > this.size) {
        throw new CacheError('size_mismatch', `more bytes than the expected ${this.size} for ${this.sha256}`);
      }
      const handle = (this.handle ??= await fs.open(this.partialPath, 'a'));
      // Hash while the write runs on the thread pool. If the write fails, this attempt
      // fails too, and the next one re-hashes what is on disk: the hash is never wrong.
      const writing = writeAllv(handle, chunks);
      for (const chunk of chunks) this.hash.update(chunk);
      try {
        await writing;
      } catch (err) {
        this.writeError ??= err as NodeJS.ErrnoException;
        throw err;
      }
      this.written += bytes;
      this.rolling.wrote(handle, bytes);
    });
    this.pending = next.catch(() => {});
    return next;
  }

  /** Verifies the whole file and moves it into the cache; on a mismatch the partial file is deleted. */
  async commit(): Promise<void> {
    await this.pending;
    try {
      if (this.bytesOnDisk !== this.size) {
        throw new CacheError('size_mismatch', `${this.sha256}: received ${this.bytesOnDisk} bytes, expected ${this.size}`);
      }
      const actual = this.hash.copy().digest('hex');
      if (actual !== this.sha256) {
        throw new CacheError('checksum_mismatch', `sha256 mismatch: expected ${this.sha256}, received content hashes to ${actual}`);
      }
      await this.rolling.settle();
      if (this.handle) await this.handle.sync();
      await this.closeHandle();
      if (this.size === 0) await fs.writeFile(this.partialPath, new Uint8Array());
      await fs.chmod(this.partialPath, 0o444);
      await fs.rename(this.partialPath, this.finalPath);
      this.committed = true;
    } catch (err) {
      if (err instanceof CacheError) await fs.rm(this.partialPath, { force: true });
      throw err;
    } finally {
      await this.close();
    }
  }

  /** The write error that ended this attempt, when the board's own disk refused the bytes. */
  get writeFailure(): NodeJS.ErrnoException | undefined {
    return this.writeError;
  }

  /**
   * Ends this attempt and removes its partial file: for a write the disk refused, where a
   * kept partial would only keep the disk full for a resume that cannot succeed.
   */
  async discard(): Promise<void> {
    await this.close();
    await fs.rm(this.partialPath, { force: true });
  }

  /** Ends this attempt, keeping what is on disk (the link dropped, the op was cancelled…). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pending;
    await this.closeHandle();
    await this.onClose(this.committed);
  }

  private async closeHandle(): Promise<void> {
    await this.rolling.settle();
    const h = this.handle;
    this.handle = undefined;
    await h?.close().catch(() => {});
  }
}
