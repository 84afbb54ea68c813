import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

/** The package's tree that is one agent version: `opt/mm-agent/{lib,node,bin}`. */
const VERSION_ROOT = 'opt/mm-agent/';
/** Links followed while resolving one link (as Linux's ELOOP limit). */
const MAX_LINK_HOPS = 40;

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

/** The data of one tar entry: a streamx stream, which Node's pipeline takes as a Readable. */
type EntryStream = Readable;

/** One entry of the version's tree, by its path below `opt/mm-agent/` (segments joined by `/`). */
type PlannedEntry = { kind: 'directory' } | { kind: 'file'; mode: number } | { kind: 'symlink'; target: string };

/**
 * Reads every entry of the package's data and calls `onEntry` with those of the version's
 * tree (its path below `opt/mm-agent/` as segments, or `[]` for the root itself); others are
 * skipped. `onEntry` answers true when it read the entry's data (`stream`); else it is skipped.
 */
async function forEachEntry(
  debFile: string,
  member: { start: number; size: number },
  onEntry: (rel: string[], header: tar.Header, stream: EntryStream) => Promise<boolean>,
): Promise<void> {
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    // A refused entry ends the extraction; its own stream's error then goes nowhere else.
    stream.on('error', () => {});
    const name = header.name.replace(/^\.\//, '');
    const drain = () => new Promise<void>((resolve, reject) => stream.on('end', resolve).on('error', reject).resume());
    const work = async () => {
      if (!name.startsWith(VERSION_ROOT)) return drain();
      const rel = safeSegments(name, name.slice(VERSION_ROOT.length));
      // A folder or link has no data; a file in the first pass is only looked at.
      if (!(await onEntry(rel, header, stream as unknown as EntryStream))) await drain();
    };
    work().then(() => next(), (err: unknown) => next(err as Error));
  });
  await pipeline(fs.createReadStream(debFile, { start: member.start, end: member.start + member.size - 1 }), createGunzip(), extract);
}

/**
 * A path below the version root → its segments; refuses what could name anything but a
 * place below it: absolute paths, `..`, backslashes, control characters.
 */
function safeSegments(name: string, rel: string): string[] {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(rel) || rel.startsWith('/')) throw new DebArchiveError(`${name}: not a plain path`);
  const segments = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new DebArchiveError(`${name} points outside the package`);
  return segments;
}

/**
 * The first pass: every entry of the version's tree, checked as a whole before anything is
 * written (docs/packages.md, "What an update may write"):
 * - only folders, regular files and symbolic links; no name twice (a folder may repeat);
 * - nothing is written through a link: no entry lies below an entry that is a link;
 * - every link, resolved against the links of the archive (each hop, as the kernel would),
 *   stays strictly below the version root; a loop or an absolute link refuses the package.
 */
async function planVersion(debFile: string, member: { start: number; size: number }): Promise<Map<string, PlannedEntry>> {
  const plan = new Map<string, PlannedEntry>();
  await forEachEntry(debFile, member, async (rel, header) => {
    if (rel.length === 0) {
      if (header.type !== 'directory') throw new DebArchiveError(`${header.name}: the version root must be a folder`);
      return false;
    }
    const key = rel.join('/');
    for (let i = 1; i < rel.length; i++) {
      const parent = plan.get(rel.slice(0, i).join('/'));
      if (parent && parent.kind !== 'directory') throw new DebArchiveError(`${header.name} lies below ${rel.slice(0, i).join('/')}, which is not a folder (nothing is written through a link)`);
    }
    const before = plan.get(key);
    if (before && !(before.kind === 'directory' && header.type === 'directory')) throw new DebArchiveError(`${header.name} appears twice in the package`);
    if (header.type === 'directory') plan.set(key, { kind: 'directory' });
    else if (header.type === 'file') plan.set(key, { kind: 'file', mode: (header.mode ?? 0o644) & 0o755 });
    else if (header.type === 'symlink') {
      const target = header.linkname ?? '';
      if (!target || path.posix.isAbsolute(target) || target.includes('\0')) throw new DebArchiveError(`${header.name}: a link must point to a relative path`);
      plan.set(key, { kind: 'symlink', target });
    } else throw new DebArchiveError(`${header.name}: a ${header.type} entry is not allowed in an agent package`);
    return false;
  });
  // An entry named before the link that it turned out to lie below.
  for (const key of plan.keys()) {
    const rel = key.split('/');
    for (let i = 1; i < rel.length; i++) {
      if (plan.get(rel.slice(0, i).join('/'))?.kind === 'symlink') throw new DebArchiveError(`${VERSION_ROOT}${key} lies below a link (nothing is written through a link)`);
    }
  }
  for (const [key, entry] of plan) if (entry.kind === 'symlink') resolveLink(plan, key, entry.target);
  return plan;
}

