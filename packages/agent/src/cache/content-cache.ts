import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import type { Logger } from '../logger.ts';
import { CacheError } from './cache-error.ts';
import { readViewSources } from './view-sources.ts';
import { copyAndHash, hashHandle, READ_CHUNK_BYTES, sha256OfFile } from './file-hash.ts';
import { PartialPull } from './partial-pull.ts';

const SHA256_NAME = /^[0-9a-f]{64}$/;

/** What a complete file looked like when its sha256 was last checked. */
interface Verified {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

const sameFile = (st: fs.Stats, v: Verified) => st.size === v.size && st.mtimeMs === v.mtimeMs && st.ctimeMs === v.ctimeMs && st.ino === v.ino;
const verifiedOf = (st: fs.Stats): Verified => ({ size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino });

interface Entry {
  sha256: string;
  file: string;
  size: number;
  lastUsedMs: number;
  partial: boolean;
  ino: number;
}

/**
 * The agent's content-addressed store: `<dir>/<sha256>` holds complete, verified files
 * (read-only), `<dir>/partial/<sha256>` the bytes of unfinished pulls.
 *
 * Least recently used goes first when the total (complete and partial) exceeds the cap;
 * "use" is recorded in the file's atime, set explicitly with utimes so it works whatever
 * the mount's atime policy. Content a running operation needs, or an unacknowledged
 * output, is pinned and never evicted. Files under `invocations/` are hard links to cache
 * files (`linkInto`; copies where the file system refuses links); evicting content removes
 * those too, or the disk space would stay taken.
 *
 * A complete file is trusted only as it was when its sha256 was last checked: `has()`
 * re-hashes an entry whose size, mtime, ctime or inode changed since (a process that
 * wrote to it, or chmodded it, through the cache or a link), and drops it when it no longer
 * matches its name. The checked state is kept in `verified.json`, so a restart does not
 * re-hash everything. What the cache does itself to an entry's inode (a link made or
 * removed, a use recorded in its atime) moves its ctime too: those changes and the checks
 * run one at a time (`serialized`), and a change renews the record of an entry that was
 * verified just before it.
 */
export class ContentCache {
  readonly partialDir: string;
  private readonly pins = new Map<string, number>();
  private readonly pullLocks = new Map<string, Promise<void>>();
  private readonly verified = new Map<string, Verified>();
  private readonly manifestPath: string;
  private saving: Promise<void> = Promise.resolve();
  /** The tail of the checks of entries and changes to their names and times, run one at a time (`serialized`). */
  private queue: Promise<unknown> = Promise.resolve();
  private linkRefusalLogged = false;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    /** Folder of per-invocation views (hard links) whose links eviction must remove. */
    private readonly linkedViewsDir: string,
    private readonly log: Logger,
  ) {
    this.partialDir = path.join(dir, 'partial');
    this.manifestPath = path.join(dir, 'verified.json');
  }

  async init(): Promise<void> {
    await fsp.mkdir(this.partialDir, { recursive: true });
    const text = await fsp.readFile(this.manifestPath, 'utf8').catch(() => undefined);
    if (!text) return;
    try {
      const parsed = JSON.parse(text) as Record<string, Verified>;
      for (const [sha, v] of Object.entries(parsed)) {
        if (SHA256_NAME.test(sha) && [v.size, v.mtimeMs, v.ctimeMs, v.ino].every((n) => typeof n === 'number')) this.verified.set(sha, v);
      }
    } catch {
      // An unreadable record only costs a re-hash of each entry at its next use.
      this.log.warn({ file: this.manifestPath }, 'cache record unreadable: entries will be re-verified');
    }
  }

  pathOf(sha256: string): string {
    if (!SHA256_NAME.test(sha256)) throw new CacheError('invalid_sha256', `not a sha256: ${sha256}`);
    return path.join(this.dir, sha256);
  }

  /**
   * Whether complete, verified content is held. An entry changed since its last check is
   * hashed again first; one that no longer matches its sha256 is removed (and so pulled again).
   */
  async has(sha256: string): Promise<boolean> {
    const file = this.pathOf(sha256);
    // Not while the cache makes or removes a link, or records a use: those move the ctime
    // before the record is renewed, which is no change to hash the entry again for.
    return this.serialized(() => this.verify(sha256, file));
  }

