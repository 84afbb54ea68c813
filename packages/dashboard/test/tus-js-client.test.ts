/**
 * tus-js-client (the dashboard's upload client), its Node build, against the real control
 * plane: a chunked upload, the same with `overridePatchMethod` (POST +
 * X-HTTP-Method-Override), and a resume of an upload a previous client began. The raw
 * protocol cases are in packages/server/test/tus-conformance.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upload, type UploadOptions } from 'tus-js-client';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const patterned = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + 7) % 256));

describe('tus-js-client against the control plane (embedded database)', () => {
  let server: TestServer;
  let invocationId: number;
  beforeAll(async () => {
    server = await startTestServer('embedded');
    const res = await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'tus-js-client', description: '' }) });
    invocationId = (await json(res)).id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Runs one upload to its end; resolves with its URL. */
  function upload(data: Buffer, filename: string, extra: Partial<UploadOptions> = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const u: Upload = new Upload(data, {
        endpoint: `${server.url}/api/uploads/`,
        chunkSize: 64 * 1024,
        retryDelays: [0, 100, 500],
        metadata: { invocation_id: String(invocationId), file_type: 'weights', filename, sha256: sha256(data) },
        onError: reject,
        onSuccess: () => resolve(u.url!),
        ...extra,
      });
      u.start();
    });
  }
  const weights = async () => (await json(await server.api(`/api/invocations/${invocationId}/`))).files.weights;

  it('uploads in chunks with PATCH', async () => {
    const data = patterned(300_000);
    await upload(data, 'chunks.bin');
    expect(await weights()).toMatchObject({ filename: 'chunks.bin', size: data.length, sha256: sha256(data) });
  });

  it('uploads in chunks with overridePatchMethod (POST + X-HTTP-Method-Override)', async () => {
    const data = patterned(200_000).reverse();
    const methods: string[] = [];
    await upload(data, 'override.bin', {
      overridePatchMethod: true,
      onBeforeRequest: (req) => void methods.push(`${req.getMethod()} ${req.getHeader('X-HTTP-Method-Override') ?? ''}`.trim()),
    });
    expect(methods).toContain('POST PATCH');
    expect(methods).not.toContain('PATCH');
    expect(await weights()).toMatchObject({ filename: 'override.bin', sha256: sha256(data) });
  });

  it('resumes an upload another client began, from the offset the server reports', async () => {
    const data = patterned(256 * 1024 + 5);
    // A first client stops after its first chunk.
    const url = await new Promise<string>((resolve, reject) => {
      const first: Upload = new Upload(data, {
        endpoint: `${server.url}/api/uploads/`,
        chunkSize: 100_000,
        metadata: { invocation_id: String(invocationId), file_type: 'weights', filename: 'resumed.bin' },
        onError: reject,
        onChunkComplete: () => void first.abort().then(() => resolve(first.url!), reject),
      });
      first.start();
    });
    let resumedFrom: number | undefined;
    await upload(data, 'resumed.bin', { uploadUrl: url, onProgress: (sent) => (resumedFrom ??= sent) });
    expect(resumedFrom).toBeGreaterThanOrEqual(100_000);
    expect(await weights()).toMatchObject({ filename: 'resumed.bin', sha256: sha256(data) });
    // Finished: the URL still answers HEAD with the full offset, so a client resuming it again is done at once.
    const again = await upload(data, 'resumed.bin', { uploadUrl: url });
    expect(again).toBe(url);
  });
});
