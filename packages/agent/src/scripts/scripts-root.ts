import fsp from 'node:fs/promises';
import path from 'node:path';
import { RpcError } from '../rpc/rpc-registry.ts';

/**
 * Where device scripts may be written (MM_SCRIPTS_ROOT): `root` is the folder the catalogue's
 * `remote_dir` must lie in; `disk` is where that folder is on this machine (the same on a real
 * board; on the simulated board a folder under its agent dir, so a catalogue entry for
 * `/opt/model-manager/device-scripts/x` lands in `<agent dir>/device-scripts/x`).
 */
export interface ScriptsRoot {
  root: string;
  disk: string;
}

const refused = (remoteDir: string, root: string, why: string) =>
  new RpcError('script_dir_refused', `remote_dir ${JSON.stringify(remoteDir)} is outside the board's scripts folder ${root} (MM_SCRIPTS_ROOT): ${why}; nothing was written.`);

/** `dir` is `base` or inside it (both absolute and normalised). */
export function isInside(dir: string, base: string): boolean {
  const rel = path.relative(base, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The folder on disk for `remoteDir`, created, after checking that it lies in the root: no
 * `.`/`..` segments, inside `root` by name, and inside `disk` once symlinks are resolved
 * (a link under the root pointing elsewhere is refused). Throws `script_dir_refused`.
 */
export async function scriptFolder(scripts: ScriptsRoot, remoteDir: string): Promise<string> {
  if (!remoteDir.startsWith('/') || remoteDir.split('/').some((s) => s === '.' || s === '..')) {
    throw refused(remoteDir, scripts.root, 'it must be an absolute path without "." or ".." segments');
  }
  const root = path.resolve(scripts.root);
  const wanted = path.resolve(remoteDir);
  if (!isInside(wanted, root)) throw refused(remoteDir, scripts.root, 'it is not inside it');
  const folder = path.join(scripts.disk, path.relative(root, wanted));
  await fsp.mkdir(scripts.disk, { recursive: true });
  const realBase = await fsp.realpath(scripts.disk);
  // The deepest part that exists already must resolve inside the root before anything is created.
  let existing = folder;
  for (;;) {
    try {
      const real = await fsp.realpath(existing);
      if (!isInside(real, realBase)) throw refused(remoteDir, scripts.root, `${existing} leads outside it through a symbolic link`);
      break;
    } catch (err) {
      if (err instanceof RpcError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      existing = path.dirname(existing);
    }
  }
  await fsp.mkdir(folder, { recursive: true });
  const real = await fsp.realpath(folder);
  if (!isInside(real, realBase)) throw refused(remoteDir, scripts.root, 'it leads outside it through a symbolic link');
  return real;
}