/**
 * Resolves the link at `key` through the planned tree, one segment at a time and following
 * every link met on the way, as the kernel would once everything is written; refuses it
 * when any step climbs above the version root, ends at the root itself, or loops.
 */
function resolveLink(plan: Map<string, PlannedEntry>, key: string, target: string): void {
  const refuse = (why: string) => new DebArchiveError(`${VERSION_ROOT}${key} -> ${target}: ${why}`);
  let hops = 0;
  const walk = (from: string[], linkTarget: string): string[] => {
    if (++hops > MAX_LINK_HOPS) throw refuse('the links loop');
    const at = [...from];
    const parts = linkTarget.split('/').filter((s) => s !== '' && s !== '.');
    for (const [i, part] of parts.entries()) {
      if (part === '..') {
        if (at.length === 0) throw refuse('it points outside the package');
        at.pop();
        continue;
      }
      at.push(part);
      const entry = plan.get(at.join('/'));
      if (entry?.kind === 'symlink') {
        const resolved = walk(at.slice(0, -1), entry.target);
        at.splice(0, at.length, ...resolved);
      } else if (entry?.kind === 'file' && i < parts.length - 1) throw refuse(`${at.join('/')} is a file, not a folder`);
    }
    return at;
  };
  const end = walk(key.split('/').slice(0, -1), target);
  if (end.length === 0) throw refuse('it points at the package root');
}

/** Makes `rel`'s folders below `dest` one by one, each checked to be a real folder (never a link). */
async function makeFolders(dest: string, rel: string[]): Promise<void> {
  let at = dest;
  for (const part of rel) {
    at = path.join(at, part);
    await fsp.mkdir(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    const st = await fsp.lstat(at);
    if (!st.isDirectory()) throw new DebArchiveError(`${at} is not a folder`);
  }
}

/**
 * Unpacks the package's `opt/mm-agent/` tree into `dest` (which must not exist): regular
 * files with their modes, folders, and symbolic links that resolve inside. The whole archive
 * is checked first (planVersion): anything else refuses the package with nothing written.
 * Then files are written with O_EXCL|O_NOFOLLOW into folders made one by one (each checked
 * not to be a link), and the links are made last, so nothing is ever written through one.
 */
export async function unpackAgentVersion(debFile: string, dest: string): Promise<{ files: number }> {
  const member = await dataMember(debFile);
  const plan = await planVersion(debFile, member);
  await fsp.mkdir(dest);
  let files = 0;
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  await forEachEntry(debFile, member, async (rel, header, stream) => {
    if (rel.length === 0) return false;
    const key = rel.join('/');
    const planned = plan.get(key);
    // The same file read twice: the second reading must be the one that was checked.
    const kind = header.type === 'file' ? 'file' : header.type === 'directory' ? 'directory' : header.type === 'symlink' ? 'symlink' : 'other';
    if (!planned || planned.kind !== kind) throw new DebArchiveError(`${header.name} changed while the package was unpacked`);
    if (planned.kind === 'directory') {
      await makeFolders(dest, rel);
      return false;
    }
    if (planned.kind !== 'file') return false; // links: made once every file is written
    await makeFolders(dest, rel.slice(0, -1));
    const handle = await fsp.open(path.join(dest, ...rel), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, planned.mode);
    try {
      const writeAll = async (chunk: Buffer) => {
        for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
      };
      await pipeline(stream, new Writable({ write: (chunk: Buffer, _enc, cb) => void writeAll(chunk).then(() => cb(), cb) }));
    } finally {
      await handle.close();
    }
    files++;
    return true;
  });
  for (const [key, entry] of plan) {
    if (entry.kind !== 'symlink') continue;
    const rel = key.split('/');
    await makeFolders(dest, rel.slice(0, -1));
    await fsp.symlink(entry.target, path.join(dest, ...rel));
  }
  return { files };
}
