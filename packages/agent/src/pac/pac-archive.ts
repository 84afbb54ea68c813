import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline, Readable, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { PacArchiveError } from './pac-errors.ts';
import { assertInside, isErrno, pathExists, removeCreatedFolders, safeSegments } from '../archive/archive-paths.ts';

/** Sum of the archive's file sizes accepted by default (a PAC is boot assets and an xclbin). */
export const DEFAULT_MAX_PAC_BYTES = 2 * 1024 ** 3;
export const DEFAULT_MAX_PAC_ENTRIES = 10_000;

const TAR_BLOCK = 512;

/** One entry of tar-stream's extract: its header, its offset, and a stream of its data. */
type TarEntry = tar.Extract extends AsyncIterable<infer Entry> ? Entry : never;

export interface InstallPacArchiveOptions {
  /** Where PAC folders live (setting MM_PAC_DIR); created when missing. */
  pacDir: string;
  /** Refuse an archive whose files add up to more than this many bytes (uncompressed). */
  maxBytes?: number;
  /** Refuse an archive with more entries than this. */
  maxEntries?: number;
}

export interface InstalledPac {
  /** The PAC folder's name: the archive's top-level folder, now at `<pacDir>/<pac>`. */
  pac: string;
  files: number;
  bytes: number;
}

/**
 * Installs a PAC from a `.tar` or `.tar.gz` stream (gzip is recognised by its magic bytes)
 * holding one PAC folder, as `<pacDir>/<folder>`.
 *
 * The archive is streamed to disk, file by file, into a staging folder inside `pacDir`
 * (`.staging-<random>`, on the same filesystem so the final move is a rename). It is refused
 * with a PacArchiveError (code `invalid_pac_archive`) when an entry has an absolute path, a
 * `..` segment or a backslash, is a symbolic or hard link, a device or a fifo; when entries
 * do not all sit in one top-level folder; when there is no manifest.yaml; when the stream is
 * not a tar (or gzip of one), is truncated or empty; or when it exceeds the size limits.
 * A refused archive leaves nothing behind, inside or outside `pacDir` (a `pacDir` this call
 * had to create is removed again).
 *
 * manifest.yaml is accepted directly in the top-level folder or where real PACs keep it,
 * in `hwconfig/<cfg>/manifest.yaml` (what xlnx-config reads, and what AMD's PAC tooling
 * produces); an archive with neither is refused.
 *
 * An existing PAC of the same name is replaced only once the new one is fully extracted:
 * old → `.old-<random>`, new → name, then the old one is removed (and put back if the second
 * rename fails).
 *
 * `source` is consumed to its end on success and destroyed on failure. Errors of `source`
 * itself (the transfer failed) are rethrown as they are, not as PacArchiveError.
 */
export async function installPacArchive(source: Readable, options: InstallPacArchiveOptions): Promise<InstalledPac> {
  const pacDir = path.resolve(options.pacDir);
  const limits = {
    maxBytes: options.maxBytes ?? DEFAULT_MAX_PAC_BYTES,
    maxEntries: options.maxEntries ?? DEFAULT_MAX_PAC_ENTRIES,
  };

  const firstCreated = await fs.mkdir(pacDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(pacDir, '.staging-'));
  try {
    const extracted = await extractArchive(source, staging, limits);
    await moveIntoPlace(path.join(staging, extracted.top), pacDir, extracted.top);
    await fs.rm(staging, { recursive: true, force: true });
    return { pac: extracted.top, files: extracted.files, bytes: extracted.bytes };
  } catch (err) {
    source.destroy();
    // Best effort: a failing clean-up must not hide why the install failed.
    await fs.rm(staging, { recursive: true, force: true }).catch(() => {});
    if (firstCreated !== undefined) await removeCreatedFolders(pacDir, firstCreated);
    throw err;
  }
}

interface ExtractedArchive {
  top: string;
  files: number;
  bytes: number;
}

interface Limits {
  maxBytes: number;
  maxEntries: number;
}

