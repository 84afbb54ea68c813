import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

/** The package's tree that is one agent version: `opt/mm-agent/{lib,node,bin}`. */
const VERSION_ROOT = 'opt/mm-agent/';

export class DebArchiveError extends Error {
  override name = 'DebArchiveError';
}

/** Where `data.tar.gz` sits in a .deb (an `ar` archive of control, data and version members). */
async function dataMember(file: string): Promise<{ start: number; size: number }> {
  const handle = await fsp.open(file, 'r');
  try {
    const magic = Buffer.alloc(8);
    await handle.read(magic, 0, 8, 0);
    if (magic.toString('latin1') !== '!<arch>\n') throw new DebArchiveError('not a Debian package (no ar header)');
    const { size: total } = await handle.stat();
    const header = Buffer.alloc(60);
    for (let at = 8; at + 60 <= total; ) {
      await handle.read(header, 0, 60, at);
      const name = header.toString('latin1', 0, 16).trim().replace(/\/$/, '');
      const size = Number(header.toString('latin1', 48, 58).trim());
      if (!Number.isSafeInteger(size) || size < 0) throw new DebArchiveError('a damaged ar member header');
      if (name.startsWith('data.tar')) {
        if (name !== 'data.tar.gz') throw new DebArchiveError(`${name}: only gzip-compressed packages can be unpacked here (build with dpkg-deb -Zgzip)`);
        return { start: at + 60, size };
      }
      at += 60 + size + (size % 2);
    }
  } finally {
    await handle.close();
  }
  throw new DebArchiveError('the package has no data.tar.gz');
}

/**
 * Unpacks the package's `opt/mm-agent/` tree into `dest` (which must not exist): regular
 * files with their modes, folders, and symbolic links that stay inside. Anything else, or a
 * path that climbs out, refuses the whole package.
 */
export async function unpackAgentVersion(debFile: string, dest: string): Promise<{ files: number }> {
  const { start, size } = await dataMember(debFile);
  await fsp.mkdir(dest);
  let files = 0;
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const done = (err?: unknown) => (err ? next(err as Error) : next());
    // A refused entry ends the extraction; its own stream's error then goes nowhere else.
    stream.on('error', () => {});
    const name = header.name.replace(/^\.\//, '');
    if (!name.startsWith(VERSION_ROOT) || name === VERSION_ROOT) {
      stream.resume();
      stream.on('end', () => done());
      return;
    }
    const rel = name.slice(VERSION_ROOT.length).replace(/\/$/, '');
    const target = path.resolve(dest, rel);
    if (!target.startsWith(dest + path.sep)) return done(new DebArchiveError(`${name} points outside the package`));
    const work = async () => {
      if (header.type === 'directory') {
        await fsp.mkdir(target, { recursive: true });
        stream.resume();
      } else if (header.type === 'file') {
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await pipeline(stream, fs.createWriteStream(target, { mode: (header.mode ?? 0o644) & 0o755 }));
        files++;
      } else if (header.type === 'symlink' && header.linkname && !path.isAbsolute(header.linkname) && path.resolve(path.dirname(target), header.linkname).startsWith(dest + path.sep)) {
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.symlink(header.linkname, target);
        stream.resume();
      } else {
        throw new DebArchiveError(`${name}: a ${header.type} entry is not allowed in an agent package`);
      }
    };
    work().then(() => done(), done);
  });
  await pipeline(fs.createReadStream(debFile, { start, end: start + size - 1 }), createGunzip(), extract);
  return { files };
}
