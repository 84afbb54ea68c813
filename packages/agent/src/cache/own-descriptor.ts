import fsp from 'node:fs/promises';

/**
 * A second, independent descriptor (its own file position and lifetime) on the file an
 * open `handle` refers to, whatever has become of its path since: a rename, an unlink or
 * another file swapped in under the name do not matter. Linux's `/proc/self/fd/<n>` is a
 * link to the open file itself, not to its path. Undefined where that is not available.
 */
export async function openOwnDescriptor(handle: fsp.FileHandle): Promise<fsp.FileHandle | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    const own = await fsp.open(`/proc/self/fd/${handle.fd}`, 'r');
    const [a, b] = await Promise.all([own.stat(), handle.stat()]);
    if (a.ino === b.ino && a.dev === b.dev) return own;
    await own.close();
  } catch {
    // no /proc, or the descriptor went meanwhile
  }
  return undefined;
}
