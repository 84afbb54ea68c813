import { createReadStream, createWriteStream } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { AppArchiveError } from './app-errors.ts';
import { assertInside, isErrno, pathExists, removeCreatedFolders, safeSegments } from '../archive/archive-paths.ts';

/** An app is a bitstream, an overlay, a few JSON files and an xclbin: tens of MB. */
export const DEFAULT_MAX_APP_BYTES = 1024 ** 3;
export const DEFAULT_MAX_APP_ENTRIES = 2_000;
/** shell.json and accel.json are a few lines. */
const MAX_JSON_BYTES = 64 * 1024;
/** dfx-mgrd ignores folder names longer than this. */
const MAX_APP_NAME = 64;
/** The shell types dfx-mgrd knows (its README, "shell.json"). */
export const SHELL_TYPES = ['XRT_FLAT', 'PL_FLAT', 'PL_DFX'] as const;

export interface InstallAppOptions {
  /** MM_APPS_DIR: where app folders live; created when missing. */
  appsDir: string;
  maxBytes?: number;
  maxEntries?: number;
}

export interface InstalledApp {
  /** The app's folder name, now `<appsDir>/<app>`: its name for dfx-mgrd. */
  app: string;
  files: number;
  bytes: number;
  shellType: string;
  /** An app of that name was there and was replaced. */
  replaced: boolean;
}

interface Limits {
  maxBytes: number;
  maxEntries: number;
}

/**
 * Installs an accelerated application from an archive (`.tar`, `.tar.gz` or `.zip`, told
 * apart by their first bytes) holding one app folder: `<app>/shell.json`, a bitstream
 * (`*.bit.bin` or `*.bin`), a device-tree overlay (`*.dtbo`), optionally `accel.json`, an
 * `*.xclbin` and sub-folders (a DFX design's accelerators).
 *
 * Checked as strictly as a PAC archive (pac-archive.ts): refused with an AppArchiveError
 * (`invalid_app_archive`) for an absolute path, a `..` segment, a backslash or a control
 * character in a name; a link of any kind, a device or a fifo; more than one top-level
 * entry, or a file there; a hidden or over-long app name; a missing shell.json, bitstream
 * or overlay; a shell.json that is not a JSON object with a `shell_type` dfx-mgrd knows
 * (`XRT_FLAT`, `PL_FLAT`, `PL_DFX`), or an accel.json that is not a JSON object; an archive
 * that is not one of the three formats, is truncated or empty; more than the size limits.
 *
 * The archive is spooled and extracted in a staging folder beside MM_APPS_DIR (or, when that
 * cannot be written, a hidden one inside it), then moved into place with one rename: dfx-mgrd,
 * which watches MM_APPS_DIR, never sees a half-written app. An app of the same name is
 * replaced only once the new one is complete. A refused archive leaves nothing behind.
 */
export async function installAppArchive(source: Readable, options: InstallAppOptions): Promise<InstalledApp> {
  const appsDir = path.resolve(options.appsDir);
  const limits = { maxBytes: options.maxBytes ?? DEFAULT_MAX_APP_BYTES, maxEntries: options.maxEntries ?? DEFAULT_MAX_APP_ENTRIES };
  const firstCreated = await fsp.mkdir(appsDir, { recursive: true });
  const staging = await makeStaging(appsDir);
  try {
    const archive = path.join(staging, 'archive');
    const size = await spool(source, archive, limits.maxBytes + limits.maxEntries * 2048 + 16 * 1024 ** 2);
    if (size === 0) throw new AppArchiveError('empty', 'the archive is empty');
    const tree = path.join(staging, 'tree');
    await fsp.mkdir(tree);
    const state: ExtractionState = { tree, realTree: await fsp.realpath(tree), limits, top: null, entries: 0, files: 0, bytes: 0 };
    const format = await sniff(archive);
    if (format === 'zip') await extractZip(archive, state);
    else await extractTar(archive, format === 'gzip', state);
    if (state.top === null) throw new AppArchiveError('empty', 'the archive holds no app folder');
    const shellType = await checkAppFolder(path.join(tree, state.top), state.top);
    const replaced = await moveIntoPlace(path.join(tree, state.top), appsDir, state.top, staging);
    await fsp.rm(staging, { recursive: true, force: true });
    return { app: state.top, files: state.files, bytes: state.bytes, shellType, replaced };
  } catch (err) {
    source.destroy();
    await fsp.rm(staging, { recursive: true, force: true }).catch(() => {});
    if (firstCreated !== undefined) await removeCreatedFolders(appsDir, firstCreated);
    throw err;
  }
}

