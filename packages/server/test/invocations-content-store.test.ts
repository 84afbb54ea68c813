import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../src/errors.ts';
import { attachInvocationFile, collectUnusedContent, sweepContentStore, sweepOrphanContent } from '../src/invocations/invocation-files.ts';
import { ContentMismatchError, ContentStore } from '../src/storage/content-store.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, filesUnder, patterned, sha256 } from './invocations-support.ts';

/** Moves a file's modification time `ageMs` into the past. */
async function setAge(file: string, ageMs: number): Promise<void> {
  const t = new Date(Date.now() - ageMs);
  await fs.utimes(file, t, t);
}

describe('ContentStore', () => {
  let root: string;
  let store: ContentStore;
  beforeEach(async () => {
    root = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'mm-store-')), 'content');
    store = new ContentStore(root);
    await store.init();
  });
  afterEach(async () => {
    await fs.rm(path.dirname(root), { recursive: true, force: true });
  });

  const stored = async () => (await filesUnder(root)).filter((f) => !f.startsWith('.tmp'));
  const temps = async () => filesUnder(store.tempDir);

  it('stores content under its sha256, once for the same bytes, and reads it back in ranges', async () => {
    const data = patterned(3 * 1024 * 1024 + 17);
    const first = await store.ingest(Readable.from([data.subarray(0, 1000), data.subarray(1000)]));
    expect(first).toEqual({ sha256: sha256(data), size: data.length });
    expect(store.pathOf(first.sha256)).toBe(path.join(root, first.sha256.slice(0, 2), first.sha256));
    expect(await store.has(first.sha256)).toBe(true);
    await store.ingest((async function* () {
      yield data;
    })());
    expect(await stored()).toEqual([`${first.sha256.slice(0, 2)}/${first.sha256}`]);
    expect(await temps()).toEqual([]);

    const chunks: Buffer[] = [];
    const stream = await store.open(first.sha256, { start: 5, end: 2_000_004 });
    expect(stream.readableHighWaterMark).toBe(1024 * 1024);
    for await (const c of stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(data.subarray(5, 2_000_005))).toBe(true);
  });

  it('rejects more than maxBytes with PayloadTooLargeError and leaves nothing', async () => {
    await expect(store.ingest(Readable.from([patterned(1001)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(await store.ingest(Readable.from([patterned(1000)]), { maxBytes: 1000 })).toMatchObject({ size: 1000 });
    expect(await temps()).toEqual([]);
    expect(await stored()).toHaveLength(1);
  });

  it('rejects a sha256 mismatch and leaves nothing', async () => {
    await expect(store.ingest(Readable.from([Buffer.from('abc')]), { expectedSha256: '0'.repeat(64) })).rejects.toBeInstanceOf(ContentMismatchError);
    const ok = await store.ingest(Readable.from([Buffer.from('abc')]), { expectedSha256: sha256(Buffer.from('abc')) });
    expect(ok.sha256).toBe(sha256(Buffer.from('abc')));
    await store.removeIfUnused(ok.sha256, async () => true); // pinned: stays
    expect(await store.has(ok.sha256)).toBe(true);
  });

  it('rejects with the abort reason and leaves nothing when aborted mid-stream', async () => {
    const abort = new AbortController();
    const reason = new Error('client gone');
    const source = new Readable({ read() {} });
    const ingest = store.ingest(source, { signal: abort.signal });
    source.push(patterned(100_000));
    while ((await temps()).length === 0) await new Promise((r) => setTimeout(r, 10));
    abort.abort(reason);
    await expect(ingest).rejects.toBe(reason);
    expect(await temps()).toEqual([]);
    expect(await stored()).toEqual([]);
  });

  it('rejects a failing source and leaves nothing', async () => {
    const source = new Readable({ read() {} });
    const ingest = store.ingest(source);
    source.push(patterned(50_000));
    source.destroy(new Error('disk on fire'));
    await expect(ingest).rejects.toThrow('disk on fire');
    expect(await temps()).toEqual([]);
    expect(await stored()).toEqual([]);
  });

  it('keeps pinned content from removal until released', async () => {
    const { sha256: sha } = await store.ingest(Readable.from([Buffer.from('pin me')]));
    expect(store.isPinned(sha)).toBe(true);
    expect(await store.removeIfUnused(sha, async () => true)).toBe(false);
    await store.release(sha);
    expect(await store.removeIfUnused(sha, async () => false)).toBe(false);
    expect(await store.has(sha)).toBe(true);
    expect(await store.removeIfUnused(sha, async () => true)).toBe(true);
    expect(await store.has(sha)).toBe(false);
  });

  it('opens a read stream before returning, so missing content rejects', async () => {
    await expect(store.open('a'.repeat(64))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => store.pathOf('../../etc/passwd')).toThrow(TypeError);
  });

  it('init removes temp files a crash left behind once they are an hour old, not younger ones (another replica may be writing them)', async () => {
    await fs.writeFile(path.join(store.tempDir, 'leftover.part'), 'x');
    await fs.writeFile(path.join(store.tempDir, 'in-flight.part'), 'x');
    await setAge(path.join(store.tempDir, 'leftover.part'), 61 * 60_000);
    await setAge(path.join(store.tempDir, 'in-flight.part'), 59 * 60_000);
    await store.init();
    expect(await temps()).toEqual(['in-flight.part']);
  });

  it("init removes at once this host's temp files whose process is gone, not those of a running process", async () => {
    const host = encodeURIComponent(os.hostname());
    // A pid no process has (Linux pids stay below 2^22).
    await fs.writeFile(path.join(store.tempDir, `${host}@4194999-x-y.part`), 'x');
    await fs.writeFile(path.join(store.tempDir, `${host}@${process.ppid}-x-y.part`), 'x');
    await fs.writeFile(path.join(store.tempDir, `other-host@4194999-x-y.part`), 'x');
    await store.init();
    expect((await temps()).sort()).toEqual([`${host}@${process.ppid}-x-y.part`, 'other-host@4194999-x-y.part'].sort());
  });

  it('names temp files uniquely per host and process, so replicas on a shared folder never write the same one', async () => {
    const source = new Readable({ read() {} });
    const ingest = store.ingest(source);
    source.push(patterned(1000));
    while ((await temps()).length === 0) await new Promise((r) => setTimeout(r, 10));
    const name = (await temps())[0]!;
    expect(name.startsWith(`${encodeURIComponent(os.hostname())}@${process.pid}-`)).toBe(true);
    expect(name).toMatch(/-[0-9a-z]+-[0-9a-f]{16}\.part$/);
    source.push(null);
    await ingest;
  });
});

describe.each(dbKinds)('content collection (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('never removes content that an upload of the same bytes has stored but not yet recorded', async () => {
    const data = Buffer.from('raced content');
    const a = await createInvocation(server, 'race-a');
    const b = await createInvocation(server, 'race-b');
    const first = await server.ctx.files.ingest(Readable.from([data]));
    await attachInvocationFile(server.ctx, a, 'weights', { filename: 'w', ...first });
    // b's upload has stored the bytes (the same content) but not yet recorded them...
    const again = await server.ctx.files.ingest(Readable.from([data]));
    // ...when a lets go of them, which collects the content nothing records any more.
    expect((await server.api(`/api/invocations/${a}/files/weights/`, { method: 'DELETE' })).status).toBe(204);
    expect(await server.ctx.files.has(first.sha256)).toBe(true);
    // b records them: the bytes are there and served.
    await attachInvocationFile(server.ctx, b, 'weights', { filename: 'w', ...again });
    const res = await server.api(`/api/invocations/${b}/files/weights/`);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    // Once b lets go too, the content goes.
    expect((await server.api(`/api/invocations/${b}/`, { method: 'DELETE' })).status).toBe(204);
    expect(await server.ctx.files.has(first.sha256)).toBe(false);
  });

  it('keeps shared content through concurrent uploads and deletes of the same bytes', async () => {
    const data = Buffer.from('concurrently shared content');
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await createInvocation(server, `concurrent-${i}`));
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        ids.map(async (id, i) => {
          if ((i + round) % 2 === 0) {
            const stored = await server.ctx.files.ingest(Readable.from([data]));
            await attachInvocationFile(server.ctx, id, 'weights', { filename: 'w', ...stored });
          } else {
            await server.api(`/api/invocations/${id}/files/weights/`, { method: 'DELETE' });
          }
        }),
      );
      // Whoever holds the file can read it.
      for (const id of ids) {
        const res = await server.api(`/api/invocations/${id}/files/weights/`);
        if (res.status === 200) expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
        else expect(res.status).toBe(404);
      }
    }
    for (const id of ids) await server.api(`/api/invocations/${id}/`, { method: 'DELETE' });
    expect(await server.ctx.files.has(sha256(data))).toBe(false);
  });

  it('the startup sweep removes temp files, unreferenced rows and files without a row', async () => {
    const id = await createInvocation(server, 'kept');
    const kept = await server.ctx.files.ingest(Readable.from([Buffer.from('kept content')]));
    await attachInvocationFile(server.ctx, id, 'parameter', { filename: 'p', ...kept });
    const store = server.ctx.files as ContentStore;
    const orphan = await store.ingest(Readable.from([Buffer.from('orphan content')]));
    await store.release(orphan.sha256);
    // Unrecorded content younger than the grace period may be another replica's upload in flight.
    const young = await store.ingest(Readable.from([Buffer.from('young orphan content')]));
    await store.release(young.sha256);
    await fs.writeFile(path.join(store.tempDir, 'crash.part'), 'half');
    await setAge(path.join(store.tempDir, 'crash.part'), 2 * 3600_000);
    await setAge(store.pathOf(orphan.sha256), 2 * 3600_000);
    await setAge(store.pathOf(kept.sha256), 2 * 3600_000);
    await sweepContentStore(server.ctx);
    expect(await server.ctx.files.has(kept.sha256)).toBe(true);
    expect(await server.ctx.files.has(orphan.sha256)).toBe(false);
    expect(await server.ctx.files.has(young.sha256)).toBe(true);
    expect(await filesUnder(store.tempDir)).toEqual([]);
    await sweepContentStore(server.ctx, { orphanGraceMs: 0 });
    expect(await server.ctx.files.has(young.sha256)).toBe(false);
    // Collecting content that is still used is a no-op.
    await collectUnusedContent(server.ctx, [kept.sha256]);
    expect(await server.ctx.files.has(kept.sha256)).toBe(true);
  });
  it('a second replica sharing the content folder removes only what the database does not record and is past the grace period', async () => {
    const a = server.ctx.files as ContentStore;
    // Replica B: the same folder and database, its own process state (no view of A's pins).
    const b = { ...server.ctx, files: new ContentStore(a.root) };
    const id = await createInvocation(server, 'shared-volume');
    const recorded = await a.ingest(Readable.from([Buffer.from('recorded on A')]));
    await attachInvocationFile(server.ctx, id, 'weights', { filename: 'w', ...recorded });
    const inFlight = await a.ingest(Readable.from([Buffer.from('uploaded on A, not yet recorded')]));
    await setAge(a.pathOf(recorded.sha256), 2 * 3600_000);
    await sweepOrphanContent(b);
    expect(await a.has(recorded.sha256)).toBe(true);
    expect(await a.has(inFlight.sha256)).toBe(true);
    await sweepOrphanContent(b, { orphanGraceMs: 0 });
    expect(await a.has(recorded.sha256)).toBe(true);
    const inv = async () => ((await (await server.api(`/api/invocations/${id}/`)).json()) as { files: Record<string, unknown> }).files;
    if (server.kind === 'postgres') {
      // Several replicas are possible: A's pin is a row B's collection honours, grace or not
      // (content-pins-replicas.test.ts has three real replicas).
      expect(await a.has(inFlight.sha256)).toBe(true);
      await attachInvocationFile(server.ctx, id, 'parameter', { filename: 'p', ...inFlight });
      expect((await inv()).parameter).not.toBeNull();
    } else {
      // The embedded database has one process, whose memory holds every pin: a second store
      // without that memory is no real setup. Without a grace period it takes A's unrecorded
      // bytes, and A's attach then fails loudly instead of recording content that is not there.
      expect(await a.has(inFlight.sha256)).toBe(false);
      await expect(attachInvocationFile(server.ctx, id, 'parameter', { filename: 'p', ...inFlight })).rejects.toThrow(/missing from the store/);
      expect((await inv()).parameter).toBeNull();
    }
    expect((await inv()).weights).not.toBeNull();
  });
});
