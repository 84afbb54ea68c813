import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PayloadTooLargeError } from '../errors.ts';
import { openFileReader, RollingSync, writeAllv, type ChunkReader } from '@mm/protocol';
import type { BlobStore, BlobWriteOptions, BlobWriter, ByteRange, ListedBlob, StoredBlob } from './blob-store.ts';
import { BlobPins, type PinLedger } from './blob-pins.ts';
import { isAbandonedTemp, tempName } from './temp-names.ts';

/** Read chunk size for stored content: 64 KiB (Node's default) caps downloads near 0.5 GB/s. */
export const READ_CHUNK_BYTES = 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;
const TEMP_DIR_NAME = '.tmp';
/**
 * Temporary writes younger than this are left alone by the startup sweep: on a volume that
 * several replicas share they may be another replica's uploads in flight.
 */
export const DEFAULT_TEMP_GRACE_MS = 60 * 60_000;

export class ContentMismatchError extends Error {
  override name = 'ContentMismatchError';
}


/**
 * The BlobStore on the local disk (`MM_DATA_DIR/content`): each distinct content is one file named by its sha256,
 * at `<root>/<first two hex digits>/<sha256>`, so the same bytes are stored once.
 *
 * Content is written to a temp file under `<root>/.tmp`, hashed while it streams, fsynced
 * and only then renamed into place, so a stored file is always complete. Which content is
 * in use is the database's business (contents / invocation_files rows); this class only
 * keeps the bytes, plus a per-content "pin" between an ingest and the row that records it,
 * so that collecting unused content never removes bytes someone is about to record
 * (see `removeIfUnused`; with several replicas the pins are also rows, see `usePinLedger`).
 *
 * Several replicas may share the folder (a shared volume): temp names carry the host, pid and
 * random bytes, the startup sweep leaves other processes' young temp files alone, the rename into place is
 * atomic on one filesystem, and removals are decided by the database (see BlobStore).
 */
export class ContentStore implements BlobStore {
  readonly root: string;
  readonly tempDir: string;
  /** Locks and pins per content (blob-pins.ts). */
  private readonly pins = new BlobPins();

  private readonly tempGraceMs: number;

  constructor(root: string, opts: { tempGraceMs?: number } = {}) {
    this.root = path.resolve(root);
    this.tempDir = path.join(this.root, TEMP_DIR_NAME);
    this.tempGraceMs = opts.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS;
  }

