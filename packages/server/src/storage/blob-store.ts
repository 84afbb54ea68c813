import type { Readable } from 'node:stream';
import type { ChunkReader } from '@mm/protocol';

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

/** A write into the store, chunk by chunk (see BlobStore.createWriter). */
export interface BlobWriter {
  /** Appends and hashes `chunks` in order; rejects with PayloadTooLargeError past maxBytes. */
  writev(chunks: Buffer[]): Promise<void>;
  /** Makes the bytes durable (fsync), checks the hash, moves the content into place, pinned until `release`, as `ingest` does. */
  commit(): Promise<StoredBlob>;
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
 * Today's implementation keeps files on the local disk (`ContentStore`, storage/content-store.ts);
 * replicas need one that all of them share (an object store), behind this same interface.
 */
export interface BlobStore {
  /** Prepares the store and drops what a crash left half-written. Once, at startup. */
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
   * Optional: an ingest driven by its writer (the agent link's receiver writes into it
   * directly, batch by batch) instead of a stream the store reads. Same checks and result
   * as `ingest`; `abort` leaves nothing behind.
   */
  createWriter?(opts?: BlobWriteOptions): BlobWriter;
  /** The content's size, or undefined when it is not stored. */
  stat(sha256: string): Promise<{ size: number } | undefined>;
  has(sha256: string): Promise<boolean>;
  /** Ends one pin a write put on its content. */
  release(sha256: string): void;
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
   * Deletes the content when it is not pinned and `dropRecord` confirms nothing uses it
   * (`dropRecord` runs under the content's lock, so no write of the same bytes lands in
   * between). Resolves to whether it went.
   */
  removeIfUnused(sha256: string, dropRecord: () => Promise<boolean>): Promise<boolean>;
  /** Every stored sha256, for pruning what the database no longer knows. */
  list(): AsyncIterable<string>;
}