/** A staging folder on the same file system as MM_APPS_DIR, out of dfx-mgrd's sight when possible. */
async function makeStaging(appsDir: string): Promise<string> {
  try {
    return await fsp.mkdtemp(path.join(path.dirname(appsDir), '.mm-app-staging-'));
  } catch {
    return fsp.mkdtemp(path.join(appsDir, '.mm-app-staging-'));
  }
}

/** Writes the source to a file, at most `maxBytes`. Errors of the source itself pass through as they are. */
async function spool(source: Readable, file: string, maxBytes: number): Promise<number> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > maxBytes) callback(tooLarge(maxBytes));
      else callback(null, chunk);
    },
  });
  await pipeline(source, counter, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  return bytes;
}

async function sniff(file: string): Promise<'zip' | 'gzip' | 'tar'> {
  const handle = await fsp.open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    if (bytesRead >= 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5) && (head[3] === 4 || head[3] === 6)) return 'zip';
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
    return 'tar';
  } finally {
    await handle.close();
  }
}

interface ExtractionState {
  tree: string;
  realTree: string;
  limits: Limits;
  top: string | null;
  entries: number;
  files: number;
  bytes: number;
}

type EntryType = 'file' | 'directory' | 'symlink' | 'link' | 'device' | 'fifo' | 'other';

/** Checks one entry's name and type; answers its path segments (empty: the archive's own root). */
function admit(name: string, type: EntryType, state: ExtractionState): string[] {
  state.entries += 1;
  if (state.entries > state.limits.maxEntries) throw new AppArchiveError('too_large', `the archive has more than ${state.limits.maxEntries} entries`);
  const segments = safeSegments(name, unsafePath);
  if (type === 'symlink') throw new AppArchiveError('link', `${name} is a symbolic link; links are not allowed in an app archive`);
  if (type === 'link') throw new AppArchiveError('link', `${name} is a hard link; links are not allowed in an app archive`);
  if (type === 'device') throw new AppArchiveError('special_file', `${name} is a device file; only files and folders are allowed`);
  if (type === 'fifo') throw new AppArchiveError('special_file', `${name} is a fifo; only files and folders are allowed`);
  if (type === 'other') throw new AppArchiveError('special_file', `${name} is of an unsupported type; only files and folders are allowed`);
  const [top] = segments;
  if (top === undefined) {
    if (type !== 'directory') throw unsafePath(name, 'names no file');
    return segments;
  }
  if (state.top === null) {
    if (top.startsWith('.')) throw new AppArchiveError('layout', `the top-level folder ${JSON.stringify(top)} is hidden (starts with ".")`);
    if (top.length > MAX_APP_NAME) throw new AppArchiveError('layout', `the app folder name is longer than ${MAX_APP_NAME} characters (dfx-mgrd ignores such folders)`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(top)) throw new AppArchiveError('layout', `the app folder name ${JSON.stringify(top)} holds characters other than letters, digits, ".", "_", "+" and "-"`);
    state.top = top;
  } else if (top !== state.top) {
    throw new AppArchiveError('layout', `the archive holds more than one top-level entry (${state.top}, ${top}); it must hold one app folder`);
  }
  if (segments.length === 1 && type !== 'directory') throw new AppArchiveError('layout', `${name} is a file at the top level; the archive must hold one app folder`);
  assertInside(state.tree, path.join(state.tree, ...segments), name, 'the app folder', unsafePath);
  return segments;
}

/** Writes one file of the archive under the tree, counting its bytes against the limit as they come. */
/** An entry's bytes: a Node stream (zip) or tar-stream's streamx one; both iterate as buffers. */
type EntryData = AsyncIterable<unknown> & { destroy(err?: Error): unknown };

async function writeFile(segments: string[], name: string, data: EntryData, mode: number, state: ExtractionState): Promise<void> {
  const target = path.join(state.tree, ...segments);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  // Nothing but this code writes into the fresh tree and it makes no links; check the real parent anyway.
  assertInside(state.realTree, path.join(await fsp.realpath(path.dirname(target)), path.basename(target)), name, 'the app folder', unsafePath);
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      state.bytes += chunk.length;
      if (state.bytes > state.limits.maxBytes) callback(tooLarge(state.limits.maxBytes));
      else callback(null, chunk);
    },
  });
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(target, 'wx', (mode & 0o755) | 0o600);
  } catch (err) {
    data.destroy();
    if (isErrno(err, 'EEXIST') || isErrno(err, 'EISDIR') || isErrno(err, 'ENOTDIR')) {
      throw new AppArchiveError('layout', `${name} appears twice in the archive (or as both a file and a folder)`);
    }
    throw err;
  }
  await pipeline(data, counter, handle.createWriteStream());
  state.files += 1;
}