  /**
   * Creates the folders and removes temp files a crash may have left: this host's whose
   * process is gone, and any older than the grace period (younger ones may belong to another
   * replica on a shared volume).
   * Call once at startup.
   */
  async init(): Promise<void> {
    await fsp.mkdir(this.tempDir, { recursive: true });
    for (const name of await fsp.readdir(this.tempDir)) {
      const file = path.join(this.tempDir, name);
      const st = await fsp.lstat(file).catch(() => undefined);
      if (st && isAbandonedTemp(name, st.mtime, this.tempGraceMs)) await fsp.rm(file, { force: true, recursive: true });
    }
  }

  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new TypeError(`not a sha256: ${JSON.stringify(sha256)}`);
    return path.join(this.root, sha256.slice(0, 2), sha256);
  }

  async has(sha256: string): Promise<boolean> {
    try {
      return (await fsp.stat(this.pathOf(sha256))).isFile();
    } catch {
      return false;
    }
  }

  /**
   * Streams into a temp file under root, hashing while streaming; fsync; rename into place.
   * Rejects (leaving nothing behind) on source error, abort, over maxBytes
   * (PayloadTooLargeError) or sha mismatch. The stored content stays pinned (safe from
   * `removeIfUnused`) until `release(sha256)`; attaching it to an invocation does that.
   */
  async ingest(
    source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
    opts: BlobWriteOptions = {},
  ): Promise<StoredBlob> {
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    // Synchronous on purpose: nothing may be awaited before pipeline() listens to the
    // source, or an early source error would be emitted to nobody (an uncaught exception).
    fs.mkdirSync(this.tempDir, { recursive: true });
    const tempPath = path.join(this.tempDir, `${tempName()}.part`);
    const hash = createHash('sha256');
    let size = 0;
    // `flush` fsyncs before close: the rename below must never expose a partly written file.
    const sink = fs.createWriteStream(tempPath, { flags: 'wx', flush: true, highWaterMark: READ_CHUNK_BYTES });
    try {
      await pipeline(
        source,
        async function* hashAndCount(chunks: AsyncIterable<Uint8Array | string>) {
          for await (const chunk of chunks) {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            size += bytes.byteLength;
            if (size > maxBytes) throw new PayloadTooLargeError(`The file is larger than the limit of ${maxBytes} bytes.`);
            hash.update(bytes);
            yield bytes;
          }
        },
        sink,
        ...(opts.signal ? [{ signal: opts.signal }] : []),
      );
      return { sha256: await this.moveIntoPlace(tempPath, hash.digest('hex'), opts.expectedSha256), size };
    } catch (err) {
      // The sink opens its file asynchronously: a failure before that open completes would
      // otherwise remove nothing and then see the file created. Remove it once it is closed.
      if (!sink.closed) {
        const closed = new Promise<void>((resolve) => sink.once('close', () => resolve()));
        sink.destroy();
        await closed;
      }
      await fsp.rm(tempPath, { force: true });
      // pipeline reports an abort as a generic AbortError; the caller's reason says why.
      if (opts.signal?.aborted && opts.signal.reason !== undefined) throw opts.signal.reason;
      throw err;
    }
  }

  /**
   * `ingest` driven from the outside (the agent link's receiver): each `writev` appends and
   * hashes a batch (the hash runs while the write is on the thread pool), `commit` fsyncs,
   * checks the sha256 and renames into place. No stream in between, so no re-buffering.
   */
  createWriter(opts: BlobWriteOptions = {}): BlobWriter {
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    fs.mkdirSync(this.tempDir, { recursive: true });
    const tempPath = path.join(this.tempDir, `${tempName()}.part`);
    const hash = createHash('sha256');
    let size = 0;
    let opening: Promise<fsp.FileHandle> | undefined;
    let closed = false;
    const handle = () => (opening ??= fsp.open(tempPath, 'wx'));
    const rolling = new RollingSync();
    const close = async () => {
      if (closed || !opening) return;
      closed = true;
      await rolling.settle();
      await (await opening.catch(() => undefined))?.close().catch(() => {});
    };
    const removeTemp = async () => {
      await close();
      await fsp.rm(tempPath, { force: true });
    };
    return {
      writev: async (chunks) => {
        for (const chunk of chunks) size += chunk.byteLength;
        if (size > maxBytes) throw new PayloadTooLargeError(`The file is larger than the limit of ${maxBytes} bytes.`);
        const writing = handle().then(async (h) => {
          await writeAllv(h, chunks);
          return h;
        });
        for (const chunk of chunks) hash.update(chunk);
        let bytes = 0;
        for (const chunk of chunks) bytes += chunk.byteLength;
        rolling.wrote(await writing, bytes);
      },
      get size() {
        return size;
      },
      commit: async (expectedSha256 = opts.expectedSha256) => {
        try {
          await rolling.settle();
          await (await handle()).sync();
          await close();
          return { sha256: await this.moveIntoPlace(tempPath, hash.digest('hex'), expectedSha256), size };
        } catch (err) {
          await removeTemp();
          throw err;
        }
      },
      abort: removeTemp,
    };
  }

  /**
   * The end of every write: checks the hash, renames the durable temp file into place under
   * the content's lock and pins it (until `release`). The rename replaces an existing copy
   * (same bytes) atomically, and re-creates content whose file was collected meanwhile.
   */
  private async moveIntoPlace(tempPath: string, sha256: string, expected: string | undefined): Promise<string> {
    if (expected !== undefined && expected !== sha256) throw new ContentMismatchError(`content hashes to ${sha256}, expected ${expected}`);
    const finalPath = this.pathOf(sha256);
    // Pinned first (where every replica looks, with several), then put into place.
    await this.pins.pinned(sha256, async () => {
      await fsp.mkdir(path.dirname(finalPath), { recursive: true });
      await fsp.rename(tempPath, finalPath);
    });
    await syncDirectory(path.dirname(finalPath));
    return sha256;
  }

  /** Several replicas on one store: pins are also rows every replica's collection honours. */
  usePinLedger(ledger: PinLedger): void {
    this.pins.useLedger(ledger);
  }

  /** The content from `start`, read straight into the agent link's frame buffers. */
  openReader(sha256: string, start: number): Promise<ChunkReader> {
    return openFileReader(this.pathOf(sha256), start);
  }

  /**
   * Pins content the store already holds (as an ingest does) so it survives until the row
   * that records it is written; false when the store does not hold it. Release with `release`.
   */
  async pin(sha256: string): Promise<boolean> {
    return this.pins.pinned(sha256, () => this.has(sha256));
  }

  /**
   * Takes a complete, fsynced file whose bytes hash to `sha256` (e.g. a finished resumable
   * upload) into the store by renaming it into place: the bytes are not copied. The file
   * must be on the store's filesystem. Pinned like an ingest's content until `release`.
   */
  async adopt(file: string, sha256: string): Promise<void> {
    const finalPath = this.pathOf(sha256);
    await this.pins.pinned(sha256, async () => {
      await fsp.mkdir(path.dirname(finalPath), { recursive: true });
      await fsp.rename(file, finalPath);
    });
    await syncDirectory(path.dirname(finalPath));
  }

  async open(sha256: string, range: ByteRange = {}): Promise<Readable> {
    // Opened first: rejects (ENOENT) when the content is not there, and keeps reading the
    // same bytes even if the content is collected meanwhile.
    const handle = await fsp.open(this.pathOf(sha256), 'r');
    return handle.createReadStream({ ...range, highWaterMark: READ_CHUNK_BYTES });
  }

  async stat(sha256: string): Promise<{ size: number; modifiedAt: Date } | undefined> {
    try {
      const st = await fsp.stat(this.pathOf(sha256));
      return st.isFile() ? { size: st.size, modifiedAt: st.mtime } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Ends the pin an ingest put on its content (once the content is recorded, or abandoned). */
  release(sha256: string): Promise<void> {
    return this.pins.release(sha256);
  }

  /** Whether a write's pin still holds the content (tests). */
  isPinned(sha256: string): boolean {
    return this.pins.has(sha256);
  }

  /**
   * Removes the content's file when it is not pinned and `decide` confirms that nothing
   * uses it (dropping the database record in a transaction holding the row lock, and
   * calling `removeBytes` before it commits). Runs under the content's lock, so no ingest of
   * the same bytes in this process can rename a fresh copy into place between the check and
   * the removal. Resolves to whether the file went.
   */
  async removeIfUnused(sha256: string, decide: (removeBytes: () => Promise<void>) => Promise<boolean>): Promise<boolean> {
    const file = this.pathOf(sha256);
    return this.pins.removeIfUnused(sha256, () => fsp.rm(file, { force: true }), decide);
  }


  /** Every content with a file in the store, shard by shard. */
  async *list(): AsyncIterable<ListedBlob> {
    let shards: string[];
    try {
      shards = await fsp.readdir(this.root);
    } catch {
      return;
    }
    for (const shard of shards) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      for (const name of await fsp.readdir(path.join(this.root, shard)).catch(() => [] as string[])) {
        if (!SHA256_HEX.test(name) || !name.startsWith(shard)) continue;
        const st = await fsp.stat(path.join(this.root, shard, name)).catch(() => undefined);
        if (st?.isFile()) yield { sha256: name, modifiedAt: st.mtime };
      }
    }
  }
}

/** Makes a rename durable: fsync the folder that holds the new name. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    await handle?.close();
  }
}
