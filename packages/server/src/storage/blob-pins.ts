import { KeyedMutex } from './keyed-mutex.ts';

/**
 * Pins every replica sees (storage/content-pins.ts, the `content_pins` table). `add` records a
 * pin, waiting while a collection of the same content is deciding (so a collection that
 * found no pin has removed the bytes before the pin lands, never after); `remove` ends it.
 */
export interface PinLedger {
  add(sha256: string): Promise<number>;
  /** Never rejects: a pin that could not be removed is retried later (or ends with its replica). */
  remove(id: number): Promise<void>;
}

/**
 * What both blob stores (fs and S3) keep about content they hold: a lock per sha256, under
 * which content is put into place, pinned or removed, and the pins of writes whose database
 * record is not written yet (a pinned content is never removed).
 *
 * The pins are counted in this process's memory; with several replicas (a `PinLedger`, see
 * `useLedger`) each is also a row every replica's collection honours. A pin is taken BEFORE
 * the bytes are put into place (`pinned`), so there is no moment at which another replica
 * could find them in place and unpinned.
 */
export class BlobPins {
  private readonly locks = new KeyedMutex();
  /** Pins per sha256: the ledger's ids (undefined without a ledger), one entry per pin. */
  private readonly pins = new Map<string, Array<number | undefined>>();
  private ledger: PinLedger | undefined;

  /** Several replicas: pins are recorded where all of them look. */
  useLedger(ledger: PinLedger): void {
    this.ledger = ledger;
  }

  /** Runs `fn` under the content's lock. */
  locked<T>(sha256: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(sha256, fn);
  }

  /**
   * Pins the content, then runs `place` (which puts its bytes into place, or checks they are
   * there) under the content's lock. When `place` throws or answers false the pin is taken off
   * again. Resolves to what `place` answered.
   */
  pinned(sha256: string, place: () => Promise<boolean | void>): Promise<boolean> {
    return this.locked(sha256, async () => {
      await this.add(sha256);
      let placed: boolean | void;
      try {
        placed = await place();
      } catch (err) {
        await this.release(sha256);
        throw err;
      }
      if (placed === false) {
        await this.release(sha256);
        return false;
      }
      return true;
    });
  }

  /** Adds a pin (recorded in the ledger first). Prefer `pinned`, which orders it before the bytes. */
  async add(sha256: string): Promise<void> {
    const id = this.ledger ? await this.ledger.add(sha256) : undefined;
    const list = this.pins.get(sha256);
    if (list) list.push(id);
    else this.pins.set(sha256, [id]);
  }

  /** Takes one pin off (here at once, from the ledger once its row is gone). Never rejects. */
  async release(sha256: string): Promise<void> {
    const list = this.pins.get(sha256);
    if (!list) return;
    const id = list.pop();
    if (list.length === 0) this.pins.delete(sha256);
    if (id !== undefined) await this.ledger?.remove(id);
  }

  has(sha256: string): boolean {
    return this.pins.has(sha256);
  }

  /**
   * The content's bytes go (`deleteBytes`) when it is not pinned here and `decide` confirms that
   * nothing uses it (nor a pin of another replica, with several): `decide` drops the database
   * record in a transaction holding the row lock and calls the `removeBytes` it is given before
   * it commits (a caller with no lock to hold may just answer true: the bytes go then). Under
   * the content's lock, so no write of the same bytes in this process can put a fresh copy
   * into place between the check and the removal. Resolves to whether the content went.
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
