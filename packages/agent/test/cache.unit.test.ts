import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { CacheError } from '../src/cache/cache-error.ts';
import { ContentCache } from '../src/cache/content-cache.ts';
import { WORKER_HASH_MIN_BYTES } from '../src/cache/file-hash.ts';
import { hashFdInWorker } from '../src/cache/hash-worker.ts';
import { syncInvocationFolder } from '../src/cache/invocation-folder.ts';
import { createLogger } from '../src/logger.ts';
import { removeTempDirs, sha256, tempDir, testLogger } from './support/agent-fixture.ts';

afterAll(removeTempDirs);

let dir: string;
const newCache = (maxBytes = 1024 ** 3) => new ContentCache(path.join(dir, 'cache'), maxBytes, path.join(dir, 'invocations'), testLogger());

/** Pulls `data` into the cache through a PartialPull, as a stream would, in pieces. */
async function pullAll(cache: ContentCache, data: Buffer, expectedSha = sha256(data)) {
  const pull = await cache.beginPull(expectedSha, data.length);
  for (let at = pull.offset; at < data.length; at += 100_000) await pull.sink.write(data.subarray(at, Math.min(data.length, at + 100_000)));
  await pull.sink.finish();
  await pull.commit();
}

/** Threads of this process now (Linux: /proc/self/task). */
const threadCount = () => fs.readdirSync('/proc/self/task').length;

async function setLastUse(cache: ContentCache, sha: string, secondsAgo: number) {
  const t = new Date(Date.now() - secondsAgo * 1000);
  await fsp.utimes(cache.pathOf(sha), t, t);
}

beforeEach(async () => {
  dir = await tempDir('mm-cache-');
});

