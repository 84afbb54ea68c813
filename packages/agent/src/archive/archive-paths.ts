import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * The path rules and disk chores the archive installers share (accelerator/app-archive.ts and
 * pac/pac-archive.ts): each passes `unsafe`, which makes its own typed error
 * (`invalid_app_archive`, `invalid_pac_archive`) for an entry name it refuses.
 */
export type UnsafePath = (name: string, why: string) => Error;

/**
 * An entry's name as path segments (`.` and empty ones dropped); refused when it holds control
 * characters or a backslash, is absolute, starts with a drive letter or has a `..` segment.
 */
export function safeSegments(name: string, unsafe: UnsafePath): string[] {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw unsafe(name, 'holds control characters');
  if (name.includes('\\')) throw unsafe(name, 'holds a backslash');
  if (name.startsWith('/')) throw unsafe(name, 'is absolute');
  if (/^[A-Za-z]:/.test(name)) throw unsafe(name, 'starts with a drive letter');
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw unsafe(name, 'has a ".." segment');
  return segments;
}

/** Refuses `target` unless it lies strictly inside `root` (`folder` names the root in the message: "the app folder"). */
export function assertInside(root: string, target: string, name: string, folder: string, unsafe: UnsafePath): void {
  const relative = path.relative(root, target);
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw unsafe(name, `resolves outside ${folder}`);
  }
}

/** After a refused install: the folders `mkdir -p` created for `dir` (up to `firstCreated`) go again, if empty. */
export async function removeCreatedFolders(dir: string, firstCreated: string): Promise<void> {
  let current = dir;
  for (;;) {
    try {
      await fsp.rmdir(current);
    } catch {
      return;
    }
    if (current === firstCreated || path.dirname(current) === current) return;
    current = path.dirname(current);
  }
}

export async function pathExists(file: string): Promise<boolean> {
  try {
    await fsp.lstat(file);
    return true;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    throw err;
  }
}

export function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && 'code' in err && err.code === code;
}
