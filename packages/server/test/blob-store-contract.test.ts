/**
 * The BlobStore contract, held against both implementations: the file-system store and the
 * S3 store on a real S3-compatible server (s3rver in a child process).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../src/errors.ts';
import type { BlobStore } from '../src/storage/blob-store.ts';
import { ContentMismatchError, ContentStore } from '../src/storage/content-store.ts';
import { S3BlobStore, type S3BlobStoreOptions } from '../src/storage/s3-blob-store.ts';
import { startS3Server, type S3Server } from '../../../test/support/s3-server.ts';
import { filesUnder, patterned, sha256 } from './invocations-support.ts';

const MiB = 1024 * 1024;

interface Harness {
  store: BlobStore & { isPinned(sha256: string): boolean };
  /** Everything the store holds besides finished content (temp files / objects). */
  leftovers(): Promise<string[]>;
  /** Every finished content's sha256. */
  contents(): Promise<string[]>;
  /** Puts a temporary write as a crashed process would have left it. */
  crashLeftover(name: string): Promise<void>;
  /** A second store on the same storage whose init treats every temp write as stale. */
  withNoGrace(): BlobStore;
  /** A store that copies part by part above 5 MiB (S3); the same store otherwise. */
  withSmallCopyParts(): BlobStore;
  close(): Promise<void>;
}

async function fsHarness(): Promise<Harness> {
  const root = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'mm-contract-')), 'content');
  const store = new ContentStore(root);
  await store.init();
  return {
    store,
    leftovers: () => filesUnder(store.tempDir),
    contents: async () => (await filesUnder(root)).filter((f) => !f.startsWith('.tmp')).map((f) => path.basename(f)).sort(),
    crashLeftover: (name) => fs.writeFile(path.join(store.tempDir, name), 'half'),
    withNoGrace: () => new ContentStore(root, { tempGraceMs: 0 }),
    withSmallCopyParts: () => store,
    close: () => fs.rm(path.dirname(root), { recursive: true, force: true }),
  };
}

let s3: S3Server | undefined;

async function s3Harness(): Promise<Harness> {
  s3 ??= await startS3Server('mm-contract');
  // A fresh store over the shared bucket for each test, which empties it after.
  const options: S3BlobStoreOptions = { ...s3.storeOptions };
  const store = new S3BlobStore(options);
  await store.init();
  const keys = async (prefix: string) => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key) out.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  };
  const others: S3BlobStore[] = [];
  return {
    store,
    leftovers: () => keys('tmp/'),
    contents: async () => (await keys('content/')).map((k) => k.slice('content/'.length)),
    crashLeftover: async (name) => {
      await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: `tmp/${name}`, Body: 'half' }));
    },
    withNoGrace: () => {
      const other = new S3BlobStore({ ...options, tempGraceMs: 0 });
      others.push(other);
      return other;
    },
    withSmallCopyParts: () => {
      const other = new S3BlobStore({ ...options, multipartCopyThreshold: 5 * MiB, copyPartSize: 5 * MiB });
      others.push(other);
      return other;
    },
    close: async () => {
      for (const k of [...(await keys('tmp/')), ...(await keys('content/'))]) {
        await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: k }));
      }
      for (const o of others) o.close();
      store.close();
    },
  };
}