describe('ContentCache', () => {
  it('verifies the sha256 before content enters the cache', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(300_000);
    await pullAll(cache, data);
    expect(await cache.has(sha256(data))).toBe(true);
    expect(await cache.list()).toEqual([sha256(data)]);
    expect(sha256(await fsp.readFile(cache.pathOf(sha256(data))))).toBe(sha256(data));
    // Content is read-only in the cache: a runner writing to its input cannot corrupt it by accident.
    expect((await fsp.stat(cache.pathOf(sha256(data)))).mode & 0o222).toBe(0);
  });

  it('discards the partial file and fails on a sha256 mismatch', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(50_000);
    const claimed = sha256('something else');
    const error = await pullAll(cache, data, claimed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CacheError);
    expect((error as CacheError).code).toBe('checksum_mismatch');
    expect(await cache.has(claimed)).toBe(false);
    await expect(fsp.stat(path.join(cache.partialDir, claimed))).rejects.toThrow();
    expect(await cache.list()).toEqual([]);
  });

  it('fails on a size mismatch', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(1000);
    const pull = await cache.beginPull(sha256(data), 2000);
    await pull.sink.write(data);
    const error = await pull.commit().catch((e: unknown) => e);
    expect((error as CacheError).code).toBe('size_mismatch');
  });

  it('resumes from a partial file, re-hashing its prefix from disk', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(1_000_000);
    const sha = sha256(data);
    const first = await cache.beginPull(sha, data.length);
    expect(first.offset).toBe(0);
    await first.sink.write(data.subarray(0, 400_000));
    first.sink.destroy(new Error('link closed'));
    await first.close();

    const second = await cache.beginPull(sha, data.length);
    expect(second.offset).toBe(400_000);
    await second.sink.write(data.subarray(400_000));
    await second.sink.finish();
    await second.commit();
    expect(sha256(await fsp.readFile(cache.pathOf(sha)))).toBe(sha256(data));
  });

  it('a resumed file whose kept prefix is corrupt does not verify, and starts over next time', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(200_000);
    const sha = sha256(data);
    const bad = Buffer.from(data.subarray(0, 100_000));
    bad[10] = bad[10]! ^ 0xff;
    await fsp.writeFile(path.join(cache.partialDir, sha), bad);
    const pull = await cache.beginPull(sha, data.length);
    expect(pull.offset).toBe(100_000);
    await pull.sink.write(data.subarray(100_000));
    await expect(pull.commit()).rejects.toMatchObject({ code: 'checksum_mismatch' });
    const again = await cache.beginPull(sha, data.length);
    expect(again.offset).toBe(0);
    await again.close();
  });

  it('evicts the least recently used content to stay under its cap', async () => {
    const cache = newCache(250_000);
    await cache.init();
    const [a, b, c] = [randomBytes(100_000), randomBytes(100_000), randomBytes(100_000)];
    await pullAll(cache, a);
    await pullAll(cache, b);
    await setLastUse(cache, sha256(a), 100);
    await setLastUse(cache, sha256(b), 200);
    // a was used after b: b goes first.
    await pullAll(cache, c);
    expect(new Set(await cache.list())).toEqual(new Set([sha256(a), sha256(c)]));
    await cache.touch(sha256(a));
    await setLastUse(cache, sha256(c), 50);
    const d = randomBytes(100_000);
    await pullAll(cache, d);
    expect(new Set(await cache.list())).toEqual(new Set([sha256(a), sha256(d)]));
    expect(await cache.totalBytes()).toBeLessThanOrEqual(250_000);
  });

  it('never evicts pinned content (in use by an operation), even over the cap', async () => {
    const cache = newCache(150_000);
    await cache.init();
    const [a, b] = [randomBytes(100_000), randomBytes(100_000)];
    await pullAll(cache, a);
    await setLastUse(cache, sha256(a), 1000);
    const release = cache.pin([sha256(a)]);
    await pullAll(cache, b);
    expect(new Set(await cache.list())).toEqual(new Set([sha256(a), sha256(b)]));
    release();
    await setLastUse(cache, sha256(b), 10);
    await cache.ensureSpace(0);
    expect(await cache.list()).toEqual([sha256(b)]);
  });

  it('evicting content also removes its links in invocation folders', async () => {
    const cache = newCache(150_000);
    await cache.init();
    const a = randomBytes(100_000);
    await pullAll(cache, a);
    const paths = await syncInvocationFolder(cache, path.join(dir, 'invocations'), 7, [{ kind: 'weights', filename: 'w.bin', sha256: sha256(a), size: a.length }]);
    expect(sha256(await fsp.readFile(paths.get('weights')!))).toBe(sha256(a));
    expect((await fsp.stat(paths.get('weights')!)).nlink).toBe(2);
    await setLastUse(cache, sha256(a), 1000);
    await pullAll(cache, randomBytes(100_000));
    expect(await cache.has(sha256(a))).toBe(false);
    await expect(fsp.stat(path.join(dir, 'invocations/7/w.bin'))).rejects.toThrow();
  });

  it('re-verifies an entry changed on disk and drops it when it no longer matches its sha256', async () => {
    const cache = newCache();
    await cache.init();
    const [a, b] = [randomBytes(20_000), randomBytes(20_000)];
    await pullAll(cache, a);
    await pullAll(cache, b);
    expect(await cache.has(sha256(a))).toBe(true);
    // Written to behind the cache's back (a process that could reach the file).
    await fsp.chmod(cache.pathOf(sha256(a)), 0o644);
    await fsp.writeFile(cache.pathOf(sha256(a)), randomBytes(20_000));
    expect(await cache.has(sha256(a))).toBe(false);
    await expect(fsp.stat(cache.pathOf(sha256(a)))).rejects.toThrow();
    // Touched but unchanged content stays, also for a cache opened afresh (the record is kept).
    const t = new Date(Date.now() - 5000);
    await fsp.utimes(cache.pathOf(sha256(b)), t, (await fsp.stat(cache.pathOf(sha256(b)))).mtime);
    const reopened = newCache();
    await reopened.init();
    expect(await reopened.has(sha256(b))).toBe(true);
    // The same bytes written back in place (a new mtime) re-verify and stay.
    await fsp.chmod(cache.pathOf(sha256(b)), 0o644);
    await fsp.writeFile(cache.pathOf(sha256(b)), b);
    expect(await reopened.has(sha256(b))).toBe(true);
  });

  it('refuses to import a symbolic link as a produced file, and leaves its target alone', async () => {
    const cache = newCache();
    await cache.init();
    const secret = path.join(dir, 'agent-secret.txt');
    await fsp.writeFile(secret, 'board token', { mode: 0o600 });
    const link = path.join(dir, 'out.mp4');
    await fsp.symlink(secret, link);
    await expect(cache.importFile(link)).rejects.toMatchObject({ code: 'not_a_regular_file' });
    expect((await fsp.stat(secret)).mode & 0o777).toBe(0o600);
    expect(await cache.list()).toEqual([]);
    // A FIFO swapped in for the video neither hangs nor imports.
    const fifo = path.join(dir, 'fifo.mp4');
    execFileSync('mkfifo', [fifo]);
    await expect(cache.importFile(fifo)).rejects.toMatchObject({ code: 'not_a_regular_file' });
  });

  it('imports a produced file by content', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(10_000);
    const file = path.join(dir, 'out.mp4');
    await fsp.writeFile(file, data);
    expect(await cache.importFile(file)).toEqual({ sha256: sha256(data), size: data.length });
    expect(sha256(await fsp.readFile(cache.pathOf(sha256(data))))).toBe(sha256(data));
    await expect(fsp.stat(file)).rejects.toThrow();
  });

  it('hashes a large produced file on a worker thread: same sha256, and the event loop keeps turning meanwhile', async () => {
    const cache = newCache();
    await cache.init();
    const data = randomBytes(WORKER_HASH_MIN_BYTES + 12_345);
    const file = path.join(dir, 'big.mp4');
    await fsp.writeFile(file, data);
    const threadsBefore = threadCount();
    let turns = 0;
    let threadsDuring = 0;
    const ticker = setInterval(() => {
      turns++;
      threadsDuring = Math.max(threadsDuring, threadCount());
    }, 1);
    try {
      expect(await cache.importFile(file)).toEqual({ sha256: sha256(data), size: data.length });
    } finally {
      clearInterval(ticker);
    }
    // The hash ran on a thread of its own (one more than before), and the loop ran timers meanwhile.
    expect(threadsDuring).toBeGreaterThan(threadsBefore);
    expect(turns).toBeGreaterThan(2);
    expect(sha256(await fsp.readFile(cache.pathOf(sha256(data))))).toBe(sha256(data));
  });

  it('the worker thread reports a read error as an error (the import then copies instead)', async () => {
    const handle = await fsp.open(dir, 'r');
    try {
      await expect(hashFdInWorker(handle.fd, 1024 * 1024)).rejects.toMatchObject({ code: 'EISDIR' });
    } finally {
      await handle.close();
    }
  });

  it('takes a produced file of its own user by a second name, not a copy; copies one with other names or another owner', async () => {
    const cache = newCache();
    await cache.init();
    // Its own file, no other name: the cache's file is the very same inode (nothing copied).
    const own = randomBytes(50_000);
    const ownFile = path.join(dir, 'own.mp4');
    await fsp.writeFile(ownFile, own);
    const ownIno = (await fsp.stat(ownFile)).ino;
    expect(await cache.importFile(ownFile)).toEqual({ sha256: sha256(own), size: own.length });
    const adopted = await fsp.stat(cache.pathOf(sha256(own)));
    expect(adopted.ino).toBe(ownIno);
    expect(adopted.nlink).toBe(1);
    expect(adopted.mode & 0o777).toBe(0o444);
    expect(await cache.list()).toContain(sha256(own));
    expect(await cache.has(sha256(own))).toBe(true);

    // A file that has another name too (someone could write through it): copied.
    const shared = randomBytes(20_000);
    const sharedFile = path.join(dir, 'shared.mp4');
    await fsp.writeFile(sharedFile, shared);
    await fsp.link(sharedFile, path.join(dir, 'kept-elsewhere.mp4'));
    expect(await cache.importFile(sharedFile)).toEqual({ sha256: sha256(shared), size: shared.length });
    expect((await fsp.stat(cache.pathOf(sha256(shared)))).ino).not.toBe((await fsp.stat(path.join(dir, 'kept-elsewhere.mp4'))).ino);
    expect(await fsp.readFile(path.join(dir, 'kept-elsewhere.mp4'))).toEqual(shared);

    // Another user's file (a runner run as someone else): copied. Needs root to give it away.
    if (process.getuid?.() === 0) {
      const theirs = randomBytes(20_000);
      const theirFile = path.join(dir, 'theirs.mp4');
      await fsp.writeFile(theirFile, theirs);
      await fsp.chown(theirFile, 65534, 65534);
      const theirIno = (await fsp.stat(theirFile)).ino;
      expect(await cache.importFile(theirFile)).toEqual({ sha256: sha256(theirs), size: theirs.length });
      const stored = await fsp.stat(cache.pathOf(sha256(theirs)));
      expect(stored.ino).not.toBe(theirIno);
      expect(stored.uid).toBe(0);
    }
  });
});

