import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileRef } from '@mm/protocol';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import { CacheError } from './cache-error.ts';
import type { ContentCache } from './content-cache.ts';
import { readViewSources, viewSourcesFile } from './view-sources.ts';

/** A file name the server sent must be a plain name: no folders, no `..`, nothing hidden behind a NUL. */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * Makes `<invocationsDir>/<id>/` hold exactly `files`, each under its own name as a hard link
 * to its cache file (`ContentCache.linkInto`): nothing is copied, a 1 GiB input costs a
 * link(2), not a GiB of reads and writes. A file that already is its cache file is kept;
 * any other (other content, a copy) is replaced atomically (link to a temporary name, then
 * rename); anything else in the folder is a leftover of an earlier version and goes.
 *
 * A link is safe to hand out because the cache file is read-only (0444) and the agent's:
 * - a runner of its own user (MM_RUNNER_USER) can read it but can neither write it nor
 *   chmod it (only the owner or root can);
 * - a runner running as the agent's own user could chmod and write it, but it could as well
 *   write the cache directly. Any such change moves the inode's ctime, which the cache checks
 *   before it trusts an entry (`has()`, `linkInto`): a changed file is hashed again, dropped
 *   and pulled again before any later use, so "sha256 verified before use" still holds;
 *   what the changed run itself read is that run's own doing.
 * Making or removing a link moves the ctime too; the cache renews its record after those
 * (linkInto, removeView), so the next use does not hash the entry again.
 *
 * Where the file system refuses the link (the invocations folder on another file system,
 * EXDEV; EPERM, EMLINK…), the file is a read-only copy instead: a reflink where the file
 * system can (btrfs, XFS), a full copy elsewhere, carrying its cache file's mtime; a copy
 * whose size, mtime or mode differ is replaced. A copy left by an earlier agent is replaced
 * by a link at the next sync where linking works.
 * `.<id>.sources.json` beside the folder says which entry each file shows (eviction
 * removes the views of what it evicts).
 * Two kinds with the same file name cannot share the folder: the later one is named
 * `<kind>-<filename>`. Returns each file's absolute path by kind.
 */
export async function syncInvocationFolder(
  cache: ContentCache,
  invocationsDir: string,
  invocationId: number,
  files: readonly FileRef[],
): Promise<Map<FileRef['kind'], string>> {
  const dir = path.join(invocationsDir, String(invocationId));
  await fsp.mkdir(dir, { recursive: true });
  // What each name showed before: a link replaced or removed renews that entry's record.
  const before = await readViewSources(invocationsDir, String(invocationId));
  const shown = (name: string) => (Object.hasOwn(before, name) && typeof before[name] === 'string' ? before[name] : undefined);
  const paths = new Map<FileRef['kind'], string>();
  const used = new Set<string>();
  const sources: Record<string, string> = {};
  for (const f of files) {
    if (!isPlainFileName(f.filename)) throw new CacheError('invalid_filename', `not a plain file name: ${JSON.stringify(f.filename)}`);
    const name = used.has(f.filename) ? `${f.kind}-${f.filename}` : f.filename;
    used.add(name);
    const target = path.join(dir, name);
    if (!(await cache.linkInto(f.sha256, target, shown(name)))) await copyInto(cache.pathOf(f.sha256), target);
    paths.set(f.kind, target);
    sources[name] = f.sha256;
  }
  // Beside the folder, not in it: the runner sees exactly its files.
  await writeFileAtomic(viewSourcesFile(invocationsDir, invocationId), JSON.stringify(sources));
  for (const name of await fsp.readdir(dir)) {
    if (!used.has(name)) await cache.removeView(path.join(dir, name), shown(name));
  }
  return paths;
}

/** Where linking is refused: `target` becomes (or stays) a read-only copy of `source`. */
async function copyInto(source: string, target: string): Promise<void> {
  const [have, want] = await Promise.all([fsp.lstat(target).catch(() => undefined), fsp.stat(source)]);
  if (have && isIntactCopy(have, want)) return;
  const tmp = path.join(path.dirname(target), `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await fsp.copyFile(source, tmp, fs.constants.COPYFILE_FICLONE);
    await fsp.chmod(tmp, 0o444);
    await fsp.utimes(tmp, want.atime, want.mtime);
    await fsp.rename(tmp, target);
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * A regular, read-only file of its own (not a link to the cache file) that still looks like
 * the copy made of it. Its mtime is the cache file's to within a millisecond or so: utimes
 * from Node takes a Date (whole milliseconds) or seconds as a double, so the nanoseconds of
 * an mtime cannot be carried over exactly (compared exactly, every copy looked changed and
 * was made again at each sync).
 */
function isIntactCopy(have: fs.Stats, cached: fs.Stats): boolean {
  return (
    have.isFile() &&
    have.nlink === 1 &&
    (have.ino !== cached.ino || have.dev !== cached.dev) &&
    (have.mode & 0o222) === 0 &&
    have.size === cached.size &&
    Math.abs(have.mtimeMs - cached.mtimeMs) < 2
  );
}
