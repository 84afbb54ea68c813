import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileRef } from '@mm/protocol';
import { writeFileAtomic } from '../journal/atomic-write.ts';
import { CacheError } from './cache-error.ts';
import type { ContentCache } from './content-cache.ts';
import { viewSourcesFile } from './view-sources.ts';

/** A file name the server sent must be a plain name: no folders, no `..`, nothing hidden behind a NUL. */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * Makes `<invocationsDir>/<id>/` hold exactly `files`, each under its own name as a
 * read-only copy of its cache file: a reflink where the file system can (btrfs, XFS),
 * a full copy elsewhere. Never a hard link: the runner reads these files, and what it
 * could write through a link would change the cached bytes every later run uses.
 * A copy carries its cache file's mtime; one whose size, mtime or mode differ (other
 * content, or the runner changed it) is replaced atomically (copy to a temporary name,
 * then rename); anything else in the folder is a leftover of an earlier version and goes.
 * `.<id>.sources.json` beside the folder says which entry each file copies (eviction
 * removes the copies of what it evicts).
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
  const paths = new Map<FileRef['kind'], string>();
  const used = new Set<string>();
  const sources: Record<string, string> = {};
  for (const f of files) {
    if (!isPlainFileName(f.filename)) throw new CacheError('invalid_filename', `not a plain file name: ${JSON.stringify(f.filename)}`);
    const name = used.has(f.filename) ? `${f.kind}-${f.filename}` : f.filename;
    used.add(name);
    const target = path.join(dir, name);
    const source = cache.pathOf(f.sha256);
    const [have, want] = await Promise.all([fsp.lstat(target).catch(() => undefined), fsp.stat(source)]);
    if (!have || !isIntactCopy(have, want)) {
      const tmp = path.join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
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
    paths.set(f.kind, target);
    sources[name] = f.sha256;
  }
  // Beside the folder, not in it: the runner sees exactly its files.
  await writeFileAtomic(viewSourcesFile(invocationsDir, invocationId), JSON.stringify(sources));
  for (const name of await fsp.readdir(dir)) {
    if (!used.has(name)) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
  return paths;
}

/** A regular, read-only file of its own (not a link to the cache file) that still looks like the copy made of it. */
function isIntactCopy(have: fs.Stats, cached: fs.Stats): boolean {
  return (
    have.isFile() &&
    have.nlink === 1 &&
    (have.ino !== cached.ino || have.dev !== cached.dev) &&
    (have.mode & 0o222) === 0 &&
    have.size === cached.size &&
    have.mtimeMs === cached.mtimeMs
  );
}
