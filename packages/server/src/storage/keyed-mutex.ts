/**
 * One-at-a-time sections per key (here: per sha256), within this process: it orders "move
 * new content into place" against "remove unused content" of this process. Other replicas
 * sharing the store are kept in order by the database (see BlobStore.removeIfUnused).
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    try {
      return await section();
    } finally {
      release();
      // Forget the key once nobody queued behind this section.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