afterAll(async () => {
  await s3?.stop();
});

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe.each([
  ['fs', fsHarness],
  ['s3', s3Harness],
] as const)('BlobStore contract (%s)', (_kind, makeHarness) => {
  let h: Harness;
  beforeAll(async () => {
    // Starts s3rver once, outside the first test's timeout.
    if (_kind === 's3') s3 ??= await startS3Server('mm-contract');
  });
  beforeEach(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('ingests content under its sha256 once, and reads it whole, in ranges and from its end', async () => {
    const data = patterned(3 * MiB + 17);
    const first = await h.store.ingest(Readable.from([data.subarray(0, 1000), data.subarray(1000)]));
    expect(first).toEqual({ sha256: sha256(data), size: data.length });
    const again = await h.store.ingest(
      (async function* () {
        yield data;
      })(),
    );
    expect(again).toEqual(first);
    expect(await h.contents()).toEqual([first.sha256]);
    expect(await h.leftovers()).toEqual([]);
    expect(await h.store.has(first.sha256)).toBe(true);
    expect(await h.store.stat(first.sha256)).toMatchObject({ size: data.length });
    expect((await readAll(await h.store.open(first.sha256))).equals(data)).toBe(true);
    expect((await readAll(await h.store.open(first.sha256, { start: 5, end: 2_000_004 }))).equals(data.subarray(5, 2_000_005))).toBe(true);
    expect((await readAll(await h.store.open(first.sha256, { start: data.length - 3 }))).equals(data.subarray(-3))).toBe(true);
    // A board resuming a pull it already holds whole asks from the very end.
    expect((await readAll(await h.store.open(first.sha256, { start: data.length }))).length).toBe(0);
  });

  it('stores empty content and content larger than one multipart part', async () => {
    const empty = await h.store.ingest(Readable.from([]));
    expect(empty).toEqual({ sha256: sha256(Buffer.alloc(0)), size: 0 });
    expect((await readAll(await h.store.open(empty.sha256))).length).toBe(0);
    const big = patterned(12 * MiB + 5);
    const stored = await h.store.ingest(Readable.from([big]));
    expect(stored.size).toBe(big.length);
    expect((await readAll(await h.store.open(stored.sha256))).equals(big)).toBe(true);
    expect(await h.leftovers()).toEqual([]);
  });

  it('copies content part by part above the single-copy limit, or fails leaving nothing', async () => {
    const store = h.withSmallCopyParts();
    const big = patterned(11 * MiB + 3);
    const stored = await store.ingest(Readable.from([big])).catch((err: unknown) => err as Error);
    if (stored instanceof Error) {
      // s3rver does not implement UploadPartCopy (AWS S3 and MinIO do): the failure must leave nothing.
      expect(stored.name).toBe('NotImplemented');
      expect(await h.contents()).toEqual([]);
    } else {
      expect((await readAll(await h.store.open(stored.sha256))).equals(big)).toBe(true);
    }
    expect(await h.leftovers()).toEqual([]);
  });

  it('rejects more than maxBytes with PayloadTooLargeError and leaves nothing', async () => {
    await expect(h.store.ingest(Readable.from([patterned(6 * MiB + 1)]), { maxBytes: 6 * MiB })).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(h.store.ingest(Readable.from([patterned(1001)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(await h.contents()).toEqual([]);
    expect(await h.leftovers()).toEqual([]);
    expect(await h.store.ingest(Readable.from([patterned(1000)]), { maxBytes: 1000 })).toMatchObject({ size: 1000 });
  });

  it('writes through createWriter batch by batch (above one multipart part), checking a hash learnt at commit', async () => {
    const data = patterned(11 * MiB + 5);
    const writer = h.store.createWriter({ maxBytes: data.length });
    for (let at = 0; at < data.length; at += 3 * MiB) {
      await writer.writev([data.subarray(at, Math.min(at + MiB, data.length)), data.subarray(Math.min(at + MiB, data.length), Math.min(at + 3 * MiB, data.length))]);
    }
    expect(writer.size).toBe(data.length);
    expect(await writer.commit(sha256(data))).toEqual({ sha256: sha256(data), size: data.length });
    expect(h.store.isPinned(sha256(data))).toBe(true);
    await h.store.release(sha256(data));
    expect((await readAll(await h.store.open(sha256(data)))).equals(data)).toBe(true);
    expect(await h.leftovers()).toEqual([]);
  });

  it('a writer refuses more than maxBytes, rejects a wrong hash at commit, and leaves nothing when aborted', async () => {
    const tooMuch = h.store.createWriter({ maxBytes: 1000 });
    await tooMuch.writev([patterned(600)]);
    await expect(tooMuch.writev([patterned(401)])).rejects.toBeInstanceOf(PayloadTooLargeError);
    await tooMuch.abort();
    const wrong = h.store.createWriter({ expectedSha256: '0'.repeat(64) });
    await wrong.writev([Buffer.from('abc')]);
    await expect(wrong.commit()).rejects.toBeInstanceOf(ContentMismatchError);
    const given = h.store.createWriter();
    await given.writev([patterned(6 * MiB)]);
    await given.abort();
    expect(await h.contents()).toEqual([]);
    expect(await h.leftovers()).toEqual([]);
  });

  it('rejects a sha256 mismatch and leaves nothing', async () => {
    const abc = Buffer.from('abc');
    await expect(h.store.ingest(Readable.from([abc]), { expectedSha256: '0'.repeat(64) })).rejects.toBeInstanceOf(ContentMismatchError);
    expect(await h.contents()).toEqual([]);
    expect(await h.leftovers()).toEqual([]);
    expect((await h.store.ingest(Readable.from([abc]), { expectedSha256: sha256(abc) })).sha256).toBe(sha256(abc));
  });

  it('rejects with the abort reason and leaves nothing when aborted mid-stream', async () => {
    const abort = new AbortController();
    const reason = new Error('client gone');
    const source = new Readable({ read() {} });
    const ingest = h.store.ingest(source, { signal: abort.signal });
    // More than one multipart part, so the S3 store is mid-way through a multipart upload.
    source.push(patterned(9 * MiB));
    await new Promise((r) => setTimeout(r, 300));
    abort.abort(reason);
    await expect(ingest).rejects.toBe(reason);
    expect(await h.contents()).toEqual([]);
    expect(await h.leftovers()).toEqual([]);
  });

  it('rejects a failing source and leaves nothing', async () => {
    const source = new Readable({ read() {} });
    const ingest = h.store.ingest(source);
    source.push(patterned(50_000));
    setTimeout(() => source.destroy(new Error('disk on fire')), 50);
    await expect(ingest).rejects.toThrow('disk on fire');
    expect(await h.contents()).toEqual([]);
    expect(await h.leftovers()).toEqual([]);
  });

  it('keeps pinned content from removal until released; removal asks the caller', async () => {
    const { sha256: sha } = await h.store.ingest(Readable.from([Buffer.from('pin me')]));
    expect(h.store.isPinned(sha)).toBe(true);
    expect(await h.store.removeIfUnused(sha, async () => true)).toBe(false);
    await h.store.release(sha);
    expect(h.store.isPinned(sha)).toBe(false);
    expect(await h.store.removeIfUnused(sha, async () => false)).toBe(false);
    expect(await h.store.has(sha)).toBe(true);
    expect(await h.store.pin(sha)).toBe(true);
    expect(await h.store.removeIfUnused(sha, async () => true)).toBe(false);
    await h.store.release(sha);
    // The caller removes the bytes itself while it holds its lock; they are gone when it answers.
    let seen: boolean | undefined;
    expect(
      await h.store.removeIfUnused(sha, async (removeBytes) => {
        await removeBytes();
        seen = await h.store.has(sha);
        return true;
      }),
    ).toBe(true);
    expect(seen).toBe(false);
    expect(await h.store.has(sha)).toBe(false);
    expect(await h.store.stat(sha)).toBeUndefined();
    expect(await h.store.pin(sha)).toBe(false);
  });

  it('rejects opening content it does not hold', async () => {
    await expect(h.store.open('a'.repeat(64))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await h.store.has('a'.repeat(64))).toBe(false);
    await expect(h.store.open('../../etc/passwd')).rejects.toBeInstanceOf(TypeError);
  });

  it('adopts a complete local file: stored, pinned, the file gone', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-adopt-'));
    try {
      const data = patterned(7 * MiB + 9);
      const file = path.join(dir, 'upload.part');
      await fs.writeFile(file, data);
      await h.store.adopt(file, sha256(data));
      await expect(fs.access(file)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(h.store.isPinned(sha256(data))).toBe(true);
      expect((await readAll(await h.store.open(sha256(data)))).equals(data)).toBe(true);
      expect(await h.contents()).toEqual([sha256(data)]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('lists every content with its modification time', async () => {
    const before = Date.now() - 2000;
    const a = await h.store.ingest(Readable.from([Buffer.from('one')]));
    const b = await h.store.ingest(Readable.from([Buffer.from('two')]));
    const listed = [];
    for await (const x of h.store.list()) listed.push(x);
    expect(listed.map((x) => x.sha256).sort()).toEqual([a.sha256, b.sha256].sort());
    for (const x of listed) expect(x.modifiedAt.getTime()).toBeGreaterThan(before);
  });

  it('init removes stale temporary writes and leaves young ones (another replica may be writing them)', async () => {
    await h.crashLeftover('crashed.part');
    await h.store.init();
    expect(await h.leftovers()).toHaveLength(1);
    await h.withNoGrace().init();
    expect(await h.leftovers()).toEqual([]);
  });
});

describe('S3BlobStore when the store fails', () => {
  it('an ingest the store refuses mid-way rejects with the store error instead of waiting forever', async () => {
    s3 ??= await startS3Server('mm-contract');
    const store = new S3BlobStore({ ...s3.storeOptions, bucket: 'no-such-bucket' });
    try {
      // More than one part: the source keeps coming while the store has already refused.
      const err = await store.ingest(Readable.from([patterned(9 * MiB), patterned(9 * MiB)])).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err?.name).toBe('NoSuchBucket');
    } finally {
      store.close();
    }
  });
});