  /** `has()` inside `serialized` (for the changes that run there themselves). */
  private async verify(sha256: string, file: string): Promise<boolean> {
    const st = await fsp.lstat(file).catch(() => undefined);
    if (!st) return false;
    const known = this.verified.get(sha256);
    if (st.isFile() && known && sameFile(st, known)) return true;
    if (st.isFile()) {
      this.log.info({ sha256, size: st.size }, known ? 'cache entry changed since it was verified: re-verifying' : 're-verifying a cache entry');
      const actual = await sha256OfFile(file).catch(() => undefined);
      const after = await fsp.lstat(file).catch(() => undefined);
      if (actual?.sha256 === sha256 && after && sameFile(after, verifiedOf(st))) {
        // Read-only again if it was made writable (through a link, by a runner of the agent's user).
        const kept = (after.mode & 0o222) === 0 ? after : await this.makeReadOnly(file, after);
        if (kept) {
          await this.record(sha256, kept);
          return true;
        }
      }
    }
    this.log.warn({ sha256 }, 'cache entry no longer matches its sha256: removing it');
    await fsp.rm(file, { force: true });
    await this.record(sha256, undefined);
    return false;
  }

  async sizeOf(sha256: string): Promise<number | undefined> {
    const st = await fsp.lstat(this.pathOf(sha256)).catch(() => undefined);
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
    await this.serialized(async () => {
      const st = await fsp.lstat(file).catch(() => undefined);
      if (!st?.isFile()) return;
      // utimes moves the ctime: a verified entry stays verified (it was unchanged just before).
      const before = await this.verifiedNow(sha256);
      await fsp.utimes(file, now, st.mtime).catch(() => {});
      await this.renew(sha256, before, 2);
    });
  }

  /**
   * Makes `target` (a file of an invocation folder) a second name of the cache file of
   * `sha256`: a hard link, read-only as the entry is, put in place atomically (a link under a
   * temporary name in the same folder, then a rename over `target`). Nothing is copied. The
   * entry must still be as it was verified (size, mtime, ctime, inode, read-only), or it is
   * hashed again first, and dropped when it no longer matches its sha256 (CacheError
   * `cache_entry_changed`: it is pulled again by the next transfer). Making the link moves
   * the inode's ctime, so the record is renewed after it (if size and mtime are still the
   * same); so is that of `replacing`, the entry `target` was a view of, whose link the rename
   * removes. `target` already a name of the entry is left as it is.
   * Returns false, with `target` untouched, when the file system refuses the link (EXDEV: the
   * invocations folder on another file system; EPERM, EMLINK, …): the caller copies instead.
   */
  async linkInto(sha256: string, target: string, replacing?: string): Promise<boolean> {
    const file = this.pathOf(sha256);
    return this.serialized(async () => {
      let st = await this.verifiedNow(sha256);
      if (!st) {
        const exists = await fsp.lstat(file).then(
          () => true,
          () => false,
        );
        if (!exists) throw new CacheError('not_cached', `${sha256} is not in the cache`);
        if (!(await this.verify(sha256, file))) {
          throw new CacheError('cache_entry_changed', `cache entry ${sha256} changed on disk since it was verified; it is pulled again at the next transfer`);
        }
        st = await this.verifiedNow(sha256);
      }
      if (st && (st.mode & 0o222) !== 0) {
        // Verified while writable (made so through a link): its bytes hold, its mode is put back.
        const readOnly = await this.makeReadOnly(file, st);
        if (readOnly) await this.record(sha256, readOnly);
        st = readOnly;
      }
      if (!st) throw new CacheError('cache_entry_changed', `cache entry ${sha256} is changing on disk; it is verified again at the next transfer`);
      const have = await fsp.lstat(target).catch(() => undefined);
      if (have?.isFile() && have.ino === st.ino && have.dev === st.dev) return true;
      const tmp = path.join(path.dirname(target), `.tmp-${randomBytes(6).toString('hex')}`);
      try {
        await fsp.link(file, tmp);
      } catch (err) {
        if (!this.linkRefusalLogged) {
          this.linkRefusalLogged = true;
          this.log.warn({ err, folder: path.dirname(target) }, 'cannot hard-link cache files into the invocation folder: copying them instead');
        }
        return false;
      }
      // The entry `target` links to now, if it is `replacing` as verified: the rename removes that link.
      const oldEntry = replacing !== undefined && replacing !== sha256 && SHA256_NAME.test(replacing) && have?.isFile() ? replacing : undefined;
      const oldBefore = oldEntry ? await this.verifiedNow(oldEntry) : undefined;
      const replacesLink = oldBefore !== undefined && oldBefore.ino === have?.ino && oldBefore.dev === have.dev;
      try {
        await fsp.rename(tmp, target);
      } finally {
        // Left over if the rename failed (or found `target` already a link to the same file, and did nothing).
        await fsp.rm(tmp, { force: true }).catch(() => {});
        await this.renew(sha256, st);
        if (oldEntry && replacesLink) await this.renew(oldEntry, oldBefore);
      }
      return true;
    });
  }