describe('syncInvocationFolder', () => {
  /** A cache whose log says when it hashes an entry again (`re-verifying`). */
  function watchedCache() {
    const lines: string[] = [];
    const cache = new ContentCache(path.join(dir, 'cache'), 1024 ** 3, path.join(dir, 'invocations'), createLogger('info', {}, (line) => lines.push(line)));
    const rehashes = () => lines.filter((l) => l.includes('re-verifying')).length;
    return { cache, rehashes };
  }

  /** A watched, initialised cache holding `bytes` random bytes of weights, and their file entry for an invocation folder. */
  async function cacheWithWeights(bytes: number) {
    const { cache, rehashes } = watchedCache();
    await cache.init();
    const w = randomBytes(bytes);
    await pullAll(cache, w);
    const inv = path.join(dir, 'invocations');
    const files = [{ kind: 'weights' as const, filename: 'weights.bin', sha256: sha256(w), size: w.length }];
    return { cache, rehashes, w, inv, files };
  }

  /** Whether the cache's saved record of `sha` is its file as it is now: its next use does not hash it again. */
  async function recordHolds(cache: ContentCache, sha: string): Promise<boolean> {
    const saved = (JSON.parse(await fsp.readFile(path.join(cache.dir, 'verified.json'), 'utf8')) as Record<string, { size: number; mtimeMs: number; ctimeMs: number; ino: number }>)[sha];
    const st = await fsp.lstat(cache.pathOf(sha));
    return saved !== undefined && saved.size === st.size && saved.mtimeMs === st.mtimeMs && saved.ctimeMs === st.ctimeMs && saved.ino === st.ino;
  }

  it('links files under their own names, replaces stale ones and removes leftovers; the cache stays verified', async () => {
    const { cache, rehashes } = watchedCache();
    await cache.init();
    const [p1, p2, w] = [Buffer.from('{"v":1}'), Buffer.from('{"v":2}'), randomBytes(5000)];
    for (const d of [p1, p2, w]) await pullAll(cache, d);
    const inv = path.join(dir, 'invocations');
    await syncInvocationFolder(cache, inv, 3, [
      { kind: 'parameter', filename: 'params.json', sha256: sha256(p1), size: p1.length },
      { kind: 'weights', filename: 'old-weights.bin', sha256: sha256(w), size: w.length },
    ]);
    const paths = await syncInvocationFolder(cache, inv, 3, [
      { kind: 'parameter', filename: 'params.json', sha256: sha256(p2), size: p2.length },
      { kind: 'weights', filename: 'weights.bin', sha256: sha256(w), size: w.length },
      { kind: 'bitstream', filename: 'weights.bin', sha256: sha256(p1), size: p1.length },
    ]);
    expect((await fsp.readdir(path.join(inv, '3'))).sort()).toEqual(['bitstream-weights.bin', 'params.json', 'weights.bin']);
    expect(await fsp.readFile(paths.get('parameter')!, 'utf8')).toBe('{"v":2}');
    // A hard link to the cache file (nothing copied), read-only.
    const view = await fsp.stat(paths.get('weights')!);
    const cached = await fsp.stat(cache.pathOf(sha256(w)));
    expect([view.ino, view.dev]).toEqual([cached.ino, cached.dev]);
    expect(view.nlink).toBe(2); // the old name went
    expect(view.mode & 0o222).toBe(0);
    expect(sha256(await fsp.readFile(paths.get('weights')!))).toBe(sha256(w));
    // Links made, replaced (params.json: p1 → p2) and removed (old-weights.bin) moved the
    // entries' ctimes; their records were renewed, so using them hashes nothing again.
    for (const d of [p1, p2, w]) expect(await recordHolds(cache, sha256(d))).toBe(true);
    for (const d of [p1, p2, w]) expect(await cache.has(sha256(d))).toBe(true);
    expect(rehashes()).toBe(0);
    // Nor after a restart (the record is on disk), nor for a sync that finds all in place.
    const reopened = watchedCache();
    await reopened.cache.init();
    await syncInvocationFolder(reopened.cache, inv, 3, [{ kind: 'weights', filename: 'weights.bin', sha256: sha256(w), size: w.length }]);
    expect((await fsp.stat(paths.get('weights')!)).ino).toBe(cached.ino);
    for (const d of [p1, p2, w]) expect(await reopened.cache.has(sha256(d))).toBe(true);
    expect(reopened.rehashes()).toBe(0);
  });

  it("a runner of the agent's user writing its input file (the cache file) is caught: the entry is dropped, never served, and pulled again", async () => {
    const { cache, w, inv, files } = await cacheWithWeights(50_000);
    const view = (await syncInvocationFolder(cache, inv, 9, files)).get('weights')!;
    // What a runner running as the agent's user can do to the file it was given: it is the cache file.
    await fsp.chmod(view, 0o644);
    await fsp.writeFile(view, 'tampered');
    // Handing it out again (without the transfer's check first) re-verifies it and refuses.
    await expect(syncInvocationFolder(cache, inv, 9, files)).rejects.toMatchObject({ code: 'cache_entry_changed' });
    expect(await cache.has(sha256(w))).toBe(false);
    expect(await cache.list()).not.toContain(sha256(w));
    await expect(fsp.stat(cache.pathOf(sha256(w)))).rejects.toThrow();
    await expect(syncInvocationFolder(cache, inv, 9, files)).rejects.toMatchObject({ code: 'not_cached' });
    // The next transfer pulls it again; the next run gets the real bytes, a link to the new file.
    await pullAll(cache, w);
    await syncInvocationFolder(cache, inv, 9, files);
    expect(sha256(await fsp.readFile(view))).toBe(sha256(w));
    expect((await fsp.stat(view)).ino).toBe((await fsp.stat(cache.pathOf(sha256(w)))).ino);
    expect((await fsp.stat(view)).mode & 0o222).toBe(0);
    expect(await cache.has(sha256(w))).toBe(true);
  });

  it('a runner that only chmods its input: re-verified once, kept, and read-only again', async () => {
    const { cache, rehashes, w, inv, files } = await cacheWithWeights(50_000);
    const view = (await syncInvocationFolder(cache, inv, 4, files)).get('weights')!;
    await fsp.chmod(view, 0o666);
    expect(await cache.has(sha256(w))).toBe(true);
    expect(rehashes()).toBe(1);
    expect((await fsp.stat(cache.pathOf(sha256(w)))).mode & 0o777).toBe(0o444);
    await syncInvocationFolder(cache, inv, 4, files);
    expect((await fsp.stat(view)).ino).toBe((await fsp.stat(cache.pathOf(sha256(w)))).ino);
    expect(await recordHolds(cache, sha256(w))).toBe(true);
    expect(rehashes()).toBe(1);
  });

  it('links made and removed at the same time, with uses in between, keep the entry verified', async () => {
    const { cache, rehashes, w, inv, files } = await cacheWithWeights(20_000);
    const ids = [11, 12, 13, 14, 15, 16];
    const checks = await Promise.all([
      ...ids.map((id) => syncInvocationFolder(cache, inv, id, files).then(() => true)),
      ...ids.map(() => cache.has(sha256(w))),
      ...ids.map(() => cache.touch(sha256(w)).then(() => true)),
    ]);
    expect(checks.every(Boolean)).toBe(true);
    expect((await fsp.stat(cache.pathOf(sha256(w)))).nlink).toBe(1 + ids.length);
    // The same folders emptied (leftover links removed) while others are made.
    await Promise.all(ids.map((id, i) => syncInvocationFolder(cache, inv, id, i % 2 ? [] : files)));
    expect((await fsp.stat(cache.pathOf(sha256(w)))).nlink).toBe(1 + ids.length / 2);
    expect(await recordHolds(cache, sha256(w))).toBe(true);
    expect(await cache.has(sha256(w))).toBe(true);
    expect(rehashes()).toBe(0);
  });

  it('replaces a copy an earlier agent left with a link', async () => {
    const { cache, rehashes } = watchedCache();
    await cache.init();
    const w = randomBytes(20_000);
    await pullAll(cache, w);
    const inv = path.join(dir, 'invocations');
    const copy = path.join(inv, '6', 'weights.bin');
    await fsp.mkdir(path.dirname(copy), { recursive: true });
    await fsp.copyFile(cache.pathOf(sha256(w)), copy);
    await fsp.chmod(copy, 0o444);
    const cached = await fsp.stat(cache.pathOf(sha256(w)));
    await fsp.utimes(copy, cached.atime, cached.mtime);
    await fsp.writeFile(path.join(inv, '.6.sources.json'), JSON.stringify({ 'weights.bin': sha256(w) }));
    await syncInvocationFolder(cache, inv, 6, [{ kind: 'weights', filename: 'weights.bin', sha256: sha256(w), size: w.length }]);
    expect((await fsp.stat(copy)).ino).toBe(cached.ino);
    expect(await cache.has(sha256(w))).toBe(true);
    expect(rehashes()).toBe(0);
  });

  // /dev/shm is a tmpfs: a link from the cache (here under the system's temporary folder) into it fails with EXDEV.
  const otherFs = (() => {
    try {
      return fs.statSync('/dev/shm').dev !== fs.statSync(os.tmpdir()).dev;
    } catch {
      return false;
    }
  })();
  it.skipIf(!otherFs)('copies where the invocations folder is on another file system (link refused)', async () => {
    const { cache, rehashes } = watchedCache();
    await cache.init();
    const w = randomBytes(30_000);
    await pullAll(cache, w);
    const inv = await fsp.mkdtemp(path.join('/dev/shm', 'mm-invocations-'));
    try {
      const files = [{ kind: 'weights' as const, filename: 'weights.bin', sha256: sha256(w), size: w.length }];
      const view = (await syncInvocationFolder(cache, inv, 2, files)).get('weights')!;
      const copy = await fsp.stat(view);
      const cached = await fsp.stat(cache.pathOf(sha256(w)));
      expect(copy.dev).not.toBe(cached.dev);
      expect(copy.nlink).toBe(1);
      expect(copy.mode & 0o222).toBe(0);
      expect(Math.abs(copy.mtimeMs - cached.mtimeMs)).toBeLessThan(2);
      expect(sha256(await fsp.readFile(view))).toBe(sha256(w));
      expect(await fsp.readdir(path.join(inv, '2'))).toEqual(['weights.bin']);
      // An intact copy is kept; one the runner changed is replaced; the cache file is untouched throughout.
      await syncInvocationFolder(cache, inv, 2, files);
      expect((await fsp.stat(view)).ino).toBe(copy.ino);
      await fsp.chmod(view, 0o644);
      await fsp.writeFile(view, 'tampered');
      await syncInvocationFolder(cache, inv, 2, files);
      expect(sha256(await fsp.readFile(view))).toBe(sha256(w));
      expect(await cache.has(sha256(w))).toBe(true);
      // The pull's record is saved in the background ("saving the record runs on"), and a copy,
      // unlike a link, renews nothing that waits for it: the saved record holds once that save
      // lands (read at once, a loaded machine's fsync could still be in flight).
      await expect.poll(() => recordHolds(cache, sha256(w)).catch(() => false), { timeout: 10_000 }).toBe(true);
      expect(rehashes()).toBe(0);
    } finally {
      await fsp.rm(inv, { recursive: true, force: true });
    }
  });

  it.skipIf(process.getuid?.() !== 0)('a runner of its own user (MM_RUNNER_USER) can read its linked input but neither write nor chmod it', async () => {
    const { cache, rehashes } = watchedCache();
    await cache.init();
    const w = randomBytes(20_000);
    await pullAll(cache, w);
    await fsp.chmod(dir, 0o755); // the runner reaches the invocation folder (group-traversable on a board)
    const files = [{ kind: 'weights' as const, filename: 'weights.bin', sha256: sha256(w), size: w.length }];
    const view = (await syncInvocationFolder(cache, path.join(dir, 'invocations'), 8, files)).get('weights')!;
    const script = [
      'sha256sum < "$VIEW" | cut -d" " -f1',
      'if { printf x >> "$VIEW"; } 2>/dev/null; then echo wrote; else echo no-write; fi',
      'if printf x 2>/dev/null 1<> "$VIEW"; then echo overwrote; else echo no-overwrite; fi',
      'if chmod 666 "$VIEW" 2>/dev/null; then echo chmodded; else echo no-chmod; fi',
    ].join('\n');
    const out = execFileSync('/bin/sh', ['-c', script], { uid: 65534, gid: 65534, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', VIEW: view } }).toString();
    expect(out.trim().split('\n')).toEqual([sha256(w), 'no-write', 'no-overwrite', 'no-chmod']);
    expect((await fsp.stat(cache.pathOf(sha256(w)))).mode & 0o777).toBe(0o444);
    expect(await cache.has(sha256(w))).toBe(true);
    expect(rehashes()).toBe(0);
  });

  it('refuses file names that are not plain names', async () => {
    const cache = newCache();
    await cache.init();
    const d = Buffer.from('x');
    await pullAll(cache, d);
    for (const filename of ['../escape', 'a/b', '..', '.']) {
      await expect(syncInvocationFolder(cache, path.join(dir, 'invocations'), 1, [{ kind: 'weights', filename, sha256: sha256(d), size: 1 }])).rejects.toMatchObject({
        code: 'invalid_filename',
      });
    }
  });
});