async function extractTar(file: string, gzipped: boolean, state: ExtractionState): Promise<void> {
  const extract = tar.extract();
  const input = createReadStream(file, { highWaterMark: 1024 * 1024 });
  const feed = gzipped ? pipeline(input, createGunzip(), extract) : pipeline(input, extract);
  feed.catch(() => {}); // seen through the entry iteration below
  let end = 0;
  try {
    for await (const entry of extract) {
      const { header } = entry;
      const segments = admit(header.name, tarType(header.type), state);
      const isDirectory = header.type === 'directory';
      end = entry.offset + 512 + (isDirectory ? 0 : Math.ceil((header.size ?? 0) / 512) * 512);
      if (isDirectory || segments.length === 0) {
        if (segments.length > 0) await fsp.mkdir(path.join(state.tree, ...segments), { recursive: true });
        entry.resume();
        continue;
      }
      await writeFile(segments, header.name, entry, header.mode ?? 0o644, state);
    }
    await feed;
  } catch (err) {
    throw classifyTarError(err, gzipped);
  } finally {
    input.destroy();
    extract.destroy();
  }
  if (state.entries > 0) {
    const size = gzipped ? undefined : (await fsp.stat(file)).size;
    // A tar ends with zero blocks; without them it was cut short at an entry boundary.
    if (size !== undefined && size < end + 512) throw new AppArchiveError('truncated', 'the archive is truncated (its end-of-archive blocks are missing)');
  }
}

function tarType(type: tar.Header['type']): EntryType {
  switch (type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'directory';
    case 'symlink':
      return 'symlink';
    case 'link':
      return 'link';
    case 'character-device':
    case 'block-device':
      return 'device';
    case 'fifo':
      return 'fifo';
    default:
      return 'other';
  }
}

function classifyTarError(err: unknown, gzipped: boolean): Error {
  if (err instanceof AppArchiveError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  if (code === 'Z_BUF_ERROR') return new AppArchiveError('truncated', `the gzip stream is truncated (${message})`);
  if (/unexpected end/i.test(message)) return new AppArchiveError('truncated', `the archive is truncated, or not a tar archive (${message})`);
  if (code.startsWith('Z_')) return new AppArchiveError('not_an_archive', `not a valid gzip stream (${message})`);
  // A failing disk (ENOSPC, EIO...) is not the archive's fault: it passes through as it is.
  if (/^E[A-Z]+$/.test(code)) return err as Error;
  return new AppArchiveError('not_an_archive', `not a tar, tar.gz or zip archive${gzipped ? ' (the gzip stream does not hold a tar)' : ''}: ${message}`);
}

async function extractZip(file: string, state: ExtractionState): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { strictFileNames: true, validateEntrySizes: true, decodeStrings: true });
  } catch (err) {
    throw classifyZipError(err);
  }
  try {
    if (zip.entryCount > state.limits.maxEntries) throw new AppArchiveError('too_large', `the archive has more than ${state.limits.maxEntries} entries`);
    for await (const entry of zip.eachEntry()) {
      const unixMode = (entry.externalFileAttributes >>> 16) & 0o177777;
      const kind = zipType(entry.fileName, unixMode);
      const segments = admit(entry.fileName, kind, state);
      if (entry.isEncrypted()) throw new AppArchiveError('not_an_archive', `${entry.fileName} is encrypted`);
      if (kind === 'directory' || segments.length === 0) {
        if (segments.length > 0) await fsp.mkdir(path.join(state.tree, ...segments), { recursive: true });
        continue;
      }
      if (state.bytes + entry.uncompressedSize > state.limits.maxBytes) throw tooLarge(state.limits.maxBytes);
      let data: Readable;
      try {
        data = await zip.openReadStreamPromise(entry);
      } catch (err) {
        throw classifyZipError(err);
      }
      await writeFile(segments, entry.fileName, data, unixMode & 0o777 || 0o644, state).catch((err: unknown) => {
        throw classifyZipError(err);
      });
    }
  } catch (err) {
    throw classifyZipError(err);
  } finally {
    zip.close();
  }
}

/** A zip entry's kind: from the Unix mode its maker stored (links, devices), else from its name. */
function zipType(name: string, unixMode: number): EntryType {
  const format = unixMode & 0o170000;
  if (format === 0o120000) return 'symlink';
  if (format === 0o020000 || format === 0o060000) return 'device';
  if (format === 0o010000) return 'fifo';
  if (format === 0o140000) return 'other';
  if (name.endsWith('/') || format === 0o040000) return 'directory';
  return 'file';
}