  /**
   * Removes `file`, a view in an invocation folder (a link or a copy; a leftover of an earlier
   * version is a folder at worst). When it was a link to the entry `sha256` (what the folder's
   * record says it showed), removing that name moved the entry's ctime: the record is renewed,
   * so the entry's next use does not hash it again.
   */
  async removeView(file: string, sha256?: string): Promise<void> {
    const entry = sha256 !== undefined && SHA256_NAME.test(sha256) ? sha256 : undefined;
    await this.serialized(async () => {
      const before = entry ? await this.verifiedNow(entry) : undefined;
      await fsp.rm(file, { recursive: true, force: true });
      if (entry) await this.renew(entry, before);
    });
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
    const unlock = async (committed = false) => {
      try {
        // A committed pull hashed what it wrote: the new entry is verified as it is now
        // (in memory at once; saving the record runs on).
        if (committed) void this.record(sha256, await fsp.lstat(finalPath));
      } catch {
        // Not recorded: it is re-verified at its next use.
      } finally {
        this.pullLocks.delete(sha256);
        release();
      }
    };
    try {
      const pull = await PartialPull.open({ sha256, size, partialPath: path.join(this.partialDir, sha256), finalPath, onClose: unlock });
      await this.ensureSpace(size - pull.offset, sha256);
      return pull;
    } catch (err) {
      await unlock();
      throw err;
    }
  }

  /**
   * Takes a finished file (a runner's output video) into the cache. `source` is in a folder
   * another process controls: it must be a regular file itself (a symlink is refused, never
   * followed), it is opened once and hashed and copied from that handle, and nothing is done
   * to the path afterwards but unlinking it. The cache's copy is the agent's own file.
   * `onOpened` is given that handle (a regular file, `size` bytes when opened) before any
   * hashing: the early offer of an output video reads from it meanwhile (OperationManager).
   */
  async importFile(
    source: string,
    opts: { onOpened?: (handle: fsp.FileHandle, size: number) => void | Promise<void> } = {},
  ): Promise<{ sha256: string; size: number }> {
    let handle: fsp.FileHandle;
    try {
      // O_NONBLOCK: a FIFO swapped in for the file must not hang the open.
      handle = await fsp.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new CacheError('not_a_regular_file', `${path.basename(source)} is a symbolic link, not a file`);
      throw err;
    }
    const tmp = path.join(this.partialDir, `import-${process.pid}-${randomBytes(6).toString('hex')}`);
    let result: { sha256: string; size: number };
    try {
      const opened = await handle.stat();
      if (!opened.isFile()) throw new CacheError('not_a_regular_file', `${path.basename(source)} is not a regular file`);
      await opts.onOpened?.(handle, opened.size);
      // A second name for the same file instead of a copy where that is safe: a 1 GiB output
      // is then read once (to hash it) instead of read, written again and synced twice.
      const linked = await this.adoptByLink(source, tmp);
      if (linked) result = linked;
      else {
        const out = await fsp.open(tmp, 'wx', 0o600);
        try {
          result = await copyAndHash(handle, out);
          await out.sync();
        } finally {
          await out.close();
        }
      }
      if (await this.has(result.sha256)) {
        await fsp.rm(tmp, { force: true });
      } else {
        await fsp.chmod(tmp, 0o444);
        await fsp.rename(tmp, this.pathOf(result.sha256));
        const st = await fsp.lstat(this.pathOf(result.sha256));
        await this.record(result.sha256, st);
      }
    } catch (err) {
      await fsp.rm(tmp, { force: true }).catch(() => {});
      throw err;
    } finally {
      await handle.close();
    }
    // Unlinking removes the name only, whatever it points at now.
    await fsp.unlink(source).catch(() => {});
    await this.touch(result.sha256);
    await this.ensureSpace(0, result.sha256);
    return result;
  }

