import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { PayloadTooLargeError } from '../errors.ts';
import type { BlobStore, BlobWriteOptions, BlobWriter, ByteRange, ListedBlob, StoredBlob } from './blob-store.ts';
import { ContentMismatchError, DEFAULT_TEMP_GRACE_MS } from './content-store.ts';
import { BlobPins, type PinLedger } from './blob-pins.ts';
import { isAbandonedTemp, tempName } from './temp-names.ts';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** CopyObject copies at most 5 GiB in one request; larger objects are copied part by part. */
const MAX_SINGLE_COPY_BYTES = 5 * GiB;

export interface S3BlobStoreOptions {
  /** `MM_S3_ENDPOINT`: unset for AWS S3 itself. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `bucket` in the path (`http://host/bucket/key`) instead of the host name: MinIO, s3rver, most self-hosted stores. */
  forcePathStyle: boolean;
  /** Multipart part size of an ingest (at least 5 MiB, S3's minimum). Memory is about `partSize × (queueSize + 1)`. */
  partSize?: number;
  /** Parts uploaded at once. */
  queueSize?: number;
  /** Temporary objects and unfinished multipart uploads younger than this survive `init` (other replicas' writes). */
  tempGraceMs?: number;
  /** Above this size a copy goes part by part (UploadPartCopy); tests lower it. */
  multipartCopyThreshold?: number;
  /** Part size of such a copy. */
  copyPartSize?: number;
  /** `MM_S3_REDIRECT_DOWNLOADS`: answer downloads with a redirect to a presigned URL (`downloadUrl`). */
  redirectDownloads?: boolean;
}

/** How long a presigned download URL works: long enough for a player to keep seeking in a video. */
export const PRESIGNED_URL_TTL_S = 3600;

