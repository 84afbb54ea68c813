import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { eq, lt } from 'drizzle-orm';
import type { StoreContext } from '../store-context.ts';
import { uploads } from '../db/schema.ts';
import { ApiError, BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import { attachInvocationFile } from '../invocations/invocation-files.ts';
import type { FileRecord, InputFileKind } from '../invocations/invocation-records.ts';
import { READ_CHUNK_BYTES } from '../storage/content-store.ts';
import { TUS_CONTENT_TYPE } from './tus-protocol.ts';

export type UploadRow = typeof uploads.$inferSelect;

/** Bytes gathered from the request before one positioned write (and hash update). */
const WRITE_BATCH_BYTES = 1024 * 1024;
/** During a long PATCH the offset is made durable (fsync + row) this often. */
const CHECKPOINT_BYTES = 64 * 1024 * 1024;

export class ChecksumMismatchError extends ApiError {
  constructor(expected: string, got: string) {
    super(400, 'checksum_mismatch', 'Bad Request', `The uploaded bytes hash to ${got}, not the declared sha256 ${expected}; nothing was attached. Upload the file again.`);
  }
}

const uploadTooLong = (length: number) =>
  new BadRequestError('upload_too_long', `The body runs past Upload-Length (${length} bytes): none of it was kept and nothing was attached.`);

/** A PATCH body: the request's stream, which `destroy` ends at once (a stalled client superseded). */
export type RequestBody = AsyncIterable<Uint8Array> & { destroy?(error?: Error): void };

export const uploadNotFound = (id: string) =>
  new NotFoundError('upload_not_found', `No upload ${JSON.stringify(id)} (it failed, was terminated or expired; a finished one is kept until it expires).`);

/** The kind of an upload attached to no invocation: stored by its sha256 only. */
export const CONTENT_UPLOAD_KIND = 'content' as const;

export interface NewUpload {
  /** Null: stored content only (e.g. a PAC archive a rollout will name by sha256). */
  invocationId: number | null;
  kind: InputFileKind | typeof CONTENT_UPLOAD_KIND;
  filename: string;
  sha256: string | undefined;
  metadata: string;
  length: number;
}

export interface AppendResult {
  row: UploadRow;
  offset: number;
  /** Set when this PATCH carried the last byte: the attached file. */
  file?: FileRecord;
  /** Set when this PATCH carried the last byte of an upload without an invocation: what is stored. */
  stored?: { sha256: string; size: number };
}

/** A running PATCH: a newer PATCH of the same upload stops it (its client is most likely gone). */
interface ActiveAppend {
  abort: AbortController;
  done: Promise<void>;
  offset: number;
}

/** The running hash of an upload's bytes [0, offset). */
interface RunningHash {
  hash: Hash;
  offset: number;
}

/**
 * tus uploads into the content store, bytes written once: each PATCH appends to
 * `MM_DATA_DIR/uploads/<id>.part` (hashing as it writes); the finished part file is renamed
 * into the content store under its sha256 and attached like a multipart upload. The
 * upload's row (offset, expiry) is in the database, so a restart loses nothing: the running
 * hash lives in memory and, after a restart, is rebuilt by reading the part file once.
 */
export class ResumableUploads {
  readonly dir: string;
  private readonly active = new Map<string, ActiveAppend>();
  private readonly hashes = new Map<string, RunningHash>();
  private sweepTimer: TimerHandle | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly ctx: StoreContext,
    /** Expiry and the sweeps go by it. */
    private readonly clock: Clock = systemClock,
  ) {
    this.dir = path.join(ctx.config.dataDir, 'uploads');
  }

  /** Sweeps now and then every while (expired uploads, part files without a row); stops at shutdown. */
  start(): void {
    const every = Math.min(Math.max(this.ctx.config.uploadExpiryMs / 4, 1000), 10 * 60_000);
    const tick = () => {
      this.sweeping = this.sweep()
        .catch((err: unknown) => this.ctx.log.warn({ err }, 'upload sweep failed'))
        .finally(() => {
          this.sweeping = undefined;
        });
    };
    this.sweepTimer = this.clock.setInterval(tick, every);
    this.sweepTimer.unref();
    setImmediate(tick);
  }

  /** Stops the sweeps and any append still running (graceful shutdown). */
  async close(): Promise<void> {
    this.clock.clearInterval(this.sweepTimer);
    for (const a of this.active.values()) a.abort.abort();
    await this.sweeping;
  }

  partPath(id: string): string {
    return path.join(this.dir, `${id}.part`);
  }

  expiresAt(): Date {
    return new Date(this.clock.now() + this.ctx.config.uploadExpiryMs);
  }

  async create(input: NewUpload): Promise<UploadRow> {
    if (input.length > this.ctx.config.maxUploadBytes) {
      throw new PayloadTooLargeError(`The file (${input.length} bytes) is larger than the limit of ${this.ctx.config.maxUploadBytes} bytes.`);
    }
    await fsp.mkdir(this.dir, { recursive: true });
    const [row] = await this.ctx.database.db
      .insert(uploads)
      .values({ ...input, sha256: input.sha256 ?? null, expiresAt: this.expiresAt() })
      .returning();
    await fsp.writeFile(this.partPath(row!.id), '', { flag: 'wx' });
    return row!;
  }

  /** The upload's row; its offset includes the bytes of a PATCH still running. 404 when gone or expired. */
  async get(id: string): Promise<UploadRow> {
    const row = await this.find(id);
    if (!row) throw uploadNotFound(id);
    const running = this.active.get(id);
    return running ? { ...row, offset: Math.max(row.offset, running.offset) } : row;
  }

  private async find(id: string): Promise<UploadRow | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const [row] = await this.ctx.database.db.select().from(uploads).where(eq(uploads.id, id));
    if (!row || row.expiresAt.getTime() <= this.clock.now()) return undefined;
    return row;
  }

  /** Termination: the row and the bytes go. */
  async terminate(id: string): Promise<void> {
    await this.stopActive(id);
    if (!(await this.find(id))) throw uploadNotFound(id);
    await this.remove(id);
  }

  private async remove(id: string): Promise<void> {
    this.hashes.delete(id);
    await this.ctx.database.db.delete(uploads).where(eq(uploads.id, id));
    await fsp.rm(this.partPath(id), { force: true });
  }

  private async stopActive(id: string): Promise<void> {
    const running = this.active.get(id);
    if (!running) return;
    running.abort.abort(new ConflictError('upload_superseded', 'A newer request for this upload took over.'));
    await running.done;
  }

  /**
   * PATCH: appends the body at `offset` (which must be the upload's offset: 409 otherwise).
   * Bytes received before the client went away are kept (fsynced, offset recorded). When the
   * last byte arrives, checks the declared sha256 and attaches the file. A body that runs past
   * Upload-Length (`declaredBytes`, Content-Length, says so up front; a chunked one is found
   * out) is 400 `upload_too_long`: none of its bytes are kept and nothing is attached.
   * A PATCH still running for the upload (a stalled client) is ended at once.
   */
  async append(
    id: string,
    offset: number,
    contentType: string | undefined,
    body: RequestBody,
    signal: AbortSignal,
    declaredBytes?: number,
  ): Promise<AppendResult> {
    if ((contentType ?? '').split(';')[0]!.trim().toLowerCase() !== TUS_CONTENT_TYPE) {
      throw new UnsupportedMediaTypeError('Send PATCH bodies as application/offset+octet-stream.');
    }
    await this.stopActive(id);
    const row = await this.find(id);
    if (!row) throw uploadNotFound(id);
    if (this.active.has(id)) throw new ConflictError('upload_busy', 'Another request is writing this upload; ask for its offset (HEAD) and try again.');
    if (offset !== row.offset) {
      throw new ConflictError('offset_mismatch', `Upload-Offset ${offset} does not match the upload's offset ${row.offset}; ask for it (HEAD) and continue from there.`);
    }
    if (declaredBytes !== undefined && offset + declaredBytes > row.length) throw uploadTooLong(row.length);
    // Finished (the file is attached): only an empty PATCH at its end is fine, and changes nothing.
    if (row.finishedAt) return { row, offset: row.offset };
    const abort = new AbortController();
    let settle!: () => void;
    const entry: ActiveAppend = { abort, offset: row.offset, done: new Promise<void>((r) => (settle = r)) };
    this.active.set(id, entry);
    const onClientGone = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onClientGone);
    // A newer PATCH or a DELETE must not wait for a stalled body's next byte: end it now.
    abort.signal.addEventListener('abort', () => body.destroy?.(), { once: true });
    try {
      const reached = await this.writeBody(row, body, abort.signal, entry);
      const updated = { ...row, offset: reached, expiresAt: this.expiresAt() };
      if (reached < row.length) return { row: updated, offset: reached };
      const done = await this.finish(updated);
      return { row: updated, offset: reached, ...('kind' in done ? { file: done } : { stored: done }) };
    } finally {
      signal.removeEventListener('abort', onClientGone);
      this.active.delete(id);
      settle();
    }
  }

  /** Writes the body after the part file's recorded bytes; resolves to the new offset. */
  private async writeBody(row: UploadRow, body: RequestBody, stop: AbortSignal, entry: ActiveAppend): Promise<number> {
    const file = this.partPath(row.id);
    const running = await this.runningHash(row);
    const handle = await fsp.open(file, 'r+');
    let offset = row.offset;
    let durable = row.offset;
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (batchBytes === 0) return;
      const chunks = batch;
      batch = [];
      const n = batchBytes;
      batchBytes = 0;
      await handle.writev(chunks, offset);
      for (const c of chunks) running.hash.update(c);
      offset += n;
      running.offset = offset;
      entry.offset = offset;
    };
    const checkpoint = async () => {
      if (offset === durable) return;
      await handle.datasync();
      await this.ctx.database.db.update(uploads).set({ offset, expiresAt: this.expiresAt() }).where(eq(uploads.id, row.id));
      durable = offset;
    };
    let failure: unknown;
    let tooLong = false;
    try {
      for await (const chunk of body) {
        if (stop.aborted) throw stop.reason ?? new Error('aborted');
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (bytes.length > row.length - offset - batchBytes) {
          tooLong = true;
          break;
        }
        if (bytes.length) {
          batch.push(bytes);
          batchBytes += bytes.length;
          // HEAD counts what arrived: a request that ends now (a stalled client superseded) still writes its batch.
          entry.offset = offset + batchBytes;
        }
        if (batchBytes >= WRITE_BATCH_BYTES) await flush();
        if (offset - durable >= CHECKPOINT_BYTES) await checkpoint();
      }
    } catch (err) {
      // The client went away (or a newer PATCH took over): what arrived is kept.
      failure = err;
    }
    if (tooLong) {
      // A body longer than the upload is a broken client: this request's bytes go, the upload stays where it was.
      try {
        await handle.truncate(row.offset);
      } finally {
        await handle.close();
      }
      this.hashes.delete(row.id);
      entry.offset = row.offset;
      if (durable !== row.offset) await this.ctx.database.db.update(uploads).set({ offset: row.offset }).where(eq(uploads.id, row.id));
      throw uploadTooLong(row.length);
    }
    try {
      await flush();
      await checkpoint();
    } finally {
      await handle.close();
    }
    if (failure && offset < row.length) {
      if (failure instanceof ApiError) throw failure;
      this.ctx.log.info({ upload: row.id, offset, err: failure }, 'upload request ended early; its bytes are kept');
    }
    return offset;
  }

  /** The hash of the part file's first `row.offset` bytes: the one in memory, or re-read after a restart. */
  private async runningHash(row: UploadRow): Promise<RunningHash> {
    const cached = this.hashes.get(row.id);
    if (cached && cached.offset === row.offset) return cached;
    const file = this.partPath(row.id);
    // Bytes past the recorded offset (a crash mid-PATCH) were never acknowledged: drop them.
    await fsp.truncate(file, row.offset).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw uploadNotFound(row.id);
      throw err;
    });
    const hash = createHash('sha256');
    if (row.offset > 0) {
      for await (const chunk of fs.createReadStream(file, { start: 0, end: row.offset - 1, highWaterMark: READ_CHUNK_BYTES })) {
        hash.update(chunk as Buffer);
      }
    }
    const fresh = { hash, offset: row.offset };
    this.hashes.set(row.id, fresh);
    return fresh;
  }

  /** The last byte is in: check the declared sha256, move the bytes into the store, attach. */
  private async finish(row: UploadRow): Promise<FileRecord | { sha256: string; size: number }> {
    const running = await this.runningHash(row);
    this.hashes.delete(row.id);
    const sha256 = running.hash.digest('hex');
    if (row.sha256 && row.sha256 !== sha256) {
      await this.remove(row.id);
      throw new ChecksumMismatchError(row.sha256, sha256);
    }
    const file = this.partPath(row.id);
    await this.ctx.files.adopt(file, sha256);
    const { db } = this.ctx.database;
    if (row.invocationId === null) {
      // Stored, recorded by nothing yet: the orphan sweep leaves it for its grace period
      // (invocations/invocation-files.ts), long enough to create the rollout that keeps it.
      this.ctx.files.release(sha256);
      await db.update(uploads).set({ offset: row.length, finishedAt: new Date(this.clock.now()) }).where(eq(uploads.id, row.id));
      return { sha256, size: row.length };
    }
    let attached: FileRecord;
    try {
      attached = await attachInvocationFile(this.ctx, row.invocationId, row.kind as InputFileKind, { filename: row.filename, sha256, size: row.length });
    } catch (err) {
      await db.delete(uploads).where(eq(uploads.id, row.id));
      throw err;
    }
    // Kept, finished, until it expires: a client that asks for its offset (HEAD) learns it is done.
    await db.update(uploads).set({ offset: row.length, finishedAt: new Date(this.clock.now()) }).where(eq(uploads.id, row.id));
    return attached;
  }

  /** An empty file is complete at creation. */
  async finishEmpty(row: UploadRow): Promise<FileRecord | { sha256: string; size: number }> {
    return this.finish(row);
  }

  /** Removes expired uploads with their bytes, and part files no upload refers to any more. */
  async sweep(): Promise<void> {
    const { db } = this.ctx.database;
    const expired = await db.delete(uploads).where(lt(uploads.expiresAt, new Date(this.clock.now()))).returning({ id: uploads.id });
    for (const { id } of expired) {
      if (this.active.has(id)) continue;
      this.hashes.delete(id);
      await fsp.rm(this.partPath(id), { force: true });
    }
    let names: string[];
    try {
      names = await fsp.readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const id = name.replace(/\.part$/, '');
      if (!name.endsWith('.part') || this.active.has(id)) continue;
      const [row] = /^[0-9a-f-]{36}$/.test(id) ? await db.select({ id: uploads.id }).from(uploads).where(eq(uploads.id, id)) : [];
      if (!row) {
        this.hashes.delete(id);
        await fsp.rm(path.join(this.dir, name), { force: true });
      }
    }
    if (expired.length) this.ctx.log.info({ uploads: expired.length }, 'removed expired uploads');
  }
}
