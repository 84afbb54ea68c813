import type { Readable } from 'node:stream';
import type { ChunkReader } from '@mm/protocol';
import type { PinLedger } from './blob-pins.ts';

export interface BlobWriteOptions {
  /** More bytes than this reject with PayloadTooLargeError (and nothing is kept). */
  maxBytes?: number;
  /** The content must hash to this (lowercase hex), or the write rejects with ContentMismatchError. */
  expectedSha256?: string;
  /** Aborting rejects with the signal's reason and leaves nothing behind. */
  signal?: AbortSignal;
}

export interface StoredBlob {
  sha256: string;
  size: number;
}

/** One stored content as `list` sees it. */
export interface ListedBlob {
  sha256: string;
  /** When its bytes were last written (an ingest of the same bytes refreshes it). */
  modifiedAt: Date;
}

/** A write into the store, chunk by chunk (see BlobStore.createWriter). */
export interface BlobWriter {
  /** Appends and hashes `chunks` in order; rejects with PayloadTooLargeError past maxBytes. */
  writev(chunks: Buffer[]): Promise<void>;
  /**
   * Makes the bytes durable (fsync), checks the hash, moves the content into place, pinned
   * until `release`, as `ingest` does. `expectedSha256` here is for a writer that learnt
   * the content's hash only after it was created (it overrides the option's).
   */
  commit(expectedSha256?: string): Promise<StoredBlob>;
  /** The bytes written so far (all of them once the writer is done). */
  readonly size: number;
  /** Gives up: removes what was written. */
  abort(): Promise<void>;
}

/** Inclusive byte offsets, as in an HTTP Range (`end` defaults to the last byte). */
export interface ByteRange {
  start?: number;
  end?: number;
}

/**
 * Content-addressed bytes: invocation files, what boards send back, PAC archives on their
 * way to a board. Each distinct content is kept once, named by its sha256. Which content is
 * in use is the database's business; the store keeps the bytes and a "pin" per content
 * between its write and the row that records it, so collecting unused content never
 * removes bytes someone is about to record.
 *
 * Two implementations (`createBlobStore`, storage/create-blob-store.ts): files on a local or
 * shared disk (`ContentStore`) and an S3-compatible object store (`S3BlobStore`).
 *
 * Pins live in this process's memory and, with several replicas on one store (a real
 * PostgreSQL), also in the `content_pins` table (`usePinLedger`, storage/content-pins.ts):
 * a pin is taken before the bytes are put into place, and every replica's collection
 * (`collectUnusedContent`, the sweeps) leaves pinned content alone, deciding under a per-content
 * database lock that a new pin waits for. So content one replica has written and is about to
 * record is never removed by another replica, even when it has the same bytes as content the
 * other is letting go of. Content no row records and no pin holds (a replica died) is left to
 * the orphan grace period of the sweep (`sweepOrphanContent`).
 */
export interface BlobStore {
  /**
   * Prepares the store and drops what a crash left half-written: temporary writes older
   * than the store's grace period (younger ones may be another replica's writes in flight).
   * Once, at startup.
   */
  init(): Promise<void>;
  /**
   * Streams `source` in, hashing it on the way; resolves once it is durably stored. The
   * content stays pinned until `release(sha256)`.
   */
  ingest(source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>, opts?: BlobWriteOptions): Promise<StoredBlob>;
  /**
   * A read stream of the content (or of `range`): rejects when it is not there; once open,
   * it reads the same bytes even if the content is removed meanwhile.
   */
  open(sha256: string, range?: ByteRange): Promise<Readable>;
  /**
   * Optional, for stores on this server's disk: the content from `start` as a ChunkReader
   * the agent link reads straight into its frame buffers (rejects when it is not there).
   */
  openReader?(sha256: string, start: number): Promise<ChunkReader>;
  /**
   * An ingest driven by its writer (the agent link's receiver writes into it directly,
   * batch by batch) instead of a stream the store reads. Same checks and result as
   * `ingest`; `abort` leaves nothing behind. Every store has one (the S3 store's is a
   * multipart upload), so what a board sends back is received one way.
   */
  createWriter(opts?: BlobWriteOptions): BlobWriter;
  /** The content's size and when its bytes were last written, or undefined when it is not stored. */
  stat(sha256: string): Promise<{ size: number; modifiedAt: Date } | undefined>;
  has(sha256: string): Promise<boolean>;
  /** Ends one pin a write put on its content. Never rejects; awaiting it is needed only before collecting that content. */
  release(sha256: string): Promise<void>;
  /** Several replicas: each pin is also recorded where every replica's collection looks. */
  usePinLedger?(ledger: PinLedger): void;
  /**
   * Pins content the store already holds, as an ingest does, until `release`; false when
   * it does not hold it (attach by digest).
   */
  pin(sha256: string): Promise<boolean>;
  /**
   * Takes a complete local file whose bytes hash to `sha256` (a finished resumable upload)
   * into the store, pinned until `release`. The fs store renames it (no copy).
   */
  adopt(file: string, sha256: string): Promise<void>;
  /**
   * Deletes the content when it is not pinned here and `decide` confirms nothing uses it.
   * `decide` runs under the content's lock in this process (no write of the same bytes lands
   * in between) and, when the content must go, calls `removeBytes` itself while it still
   * holds the database lock that keeps other replicas' writers of those bytes waiting (inside
   * its transaction, before it commits); it resolves to whether the content went (answering
   * true without calling `removeBytes` removes the bytes right after).
   */
  removeIfUnused(sha256: string, decide: (removeBytes: () => Promise<void>) => Promise<boolean>): Promise<boolean>;
  /** Every stored content, for pruning what the database no longer knows. */
  list(): AsyncIterable<ListedBlob>;
  /**
   * Where a client may fetch the content itself (a time-limited URL on the object store),
   * or undefined to have the server stream it. Only the S3 store with MM_S3_REDIRECT_DOWNLOADS=1.
   */
  downloadUrl?(sha256: string, opts: { contentType: string; contentDisposition: string }): Promise<string | undefined>;
  /** Lets go of connections (shutdown); the fs store has none. */
  close?(): void;
}