function classifyZipError(err: unknown): Error {
  if (err instanceof AppArchiveError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/absolute path/i.test(message)) return new AppArchiveError('unsafe_path', `an entry is an absolute path (${message})`);
  if (/invalid relative path/i.test(message)) return new AppArchiveError('unsafe_path', `an entry has a ".." segment (${message})`);
  if (/invalid characters/i.test(message)) return new AppArchiveError('unsafe_path', `an entry name holds a backslash (${message})`);
  if (/end of central directory|not a zip|invalid .*signature|truncated|unexpected EOF|invalid comment length|too many length or distance/i.test(message)) {
    return new AppArchiveError('truncated', `the zip archive is damaged or truncated (${message})`);
  }
  if (/compression method|unsupported/i.test(message)) return new AppArchiveError('not_an_archive', `the zip archive uses something not supported here (${message})`);
  if (/crc32|size/i.test(message)) return new AppArchiveError('truncated', `the zip archive is damaged (${message})`);
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  if (/^E[A-Z]+$/.test(code)) return err as Error;
  return new AppArchiveError('not_an_archive', `not a valid zip archive (${message})`);
}

/** The app folder must hold shell.json (a known shell_type), a bitstream and an overlay; accel.json, if there, is a JSON object. */
async function checkAppFolder(dir: string, app: string): Promise<string> {
  const names = await fsp.readdir(dir);
  const files = new Set<string>();
  for (const name of names) if ((await fsp.lstat(path.join(dir, name))).isFile()) files.add(name);
  if (!files.has('shell.json')) throw new AppArchiveError('missing_file', `the app folder ${app} has no shell.json`);
  if (![...files].some((n) => /\.bin$/i.test(n))) throw new AppArchiveError('missing_file', `the app folder ${app} has no bitstream (*.bit.bin or *.bin)`);
  if (![...files].some((n) => /\.dtbo$/i.test(n))) throw new AppArchiveError('missing_file', `the app folder ${app} has no device-tree overlay (*.dtbo)`);
  const shell = await readJsonObject(path.join(dir, 'shell.json'), 'shell.json', 'bad_shell_json');
  const shellType = shell.shell_type;
  if (typeof shellType !== 'string' || !(SHELL_TYPES as readonly string[]).includes(shellType)) {
    throw new AppArchiveError('bad_shell_json', `shell.json has shell_type ${JSON.stringify(shellType ?? null)}; dfx-mgrd knows ${SHELL_TYPES.join(', ')}`);
  }
  if (shellType === 'PL_DFX') {
    const slots = Number(shell.num_pl_slots);
    if (!Number.isInteger(slots) || slots < 1) throw new AppArchiveError('bad_shell_json', 'shell.json of a PL_DFX design needs num_pl_slots (a positive whole number)');
  }
  if (files.has('accel.json')) {
    const accel = await readJsonObject(path.join(dir, 'accel.json'), 'accel.json', 'bad_accel_json');
    if (accel.accel_type !== undefined && typeof accel.accel_type !== 'string') throw new AppArchiveError('bad_accel_json', 'accel.json has an accel_type that is not a string');
  }
  return shellType;
}

async function readJsonObject(file: string, what: string, problem: 'bad_shell_json' | 'bad_accel_json'): Promise<Record<string, unknown>> {
  const { size } = await fsp.stat(file);
  if (size > MAX_JSON_BYTES) throw new AppArchiveError(problem, `${what} is larger than ${MAX_JSON_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(await fsp.readFile(file, 'utf8'));
  } catch (err) {
    throw new AppArchiveError(problem, `${what} is not valid JSON (${(err as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new AppArchiveError(problem, `${what} is not a JSON object`);
  return doc as Record<string, unknown>;
}

/** Replaces `<appsDir>/<name>` with the staged folder, keeping the old one until the new is in. */
async function moveIntoPlace(staged: string, appsDir: string, name: string, staging: string): Promise<boolean> {
  const target = path.join(appsDir, name);
  let old: string | null = null;
  if (await pathExists(target)) {
    old = path.join(staging, 'old');
    await fsp.rename(target, old);
  }
  try {
    await fsp.rename(staged, target);
  } catch (err) {
    if (old !== null) await fsp.rename(old, target);
    throw err;
  }
  return old !== null;
}

/** Removes the folders `mkdir(appsDir, { recursive: true })` created, if still empty. */
function unsafePath(name: string, why: string): AppArchiveError {
  return new AppArchiveError('unsafe_path', `the entry ${JSON.stringify(name)} ${why}`);
}

function tooLarge(maxBytes: number): AppArchiveError {
  return new AppArchiveError('too_large', `the archive's files add up to more than ${maxBytes} bytes`);
}
