/**
 * The control plane with MM_BLOB_STORE=s3 (s3rver), in process: downloads stream from the
 * store by default; with MM_S3_REDIRECT_DOWNLOADS=1 they answer 302 to a presigned URL that
 * serves the bytes and Range itself. Missing content is still the route's 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { startS3Server, type S3Server } from '../../../test/support/s3-server.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { loadConfig } from '../src/config.ts';
import { createInvocation, patterned, sha256, uploadFile } from './invocations-support.ts';

describe('S3 settings', () => {
  it('refuses MM_BLOB_STORE=s3 without a bucket, naming the variable', () => {
    expect(() => loadConfig({ MM_BLOB_STORE: 's3' })).toThrow(/MM_S3_BUCKET: must be set when MM_BLOB_STORE=s3/);
    expect(() => loadConfig({ MM_BLOB_STORE: 'nfs' })).toThrow(/MM_BLOB_STORE/);
    expect(() => loadConfig({ MM_BLOB_STORE: 's3', MM_S3_BUCKET: 'b', MM_S3_ACCESS_KEY_ID: 'k' })).toThrow(/MM_S3_SECRET_ACCESS_KEY/);
    expect(loadConfig({ MM_BLOB_STORE: 's3', MM_S3_BUCKET: 'b', MM_S3_FORCE_PATH_STYLE: '1' }).s3).toMatchObject({
      bucket: 'b',
      region: 'us-east-1',
      forcePathStyle: true,
      redirectDownloads: false,
    });
    expect(loadConfig({}).blobStore).toBe('fs');
    expect(loadConfig({}).retentionMs).toBe(90 * 86_400_000);
    expect(loadConfig({ MM_RETENTION_DAYS: '0' }).retentionMs).toBe(0);
    expect(() => loadConfig({ MM_RETENTION_DAYS: '-1' })).toThrow(/MM_RETENTION_DAYS/);
  });
});

describe.each(dbKinds)('downloads from S3 (%s database)', (kind) => {
  let s3: S3Server;
  let streaming: TestServer;
  let redirecting: TestServer;
  beforeAll(async () => {
    s3 = await startS3Server('mm-downloads');
    streaming = await startTestServer(kind, s3.env);
    redirecting = await startTestServer(kind, { ...s3.env, MM_S3_REDIRECT_DOWNLOADS: '1' });
  });
  afterAll(async () => {
    await streaming?.stop();
    await redirecting?.stop();
    await s3?.stop();
  });

  it('streams a file with Range from the store, and 404s when its bytes are gone', async () => {
    const id = await createInvocation(streaming, 'streamed');
    const data = patterned(3 * 1024 * 1024 + 7);
    await uploadFile(streaming, id, 'weights', 'model.bin', data);
    const res = await streaming.api(`/api/invocations/${id}/files/weights/`, { headers: { range: 'bytes=10-1048585' } });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(10, 1048586))).toBe(true);
    const whole = await streaming.api(`/api/invocations/${id}/files/weights/`);
    expect(sha256(Buffer.from(await whole.arrayBuffer()))).toBe(sha256(data));
    // The bytes vanish behind the server's back (an operator emptied the bucket): 404, not 500.
    await streaming.ctx.files.removeIfUnused(sha256(data), async () => true);
    expect((await streaming.api(`/api/invocations/${id}/files/weights/`)).status).toBe(404);
  });

  it('with MM_S3_REDIRECT_DOWNLOADS=1 answers 302 to a presigned URL that serves the bytes and Range', async () => {
    const id = await createInvocation(redirecting, 'redirected');
    const data = patterned(2 * 1024 * 1024 + 3);
    await uploadFile(redirecting, id, 'weights', 'model.bin', data);
    const res = await redirecting.api(`/api/invocations/${id}/files/weights/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const location = res.headers.get('location')!;
    expect(location.startsWith(s3.endpoint)).toBe(true);
    const direct = await fetch(location, { headers: { range: 'bytes=5-104' } });
    expect(direct.status).toBe(206);
    expect(Buffer.from(await direct.arrayBuffer()).equals(data.subarray(5, 105))).toBe(true);
    const followed = await redirecting.api(`/api/invocations/${id}/files/weights/`);
    expect(followed.status).toBe(200);
    expect(followed.headers.get('content-disposition')).toContain('model.bin');
    expect(sha256(Buffer.from(await followed.arrayBuffer()))).toBe(sha256(data));
    // HEAD and conditional requests are still answered by the server itself.
    expect((await redirecting.api(`/api/invocations/${id}/files/weights/`, { method: 'HEAD' })).status).toBe(200);
    const etag = res.headers.get('etag') ?? `"${sha256(data)}"`;
    expect((await redirecting.api(`/api/invocations/${id}/files/weights/`, { headers: { 'if-none-match': etag }, redirect: 'manual' })).status).toBe(304);
  });
});