/**
 * The BlobStore on an S3-compatible object store. Content is the object `content/<sha256>`.
 *
 * An ingest streams through a hash into a temporary object `tmp/<host>@<pid>-…` (a multipart
 * upload with a bounded queue of parts, so memory stays flat whatever the size and nothing
 * is spooled to local disk), then, once the hash is known and checked, copies it server-side
 * to `content/<sha256>` (S3 has no rename: CopyObject, or UploadPartCopy above 5 GiB) and
 * deletes the temporary object. A failed, aborted or oversized ingest leaves nothing: the
 * multipart upload is aborted or the temporary object deleted.
 *
 * The per-content lock is in this process only; pins are too, and with several replicas also
 * rows every replica's collection honours (`usePinLedger`, see BlobStore). Crashed writes
 * leave temporary objects and unfinished multipart uploads; `init` removes this host's whose
 * process is gone and any older than the grace period, and a bucket lifecycle rule (AbortIncompleteMultipartUpload, expire
 * `tmp/`) is the belt to these braces on stores that support one.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;
  /** Locks and pins per content (blob-pins.ts). */
  private readonly pins = new BlobPins();
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly tempGraceMs: number;
  private readonly multipartCopyThreshold: number;
  private readonly copyPartSize: number;
  private readonly redirectDownloads: boolean;

  constructor(opts: S3BlobStoreOptions) {
    this.bucket = opts.bucket;
    this.partSize = Math.max(5 * MiB, opts.partSize ?? 8 * MiB);
    this.queueSize = Math.max(1, opts.queueSize ?? 2);
    this.tempGraceMs = opts.tempGraceMs ?? DEFAULT_TEMP_GRACE_MS;
    this.multipartCopyThreshold = opts.multipartCopyThreshold ?? MAX_SINGLE_COPY_BYTES;
    this.copyPartSize = Math.max(5 * MiB, opts.copyPartSize ?? 1 * GiB);
    this.redirectDownloads = opts.redirectDownloads ?? false;
    // Downloads (videos, board pulls) hold a socket each for their whole length: the SDK's
    // default of 50 sockets would queue the 51st behind them.
    const agentOptions = { keepAlive: true, maxSockets: 512 };
    this.client = new S3Client({
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.accessKeyId && opts.secretAccessKey
        ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } }
        : {}),
      // Stores other than AWS reject or mis-answer the newer default checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { httpAgent: new http.Agent(agentOptions), httpsAgent: new https.Agent(agentOptions) },
      // A store answers 500 InternalError or 503 SlowDown now and then (S3 asks clients to
      // retry them); replicas copying and collecting the same content key at once met it on a
      // self-hosted store three times in a row. Five attempts, the SDK's backoff between them.
      maxAttempts: 5,
    });
  }

  keyOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new TypeError(`not a sha256: ${JSON.stringify(sha256)}`);
    return `content/${sha256}`;
  }

  /** Removes temporary objects and unfinished multipart uploads older than the grace period. */
  async init(): Promise<void> {
    for await (const obj of this.listObjects('tmp/')) {
      if (isAbandonedTemp(obj.key.slice('tmp/'.length), obj.modifiedAt, this.tempGraceMs)) await this.deleteObject(obj.key);
    }
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      for (;;) {
        const page = await this.client.send(
          new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: 'tmp/', KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
        );
        for (const u of page.Uploads ?? []) {
          if (u.Key && u.UploadId && isAbandonedTemp(u.Key.slice('tmp/'.length), u.Initiated ?? new Date(0), this.tempGraceMs)) {
            await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId })).catch(() => {});
          }
        }
        if (!page.IsTruncated) break;
        keyMarker = page.NextKeyMarker;
        uploadIdMarker = page.NextUploadIdMarker;
      }
    } catch (err) {
      // Some S3-compatible stores (s3rver among them) do not list multipart uploads: their
      // lifecycle rules or their own expiry clean those up.
      if (!isNotImplemented(err)) throw err;
    }
  }

  async ingest(source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>, opts: BlobWriteOptions = {}): Promise<StoredBlob> {
    return this.placeTemp(await this.uploadTemp(source, opts), opts.expectedSha256);
  }

  /**
   * A writer over the same path as `ingest`: its batches go into a multipart upload of a
   * temporary object (parts of `partSize`, a bounded queue, backpressure to the writer), and
   * `commit` checks the hash and copies it into place. `abort` aborts the upload.
   */
  createWriter(opts: BlobWriteOptions = {}): BlobWriter {
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    const body = new PassThrough({ highWaterMark: MiB });
    const giveUp = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, giveUp.signal]) : giveUp.signal;
    const uploading = this.uploadTemp(body, { maxBytes, signal });
    let failure: unknown;
    uploading.catch((err: unknown) => {
      failure = err;
    });
    // The upload ending before the body did is a failure of the store (or an abort).
    const uploadEnded = uploading.then(
      () => Promise.reject(new Error('the upload ended before its bytes did')),
      (err: unknown) => Promise.reject(err),
    );
    uploadEnded.catch(() => {});
    let size = 0;
    return {
      writev: async (chunks) => {
        if (failure !== undefined) throw failure;
        for (const chunk of chunks) size += chunk.byteLength;
        if (size > maxBytes) throw new PayloadTooLargeError(`The file is larger than the limit of ${maxBytes} bytes.`);
        let full = false;
        for (const chunk of chunks) full = !body.write(chunk) || full;
        if (full) await Promise.race([once(body, 'drain'), uploadEnded]);
      },
      get size() {
        return size;
      },
      commit: async (expectedSha256 = opts.expectedSha256) => {
        body.end();
        return this.placeTemp(await uploading, expectedSha256);
      },
      abort: async () => {
        giveUp.abort(new Error('the write was given up'));
        await uploading.catch(() => {});
      },
    };
  }

  /**
   * Streams `source` through a hash into a temporary object (a multipart upload above one
   * part); on any failure nothing is left behind and the error (the signal's reason when
   * aborted) is thrown.
   */
  private async uploadTemp(
    source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
    opts: Pick<BlobWriteOptions, 'maxBytes' | 'signal'>,
  ): Promise<{ key: string; sha256: string; size: number }> {
    const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
    const tempKey = `tmp/${tempName()}`;
    const hash = createHash('sha256');
    let size = 0;
    const body = new PassThrough({ highWaterMark: MiB });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: tempKey, Body: body },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    // Started now, before anything is awaited, so it reads the body as it fills. A failing
    // upload stops the pipeline (it would otherwise wait forever for a reader).
    const uploaded = upload.done();
    let uploadFailed = false;
    let pipelineFailed = false;
    uploaded.catch((err: unknown) => {
      // Only a failure of the store itself; one that follows the pipeline's is its echo.
      if (pipelineFailed) return;
      uploadFailed = true;
      body.destroy(err instanceof Error ? err : new Error(String(err)));
    });
    try {
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
          body,
          ...(opts.signal ? [{ signal: opts.signal }] : []),
        );
      } catch (err) {
        pipelineFailed = true;
        if (uploadFailed) await uploaded; // the store's own error says more than the cut pipeline's
        throw err;
      }
      await uploaded;
    } catch (err) {
      // Parts go with the aborted multipart upload; a single-part upload may have landed.
      if (!uploadFailed) await upload.abort().catch(() => {});
      await uploaded.catch(() => {});
      await this.deleteObject(tempKey).catch(() => {});
      if (opts.signal?.aborted && opts.signal.reason !== undefined) throw opts.signal.reason;
      throw err;
    }
    return { key: tempKey, sha256: hash.digest('hex'), size };
  }

  /** Checks the uploaded temporary object's hash and copies it to its content key, pinned; the temporary object goes whatever happens. */
  private async placeTemp(temp: { key: string; sha256: string; size: number }, expectedSha256: string | undefined): Promise<StoredBlob> {
    const { key: tempKey, sha256, size } = temp;
    try {
      if (expectedSha256 !== undefined && expectedSha256 !== sha256) {
        throw new ContentMismatchError(`content hashes to ${sha256}, expected ${expectedSha256}`);
      }
      // Pinned first (where every replica looks, with several), then copied into place.
      await this.pins.pinned(sha256, async () => {
        // Overwrites an existing copy (same bytes), refreshing its modification time, which
        // keeps other replicas' orphan sweeps off it for another grace period.
        await this.copyObject(tempKey, this.keyOf(sha256), size);
      });
      return { sha256, size };
    } finally {
      await this.deleteObject(tempKey).catch(() => {});
    }
  }

  async pin(sha256: string): Promise<boolean> {
    return this.pins.pinned(sha256, () => this.has(sha256));
  }

  /** Several replicas on one bucket: pins are also rows every replica's collection honours. */
  usePinLedger(ledger: PinLedger): void {
    this.pins.useLedger(ledger);
  }

  /**
   * Uploads a complete local file whose bytes hash to `sha256` straight to its key (a
   * multipart upload appears only once complete, so no reader sees half of it), then
   * unlinks the file. Pinned from before the upload, so this process's collector keeps it.
   */
  async adopt(file: string, sha256: string): Promise<void> {
    const key = this.keyOf(sha256);
    await this.pins.pinned(sha256, async () => {});
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: fs.createReadStream(file, { highWaterMark: MiB }) },
        partSize: this.partSize,
        queueSize: this.queueSize,
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (err) {
      await this.release(sha256);
      throw err;
    }
    await fsp.rm(file, { force: true });
  }

  async open(sha256: string, range: ByteRange = {}): Promise<Readable> {
    const key = this.keyOf(sha256);
    const start = range.start ?? 0;
    const header = range.end !== undefined ? `bytes=${start}-${range.end}` : start > 0 ? `bytes=${start}-` : undefined;
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(header ? { Range: header } : {}) }));
      if (!(res.Body instanceof Readable)) throw new Error('the S3 client answered a body that is not a Node stream');
      return res.Body;
    } catch (err) {
      // A range starting at the end (a board resuming a pull it already has whole; an empty
      // object) is 416 to S3, but an empty read to our callers.
      if (statusOf(err) === 416 && (await this.has(sha256))) return Readable.from([]);
      // Callers treat missing content as the fs store reports it.
      if (statusOf(err) === 404) throw Object.assign(new Error(`content ${sha256} is not in the store`), { code: 'ENOENT', cause: err });
      throw err;
    }
  }

  async stat(sha256: string): Promise<{ size: number; modifiedAt: Date } | undefined> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(sha256) }));
      return { size: res.ContentLength ?? 0, modifiedAt: res.LastModified ?? new Date(0) };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.stat(sha256)) !== undefined;
  }

  release(sha256: string): Promise<void> {
    return this.pins.release(sha256);
  }

  /** Whether a write's pin still holds the content (tests). */
  isPinned(sha256: string): boolean {
    return this.pins.has(sha256);
  }

  async removeIfUnused(sha256: string, decide: (removeBytes: () => Promise<void>) => Promise<boolean>): Promise<boolean> {
    const key = this.keyOf(sha256);
    return this.pins.removeIfUnused(sha256, () => this.deleteObject(key), decide);
  }


  async *list(): AsyncIterable<ListedBlob> {
    for await (const obj of this.listObjects('content/')) {
      const sha256 = obj.key.slice('content/'.length);
      if (SHA256_HEX.test(sha256)) yield { sha256, modifiedAt: obj.modifiedAt };
    }
  }

  /**
   * A time-limited URL a client can GET the content from directly (Range works on it), with
   * the download's Content-Type and Content-Disposition. See docs/storage.md for when the
   * server redirects to it instead of streaming.
   */
  async presignedUrl(sha256: string, opts: { expiresInS: number; contentType?: string; contentDisposition?: string }): Promise<string> {
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.keyOf(sha256),
        ...(opts.contentType ? { ResponseContentType: opts.contentType } : {}),
        ...(opts.contentDisposition ? { ResponseContentDisposition: opts.contentDisposition } : {}),
      }),
      { expiresIn: opts.expiresInS },
    );
  }

  async downloadUrl(sha256: string, opts: { contentType: string; contentDisposition: string }): Promise<string | undefined> {
    if (!this.redirectDownloads) return undefined;
    return this.presignedUrl(sha256, { expiresInS: PRESIGNED_URL_TTL_S, ...opts });
  }

  /** Stops the client's sockets (shutdown, tests). */
  close(): void {
    this.client.destroy();
  }

  private async *listObjects(prefix: string): AsyncIterable<{ key: string; modifiedAt: Date }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        if (o.Key) yield { key: o.Key, modifiedAt: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async deleteObject(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Server-side copy: one CopyObject up to the threshold (5 GiB on S3), UploadPartCopy beyond. */
  private async copyObject(from: string, to: string, size: number): Promise<void> {
    const source = `${this.bucket}/${from}`;
    if (size <= this.multipartCopyThreshold) {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: source }));
      return;
    }
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: to }));
    if (!UploadId) throw new Error('the store answered CreateMultipartUpload without an UploadId');
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let start = 0, part = 1; start < size; start += this.copyPartSize, part++) {
        const end = Math.min(start + this.copyPartSize, size) - 1;
        const res = await this.client.send(
          new UploadPartCopyCommand({
            Bucket: this.bucket,
            Key: to,
            UploadId,
            PartNumber: part,
            CopySource: source,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        const etag = res.CopyPartResult?.ETag;
        if (!etag) throw new Error(`the store answered UploadPartCopy of part ${part} without an ETag`);
        parts.push({ ETag: etag, PartNumber: part });
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId, MultipartUpload: { Parts: parts } }),
      );
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId })).catch(() => {});
      throw err;
    }
  }
}

function statusOf(err: unknown): number | undefined {
  const meta = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata;
  if (meta?.httpStatusCode !== undefined) return meta.httpStatusCode;
  const name = (err as { name?: string } | undefined)?.name;
  return name === 'NotFound' || name === 'NoSuchKey' ? 404 : undefined;
}

function isNotImplemented(err: unknown): boolean {
  const status = statusOf(err);
  const name = (err as { name?: string } | undefined)?.name;
  return status === 501 || status === 405 || name === 'NotImplemented';
}
