import { KeyedMutex } from './keyed-mutex.ts';

/**
 * What both blob stores (fs and S3) keep in memory about content they hold: a lock per
 * sha256, under which content is put into place, pinned or removed, and the pins of writes
 * whose database record is not written yet (a pinned content is never removed).
 */
export class BlobPins {
  private readonly locks = new KeyedMutex();
  /** Ingested content not yet recorded in the database (count per sha256). */
  private readonly pins = new Map<string, number>();

  /** Runs `fn` under the content's lock. */
  locked<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(sha256, fn);
  }

  /** Adds a pin; call under the content's lock, right after the content was put into place. */
  add(sha256: string): void {
    this.pins.set(sha256, (this.pins.get(sha256) ?? 0) + 1);
  }

  /** Takes one pin off. */
  release(sha256: string): void {
    const n = this.pins.get(sha256) ?? 0;
    if (n <= 1) this.pins.delete(sha256);
    else this.pins.set(sha256, n - 1);
  }

  has(sha256: string): boolean {
    return this.pins.has(sha256);
  }

  /**
   * The content's bytes go (`deleteBytes`) when it is not pinned and `decide` confirms that
   * nothing uses it: `decide` drops the database record in a transaction holding the row
   * lock and calls the `removeBytes` it is given before it commits (a caller with no lock to
   * hold may just answer true: the bytes go then). Under the content's lock, so no write of
   * the same bytes in this process can put a fresh copy into place between the check and
   * the removal. Resolves to whether the content went.
   */
  removeIfUnused(sha256: string, deleteBytes: () => Promise<void>, decide: (removeBytes: () => Promise<void>) => Promise<boolean>): Promise<boolean> {
    return this.locked(sha256, async () => {
      if (this.has(sha256)) return false;
      let removed = false;
      const removeBytes = async () => {
        await deleteBytes();
        removed = true;
      };
      const gone = await decide(removeBytes);
      if (gone && !removed) await removeBytes();
      return gone;
    });
  }
}