  /**
   * Gives `source` the name `tmp` (a hard link), hashes it and syncs it, when nothing else can
   * change it meanwhile: a regular file of the agent's own user (a runner run as another user
   * could still write through a descriptor it kept) with no name but these two, unchanged
   * (size, mtime, ctime) from before the hash to after it. Otherwise (another file system,
   * links not allowed, any doubt) undefined, and the caller copies instead, which hashes the
   * very bytes it writes. A change after this is caught where the cache checks a file's
   * recorded size, times and inode before it trusts it.
   */
  private async adoptByLink(source: string, tmp: string): Promise<{ sha256: string; size: number } | undefined> {
    try {
      // link(2) names the symbolic link itself, never its target; the checks below refuse it.
      await fsp.link(source, tmp);
    } catch {
      return undefined;
    }
    let adopted: { sha256: string; size: number } | undefined;
    try {
      const handle = await fsp.open(tmp, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      try {
        const before = await handle.stat();
        if (before.isFile() && before.nlink === 2 && before.uid === process.getuid?.()) {
          const result = await hashHandle(handle, before.size);
          await handle.sync();
          const after = await handle.stat();
          if (sameFile(after, verifiedOf(before)) && result.size === after.size) adopted = result;
        }
      } finally {
        await handle.close();
      }
    } catch {
      adopted = undefined;
    }
    if (!adopted) await fsp.rm(tmp, { force: true });
    return adopted;
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
    if (!e.partial) await this.removeLinkedViews(e);
    await fsp.rm(e.file, { force: true });
    if (!e.partial) await this.record(e.sha256, undefined);
  }

  /**
   * Removes the invocation-folder files of an evicted entry: those the folders' records name
   * (see syncInvocationFolder: links, or copies where linking is refused) and any other
   * name of its inode (a link the record does not list).
   */
  private async removeLinkedViews(e: Entry): Promise<void> {
    const folders = await fsp.readdir(this.linkedViewsDir).catch(() => [] as string[]);
    for (const folder of folders) {
      const dir = path.join(this.linkedViewsDir, folder);
      const names = await fsp.readdir(dir).catch(() => [] as string[]);
      if (names.length === 0) continue;
      const sources = await readViewSources(this.linkedViewsDir, folder);
      for (const name of names) {
        const file = path.join(dir, name);
        const st = await fsp.lstat(file).catch(() => undefined);
        if (st?.isFile() && (sources[name] === e.sha256 || st.ino === e.ino)) await fsp.rm(file, { force: true });
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
        const st = await fsp.lstat(file).catch(() => undefined);
        if (!st?.isFile()) continue;
        out.push({ sha256: name, file, size: st.size, lastUsedMs: Math.max(st.atimeMs, st.mtimeMs), partial, ino: st.ino });
      }
    }
    return out;
  }

  /**
   * Runs `task` after those queued before it: a check of entries (`has()`) or a change that
   * moves their ctimes (a link made or removed, a use recorded with utimes). One at a time, a
   * change knows that the ctime it moves is its own and renews the record, and a check never
   * sees a ctime moved by a change whose renewal is still to come (it would hash the entry
   * again for nothing, and could drop it when the ctime moved while it hashed).
   * Never called from inside a task (that would wait for itself).
   */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  /** The entry's file as it is now, if that is as it was verified. */
  private async verifiedNow(sha256: string): Promise<fs.Stats | undefined> {
    const st = await fsp.lstat(this.pathOf(sha256)).catch(() => undefined);
    const known = this.verified.get(sha256);
    return st?.isFile() && known && sameFile(st, known) ? st : undefined;
  }

  /**
   * After the cache made or removed a name of an entry's file, or set its atime (all of which
   * move the ctime only): renews the record of an entry that was verified as `before`, as long
   * as it is the same inode with the same size and mtime. Content written meanwhile moves the
   * mtime and keeps the entry unverified (re-hashed at its next use). `mtimeSetMs`: the change
   * itself set the mtime back to what it was, which utimes from Node does only to within a
   * millisecond (a Date), so it may differ by less than that.
   */
  private async renew(sha256: string, before: fs.Stats | undefined, mtimeSetMs = 0): Promise<void> {
    if (!before) return;
    const after = await fsp.lstat(this.pathOf(sha256)).catch(() => undefined);
    if (!after?.isFile() || after.ino !== before.ino || after.size !== before.size) return;
    if (mtimeSetMs > 0 ? Math.abs(after.mtimeMs - before.mtimeMs) >= mtimeSetMs : after.mtimeMs !== before.mtimeMs) return;
    if (sameFile(after, verifiedOf(before))) return;
    await this.record(sha256, after);
  }

  /** Takes the write bits off an entry's file; its state after, if only the ctime moved. */
  private async makeReadOnly(file: string, st: fs.Stats): Promise<fs.Stats | undefined> {
    await fsp.chmod(file, 0o444).catch(() => {});
    const after = await fsp.lstat(file).catch(() => undefined);
    return after?.isFile() && (after.mode & 0o222) === 0 && after.ino === st.ino && after.size === st.size && after.mtimeMs === st.mtimeMs ? after : undefined;
  }

  /** Records (or forgets) the verified state of an entry and saves the record. */
  private record(sha256: string, st: fs.Stats | undefined): Promise<void> {
    if (st) this.verified.set(sha256, verifiedOf(st));
    else if (!this.verified.delete(sha256)) return this.saving;
    const save = () => writeFileAtomic(this.manifestPath, JSON.stringify(Object.fromEntries(this.verified)));
    this.saving = this.saving.then(save, save).catch((err: unknown) => {
      this.log.warn({ err }, 'could not save the cache record: entries will be re-verified after a restart');
    });
    return this.saving;
  }
}
