import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileRef } from '@mm/protocol';
import { CacheError } from './cache-error.ts';
import type { ContentCache } from './content-cache.ts';

/** A file name the server sent must be a plain name: no folders, no `..`, nothing hidden behind a NUL. */
export function isPlainFileName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * Makes `<invocationsDir>/<id>/` hold exactly `files`, each under its own name as a hard
 * link to its cache file (no copy). A link with the right name but other content (the
 * invocation's file was replaced) is swapped atomically (link to a temporary name, then
 * rename); anything else in the folder is a leftover of an earlier version and goes.
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
  for (const f of files) {
    if (!isPlainFileName(f.filename)) throw new CacheError('invalid_filename', `not a plain file name: ${JSON.stringify(f.filename)}`);
    const name = used.has(f.filename) ? `${f.kind}-${f.filename}` : f.filename;
    used.add(name);
    const target = path.join(dir, name);
    const source = cache.pathOf(f.sha256);
    const [have, want] = await Promise.all([fsp.lstat(target).catch(() => undefined), fsp.stat(source)]);
    if (!have || have.ino !== want.ino || have.dev !== want.dev) {
      const tmp = path.join(dir, `.tmp-${randomBytes(6).toString('hex')}`);
      await fsp.link(source, tmp);
      await fsp.rename(tmp, target);
    }
    paths.set(f.kind, target);
  }
  for (const name of await fsp.readdir(dir)) {
    if (!used.has(name)) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
  return paths;
}