/** Wraps an error of the caller's stream so that it is told apart from archive errors. */
class SourceError extends Error {
  readonly original: Error;
  constructor(original: unknown) {
    super(original instanceof Error ? original.message : String(original));
    this.original = original instanceof Error ? original : new Error(String(original));
  }
}

async function extractArchive(source: Readable, staging: string, limits: Limits): Promise<ExtractedArchive> {
  const chunks = chunksOf(source);
  const head = await readHead(chunks, 2);
  if (head.length === 0) throw new PacArchiveError('empty', 'the archive is empty');
  const gzipped = head[0] === 0x1f && head[1] === 0x8b;
  const realStaging = await fs.realpath(staging);

  // Bytes handed to the tar parser: headers, padding and end blocks on top of the files.
  const maxTarBytes = limits.maxBytes + limits.maxEntries * 4 * TAR_BLOCK + 16 * 1024 ** 2;
  let tarBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      tarBytes += chunk.length;
      if (tarBytes > maxTarBytes) callback(tooLarge(limits));
      else callback(null, chunk);
    },
  });
  const raw = Readable.from(prepend(head, chunks), { objectMode: false });
  const extract = tar.extract();

  // The first error the extraction died of (entry streams may only see a generic
  // "destroyed"). Errors are classified where they surface, in explainFailure.
  let extractError: Error | null = null;
  extract.on('error', (err: Error) => {
    extractError ??= err;
  });
  const explainFailure = async (err: unknown): Promise<Error> => {
    if (extract.destroying && !extract.destroyed) {
      await new Promise<void>((resolve) => extract.once('close', () => resolve()));
    }
    return classifyStreamError(extractError ?? err, gzipped);
  };

  // The iterator listens for 'entry' from its creation on: create it before any data flows,
  // or an entry emitted meanwhile is lost and the extraction stalls.
  const entries = extract[Symbol.asyncIterator]();
  const onStreamError = (err: Error | null) => {
    if (err) extract.destroy(err);
  };
  if (gzipped) pipeline(raw, createGunzip(), counter, onStreamError);
  else pipeline(raw, counter, onStreamError);
  counter.pipe(extract);

  const state: ExtractionState = {
    explainFailure,
    staging,
    realStaging,
    limits,
    top: null,
    entries: 0,
    files: 0,
    bytes: 0,
    manifestFound: false,
    tarEnd: 0,
  };
  try {
    for (;;) {
      let step: IteratorResult<TarEntry>;
      try {
        step = await entries.next();
      } catch (err) {
        throw await explainFailure(err);
      }
      if (step.done) break;
      await extractEntry(step.value, state);
    }
  } finally {
    extract.destroy();
    raw.destroy();
  }

  if (state.top === null) throw new PacArchiveError('empty', 'the archive holds no PAC folder');
  // A tar ends with zero blocks; without them it was cut short at an entry boundary.
  if (tarBytes < state.tarEnd + TAR_BLOCK) {
    throw new PacArchiveError('truncated', 'the archive is truncated (its end-of-archive blocks are missing)');
  }
  if (!state.manifestFound) {
    throw new PacArchiveError(
      'no_manifest',
      `the PAC folder ${state.top} has no manifest.yaml (expected ${state.top}/manifest.yaml or ${state.top}/hwconfig/<cfg>/manifest.yaml)`,
    );
  }
  return { top: state.top, files: state.files, bytes: state.bytes };
}

interface ExtractionState {
  /** Why reading the archive failed: the caller's error, or a PacArchiveError. */
  explainFailure: (err: unknown) => Promise<Error>;
  staging: string;
  realStaging: string;
  limits: Limits;
  /** The single top-level folder, once an entry named it. */
  top: string | null;
  entries: number;
  files: number;
  bytes: number;
  manifestFound: boolean;
  /** Offset just past the last entry's data: the end-of-archive blocks must follow. */
  tarEnd: number;
}

