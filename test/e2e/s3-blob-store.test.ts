/**
 * End to end with file content on an S3-compatible store: the control plane (MM_BLOB_STORE=s3)
 * and a simulated board as processes, s3rver as the store. Multipart and tus uploads go in,
 * the board pulls its files from the store, the output video comes back into it, and the
 * video (with Range) and the ZIP are served from it.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { startS3Server, type S3Server } from '../support/s3-server.ts';
import { asVideo } from '../support/fake-video.ts';
import { S3BlobStore } from '../../packages/server/src/storage/s3-blob-store.ts';
import { readZip } from '../../packages/server/test/invocations-support.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const tusMeta = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('file content on S3, end to end (%s database)', (kind) => {
  let s3: S3Server;
  let store: S3BlobStore;
  let cluster: ServerCluster;
  let agent: AgentProcess;
  let scratch: string;
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);

  /** What the bucket holds: `content/<sha256>` keys, and whatever is under `tmp/` (in s3rver's folder). */
  async function contentKeys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const b of store.list()) keys.push(`content/${b.sha256}`);
    const temps = await fs.readdir(path.join(s3.directory, s3.bucket, 'tmp')).catch(() => [] as string[]);
    return [...keys, ...temps.map((t) => `tmp/${t}`)].sort();
  }

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-s3-'));
    s3 = await startS3Server('mm-e2e');
    store = new S3BlobStore(s3.storeOptions);
    cluster = await serverCluster(kind, s3.env);
    const server = await cluster.start();
    const res = await api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 's3-board' }) });
    expect(res.status).toBe(201);
    const board = (await json(res)) as { id: string; token: string };
    agent = await startAgent({ serverUrl: server.url, token: board.token, agentDir: path.join(scratch, 'agent') });
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000);
  });

  afterAll(async () => {
    await agent?.stop();
    await cluster?.cleanup();
    store?.close();
    await s3?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('uploads into the store, runs on the board from it, serves the video with Range and the ZIP', async () => {
    const created = await api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 's3', description: '' }) });
    const inv = (await json(created)).id as number;

    // Multipart: a parameter file and an input video larger than one S3 part.
    const params = Buffer.from('{"duration_s": 0.5}');
    const input = asVideo(randomBytes(9 * 1024 * 1024 + 11));
    for (const [fileType, filename, data] of [['parameter', 'params.json', params], ['input_video', 'input.mp4', input]] as const) {
      const form = new FormData();
      form.set('file_type', fileType);
      form.set('file', new Blob([data]), filename);
      const res = await api(`/api/invocations/${inv}/upload/`, { method: 'POST', body: form });
      expect(res.status).toBe(201);
      expect((await json(res)).sha256).toBe(sha256(data));
    }
    // tus: the finished part file is adopted into the store (streamed up, then unlinked).
    const weights = randomBytes(6 * 1024 * 1024 + 5);
    const createdUpload = await api('/api/uploads/', {
      method: 'POST',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-length': String(weights.length),
        'upload-metadata': tusMeta({ invocation_id: String(inv), file_type: 'weights', filename: 'model.bin', sha256: sha256(weights) }),
      },
    });
    expect(createdUpload.status).toBe(201);
    const location = createdUpload.headers.get('location')!;
    const patched = await api(location, {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: weights,
    });
    expect(patched.status).toBe(204);
    await expect(fs.readdir(path.join(cluster.dataDir, 'uploads'))).resolves.toEqual([]);

    const keys = await contentKeys();
    for (const data of [params, input, weights]) expect(keys).toContain(`content/${sha256(data)}`);
    expect(keys.filter((k) => !k.startsWith('content/'))).toEqual([]);
    // Nothing went to the data folder's content store.
    await expect(fs.readdir(path.join(cluster.dataDir, 'content'))).rejects.toMatchObject({ code: 'ENOENT' });

    const transfer = await api(`/api/invocations/${inv}/transfer/`, { method: 'POST' });
    expect(transfer.status).toBe(200);
    expect((await json(transfer)).status).toBe('succeeded');
    const run = await api(`/api/invocations/${inv}/execute/`, { method: 'POST' });
    expect(run.status).toBe(200);
    const op = await json(run);
    expect(op.status).toBe('succeeded');
    const videoSha = op.result.output_video.sha256 as string;
    expect(await contentKeys()).toContain(`content/${videoSha}`);

    const whole = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(whole)).toBe(videoSha);
    const ranged = await api(`/api/invocations/${inv}/video/`, { headers: { range: 'bytes=100-2099' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 100-2099/${whole.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(whole.subarray(100, 2100))).toBe(true);
    const tail = await api(`/api/invocations/${inv}/video/`, { headers: { range: `bytes=${whole.length - 10}-` } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(-10))).toBe(true);

    const zip = await api(`/api/invocations/${inv}/download/`);
    expect(zip.status).toBe(200);
    const entries = readZip(Buffer.from(await zip.arrayBuffer()));
    const bySha = new Set(entries.map((e) => sha256(e.data)));
    for (const sha of [sha256(params), sha256(input), sha256(weights), videoSha]) expect(bySha).toContain(sha);

    // Deleting the invocation collects its content from the store.
    expect((await api(`/api/invocations/${inv}/`, { method: 'DELETE' })).status).toBe(204);
    expect(await contentKeys()).toEqual([]);
  });
});
