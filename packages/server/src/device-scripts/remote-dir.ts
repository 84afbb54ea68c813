import path from 'node:path';

/** Where the board's scripts may go: `dir` equal to `root` or inside it, both already normalised. */
export function isInsideRoot(dir: string, root: string): boolean {
  const rel = path.posix.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}

/**
 * A `remote_dir` the server will send to a board: absolute, without `.`/`..` segments (a
 * catalogue edit cannot climb out of the board's scripts root), and, when the board names
 * its MM_SCRIPTS_ROOT, inside it. Undefined when fine; otherwise why not.
 */
export function remoteDirRefusal(remoteDir: string, scriptsRoot: string | undefined): string | undefined {
  const segments = remoteDir.split('/');
  if (!remoteDir.startsWith('/') || segments.some((s) => s === '..' || s === '.')) {
    return `remote_dir ${JSON.stringify(remoteDir)} must be an absolute path without "." or ".." segments.`;
  }
  const normal = path.posix.normalize(remoteDir);
  if (scriptsRoot !== undefined && !isInsideRoot(normal, path.posix.normalize(scriptsRoot))) {
    return `remote_dir ${JSON.stringify(remoteDir)} is outside the board's scripts folder ${scriptsRoot} (MM_SCRIPTS_ROOT): nothing was written.`;
  }
  return undefined;
}