async function extractEntry(entry: TarEntry, state: ExtractionState): Promise<void> {
  const { header } = entry;
  state.entries += 1;
  if (state.entries > state.limits.maxEntries) {
    throw new PacArchiveError('too_large', `the archive has more than ${state.limits.maxEntries} entries`);
  }
  const segments = safeSegments(header.name, unsafePath);
  const isDirectory = header.type === 'directory';
  checkEntryType(header);
  state.tarEnd = entry.offset + TAR_BLOCK + (isDirectory ? 0 : Math.ceil(header.size / TAR_BLOCK) * TAR_BLOCK);

  const [top] = segments;
  if (top === undefined) {
    // "./": the archive's own root, as `tar -C dir -cf x.tar .` writes it.
    if (!isDirectory) throw unsafePath(header.name, 'names no file');
    return drain(entry, state);
  }
  if (state.top === null) {
    if (top.startsWith('.')) {
      throw new PacArchiveError('layout', `the top-level folder ${JSON.stringify(top)} is hidden (starts with ".")`);
    }
    state.top = top;
  } else if (top !== state.top) {
    throw new PacArchiveError(
      'layout',
      `the archive holds more than one top-level entry (${state.top}, ${top}); it must hold one PAC folder`,
    );
  }
  if (segments.length === 1 && !isDirectory) {
    throw new PacArchiveError('layout', `${header.name} is a file at the top level; the archive must hold one PAC folder`);
  }

  const target = path.join(state.staging, ...segments);
  assertInside(state.staging, target, header.name, 'the PAC folder', unsafePath);
  if (isDirectory) {
    await fs.mkdir(target, { recursive: true });
    return drain(entry, state);
  }

  state.bytes += header.size;
  if (state.bytes > state.limits.maxBytes) throw tooLarge(state.limits);
  await fs.mkdir(path.dirname(target), { recursive: true });
  // Belt and braces: nothing but this code writes into the fresh staging folder, and it makes
  // no links, but check the real parent path too before writing.
  assertInside(state.realStaging, path.join(await fs.realpath(path.dirname(target)), path.basename(target)), header.name, 'the PAC folder', unsafePath);
  await writeEntryFile(entry, target, header, state);
  state.files += 1;
  if (isManifestPath(segments)) state.manifestFound = true;
}

/** manifest.yaml in the PAC folder itself, or in hwconfig/<cfg>/ like real PACs. */
function isManifestPath(segments: string[]): boolean {
  if (segments.length === 2) return segments[1] === 'manifest.yaml';
  return segments.length === 4 && segments[1] === 'hwconfig' && segments[3] === 'manifest.yaml';
}

function checkEntryType(header: tar.Header): void {
  switch (header.type) {
    case 'file':
    case 'contiguous-file':
    case 'directory':
      return;
    case 'symlink':
      throw new PacArchiveError('link', `${header.name} is a symbolic link; links are not allowed in a PAC archive`);
    case 'link':
      throw new PacArchiveError('link', `${header.name} is a hard link; links are not allowed in a PAC archive`);
    case 'character-device':
    case 'block-device':
      throw new PacArchiveError('special_file', `${header.name} is a device file; only files and folders are allowed`);
    case 'fifo':
      throw new PacArchiveError('special_file', `${header.name} is a fifo; only files and folders are allowed`);
    default:
      throw new PacArchiveError(
        'special_file',
        `${header.name} is of an unsupported type (${String(header.type)}); only files and folders are allowed`,
      );
  }
}

/**
 * An entry name → its path segments, refusing what could point outside the staging folder
 * or be read differently elsewhere: absolute paths, drive letters, backslashes (a Windows
 * separator), `..` segments, control characters. `.` and empty segments are dropped.
 */
async function writeEntryFile(entry: TarEntry, target: string, header: tar.Header, state: ExtractionState): Promise<void> {
  // Keep the permission bits but never setuid/setgid/sticky or group/other write.
  const mode = ((header.mode || 0o644) & 0o755) | 0o600;
  let file: FileHandle;
  try {
    file = await fs.open(target, 'wx', mode);
  } catch (err) {
    if (isErrno(err, 'EEXIST') || isErrno(err, 'EISDIR') || isErrno(err, 'ENOTDIR')) {
      throw new PacArchiveError('layout', `${header.name} appears twice in the archive (or as both a file and a folder)`);
    }
    throw err;
  }
  try {
    await forEachChunk(entry, state, (chunk) => writeAll(file, chunk));
  } finally {
    await file.close();
  }
}

