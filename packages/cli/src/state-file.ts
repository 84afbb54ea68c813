import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * A small JSON map on disk (hash cache, resume state). Reads tolerate a missing or broken
 * file (it is only a cache); writes are atomic (temp + rename) and serialised in-process.
 */
const open = new Map<string, StateFile<unknown>>();

/** The one StateFile of a path in this process (so concurrent writers share its data). */
export function stateFile<V>(file: string): StateFile<V> {
  let f = open.get(file);
  if (!f) {
    f = new StateFile<unknown>(file);
    open.set(file, f);
  }
  return f as StateFile<V>;
}

export class StateFile<V> {
  private data: Record<string, V> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  private async load(): Promise<Record<string, V>> {
    if (this.data) return this.data;
    try {
      const parsed = JSON.parse(await fs.readFile(this.file, 'utf8')) as unknown;
      this.data = parsed && typeof parsed === 'object' ? (parsed as Record<string, V>) : {};
    } catch {
      this.data = {};
    }
    return this.data;
  }

  async get(key: string): Promise<V | undefined> {
    return (await this.load())[key];
  }

  async set(key: string, value: V | undefined): Promise<void> {
    const data = await this.load();
    if (value === undefined) delete data[key];
    else data[key] = value;
    const text = JSON.stringify(data);
    const write = this.writing.then(async () => {
      await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const temp = `${this.file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      await fs.writeFile(temp, text, { mode: 0o600 });
      await fs.rename(temp, this.file);
    });
    this.writing = write.catch(() => {});
    await write;
  }
}