async function writeAll(file: FileHandle, chunk: Buffer): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    const { bytesWritten } = await file.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}

/** A folder entry has no data; anything there is skipped. */
function drain(entry: TarEntry, state: ExtractionState): Promise<void> {
  return forEachChunk(entry, state, async () => {});
}

/**
 * Reads an entry's data: errors of the reading (a truncated archive...) are classified,
 * errors of `handle` (a full disk...) pass through as they are.
 */
async function forEachChunk(
  entry: TarEntry,
  state: ExtractionState,
  handle: (chunk: Buffer) => Promise<void>,
): Promise<void> {
  const chunks = entry[Symbol.asyncIterator]();
  for (;;) {
    let step: IteratorResult<unknown>;
    try {
      step = await chunks.next();
    } catch (err) {
      throw await state.explainFailure(err);
    }
    if (step.done) return;
    await handle(step.value as Buffer);
  }
}

/** Errors of the stream plumbing → the caller's own error, or why the archive is refused. */
function classifyStreamError(err: unknown, gzipped: boolean): Error {
  if (err instanceof PacArchiveError) return err;
  if (err instanceof SourceError) return err.original;
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  if (code === 'Z_BUF_ERROR') return new PacArchiveError('truncated', `the gzip stream is truncated (${message})`);
  if (/unexpected end/i.test(message)) {
    return new PacArchiveError('truncated', `the archive is truncated, or not a tar archive (${message})`);
  }
  if (code.startsWith('Z_')) {
    return new PacArchiveError('not_an_archive', `not a valid gzip stream (${message})`);
  }
  return new PacArchiveError(
    'not_an_archive',
    `not a tar or tar.gz archive${gzipped ? ' (the gzip stream does not hold a tar)' : ''}: ${message}`,
  );
}

/** Replaces `<pacDir>/<name>` with the staged folder, keeping the old one until the new is in. */
async function moveIntoPlace(staged: string, pacDir: string, name: string): Promise<void> {
  const target = path.join(pacDir, name);
  let old: string | null = null;
  if (await pathExists(target)) {
    old = path.join(pacDir, `.old-${randomBytes(6).toString('hex')}`);
    await fs.rename(target, old);
  }
  try {
    await fs.rename(staged, target);
  } catch (err) {
    if (old !== null) await fs.rename(old, target);
    throw err;
  }
  if (old !== null) await fs.rm(old, { recursive: true, force: true });
}

/** Removes the folders `fs.mkdir(pacDir, { recursive: true })` created, if still empty. */
async function* chunksOf(source: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of source) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array | string);
  } catch (err) {
    throw new SourceError(err);
  }
}

/** Reads at least `bytes` bytes (fewer at the end of the stream). */
async function readHead(chunks: AsyncGenerator<Buffer>, bytes: number): Promise<Buffer> {
  const head: Buffer[] = [];
  let length = 0;
  while (length < bytes) {
    let step: IteratorResult<Buffer>;
    try {
      step = await chunks.next();
    } catch (err) {
      throw err instanceof SourceError ? err.original : err;
    }
    if (step.done) break;
    head.push(step.value);
    length += step.value.length;
  }
  return Buffer.concat(head);
}

async function* prepend(head: Buffer, rest: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  yield head;
  yield* rest;
}

function unsafePath(name: string, why: string): PacArchiveError {
  return new PacArchiveError('unsafe_path', `the entry ${JSON.stringify(name)} ${why}`);
}

function tooLarge(limits: Limits): PacArchiveError {
  return new PacArchiveError('too_large', `the archive's files add up to more than ${limits.maxBytes} bytes`);
}
