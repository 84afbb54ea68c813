import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

const MAX_UPLOAD = 4 * 1024 * 1024;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const meta = (v: Record<string, string>) =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${Buffer.from(x).toString('base64')}`)
    .join(',');
const TUS = { 'tus-resumable': '1.0.0' };

async function createInvocation(server: TestServer): Promise<number> {
  const res = await server.api('/api/invocations/create/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'tus', description: '' }),
  });
  return (await json(res)).id as number;
}

async function createUpload(server: TestServer, invocationId: number, data: Buffer, extra: Record<string, string> = {}) {
  return server.api('/api/uploads/', {
    method: 'POST',
    headers: {
      ...TUS,
      'upload-length': String(data.length),
      'upload-metadata': meta({ invocation_id: String(invocationId), file_type: 'weights', filename: 'w.bin', ...extra }),
    },
  });
}

function patch(server: TestServer, location: string, offset: number, body: Buffer) {
  return server.api(location, {
    method: 'PATCH',
    headers: { ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
    body,
  });
}

/** Sends `head` bytes of a PATCH declared longer, then cuts the connection (a client killed mid-upload). */
function patchThenCut(server: TestServer, location: string, offset: number, head: Buffer, declared: number): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(new URL(location, server.url), {
      method: 'PATCH',
      headers: { ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'content-length': String(declared) },
    });
    req.on('error', () => resolve());
    req.write(head, () => setTimeout(() => req.destroy(), 300));
    req.on('close', () => resolve());
  });
}

async function offsetOf(server: TestServer, location: string): Promise<number> {
  const res = await server.api(location, { method: 'HEAD', headers: TUS });
  expect(res.status).toBe(200);
  return Number(res.headers.get('upload-offset'));
}

describe.each(dbKinds)('resumable uploads (tus) and attach by digest (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('OPTIONS tells the version, extensions and the size limit', async () => {
    const res = await server.api('/api/uploads/', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,termination,expiration');
    expect(res.headers.get('tus-max-size')).toBe(String(MAX_UPLOAD));
  });

  it('uploads in pieces, resumes after a cut connection, and attaches the file like a multipart upload', async () => {
    const id = await createInvocation(server);
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const created = await createUpload(server, id, data, { sha256: sha256(data) });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(/^\/api\/uploads\/[0-9a-f-]{36}\/$/);
    expect(created.headers.get('upload-expires')).toBeTruthy();
    expect(await offsetOf(server, location)).toBe(0);

    const first = await patch(server, location, 0, data.subarray(0, 1024 * 1024));
    expect(first.status).toBe(204);
    expect(first.headers.get('upload-offset')).toBe(String(1024 * 1024));

    // A wrong offset is a conflict and changes nothing.
    const wrong = await patch(server, location, 5, data.subarray(5, 10));
    expect(wrong.status).toBe(409);
    expect((await json(wrong)).code).toBe('offset_mismatch');

    // The client dies after sending part of a PATCH: what arrived is kept.
    await patchThenCut(server, location, 1024 * 1024, data.subarray(1024 * 1024, 2 * 1024 * 1024), data.length - 1024 * 1024);
    let offset = 0;
    for (let i = 0; i < 50; i++) {
      offset = await offsetOf(server, location);
      if (offset === 2 * 1024 * 1024) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(offset).toBe(2 * 1024 * 1024);

    const last = await patch(server, location, offset, data.subarray(offset));
    expect(last.status).toBe(204);
    expect(last.headers.get('upload-offset')).toBe(String(data.length));
    // Finished: kept (until it expires) so HEAD says it is done (tus 1.0; issue 27).
    const finished = await server.api(location, { method: 'HEAD', headers: TUS });
    expect(finished.status).toBe(200);
    expect(finished.headers.get('upload-offset')).toBe(String(data.length));

    const inv = await json(await server.api(`/api/invocations/${id}/`));
    expect(inv.files.weights).toMatchObject({ kind: 'weights', filename: 'w.bin', size: data.length, sha256: sha256(data) });
    const back = Buffer.from(await (await server.api(`/api/invocations/${id}/files/weights/`)).arrayBuffer());
    expect(back.equals(data)).toBe(true);
    // Nothing left in the upload folder: the part file became the stored content.
    expect(await fs.readdir(path.join(server.dataDir, 'uploads'))).toEqual([]);
  });

  it('fails a wrong sha256 with checksum_mismatch and attaches nothing', async () => {
    const id = await createInvocation(server);
    const data = randomBytes(1000);
    const created = await createUpload(server, id, data, { sha256: sha256(Buffer.from('something else')) });
    const location = created.headers.get('location')!;
    const res = await patch(server, location, 0, data);
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem.code).toBe('checksum_mismatch');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights).toBeNull();
    expect((await server.api(location, { method: 'HEAD', headers: TUS })).status).toBe(404);
  });

  it('refuses bad creations with clear 4xx and keeps nothing', async () => {
    const id = await createInvocation(server);
    const tooBig = await createUpload(server, id, Buffer.alloc(0), {});
    expect(tooBig.status).toBe(201); // zero bytes: attached at once
    expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights.size).toBe(0);

    const over = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': String(MAX_UPLOAD + 1), 'upload-metadata': meta({ invocation_id: String(id), file_type: 'weights', filename: 'x' }) },
    });
    expect(over.status).toBe(413);
    const noVersion = await server.api('/api/uploads/', { method: 'POST', headers: { 'upload-length': '1' } });
    expect(noVersion.status).toBe(412);
    const badKind = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': '1', 'upload-metadata': meta({ invocation_id: String(id), file_type: 'output_video', filename: 'x' }) },
    });
    expect(badKind.status).toBe(400);
    expect((await json(badKind)).errors).toEqual([{ field: 'file_type', message: expect.any(String) }]);
    const noInvocation = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': '1', 'upload-metadata': meta({ invocation_id: '999999', file_type: 'weights', filename: 'x' }) },
    });
    expect(noInvocation.status).toBe(404);
    expect((await json(noInvocation)).code).toBe('invocation_not_found');
  });

  it('terminates an upload and its bytes', async () => {
    const id = await createInvocation(server);
    const data = randomBytes(5000);
    const location = (await createUpload(server, id, data)).headers.get('location')!;
    await patch(server, location, 0, data.subarray(0, 100));
    const del = await server.api(location, { method: 'DELETE', headers: TUS });
    expect(del.status).toBe(204);
    expect((await server.api(location, { method: 'HEAD', headers: TUS })).status).toBe(404);
    const uploadId = location.split('/')[3]!;
    await expect(fs.stat(path.join(server.dataDir, 'uploads', `${uploadId}.part`))).rejects.toThrow();
  });

  it('attaches content the server holds by sha256, and says content_not_found otherwise', async () => {
    const a = await createInvocation(server);
    const data = randomBytes(2048);
    const location = (await createUpload(server, a, data)).headers.get('location')!;
    expect((await patch(server, location, 0, data)).status).toBe(204);

    const b = await createInvocation(server);
    const put = (sha: string, kindName = 'weights', type = 'application/json') =>
      server.api(`/api/invocations/${b}/files/${kindName}/`, { method: 'PUT', headers: { 'content-type': type }, body: JSON.stringify({ sha256: sha, filename: 'again.bin' }) });
    const ok = await put(sha256(data));
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ kind: 'weights', filename: 'again.bin', size: data.length, sha256: sha256(data) });
    const missing = await put(sha256(Buffer.from('never uploaded')));
    expect(missing.status).toBe(404);
    expect((await json(missing)).code).toBe('content_not_found');
    expect((await put('nothex')).status).toBe(400);
    expect((await put(sha256(data), 'output_video')).status).toBe(404);
    expect((await put(sha256(data), 'weights', 'text/plain')).status).toBe(415);
  });
});

describe.each(dbKinds)('resumable uploads expire (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    // Its own server: a 2 s expiry would expire the other tests' uploads on a loaded machine.
    server = await startTestServer(kind, { MM_UPLOAD_EXPIRY_S: '2' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('expires an abandoned upload and removes its bytes (MM_UPLOAD_EXPIRY_S)', async () => {
    const id = await createInvocation(server);
    const data = randomBytes(5000);
    const location = (await createUpload(server, id, data)).headers.get('location')!;
    await patch(server, location, 0, data.subarray(0, 100));
    const part = path.join(server.dataDir, 'uploads', `${location.split('/')[3]}.part`);
    expect((await fs.stat(part)).size).toBe(100);
    for (let i = 0; i < 100; i++) {
      if (!(await fs.stat(part).then(() => true, () => false))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await expect(fs.stat(part)).rejects.toThrow();
    expect((await server.api(location, { method: 'HEAD', headers: TUS })).status).toBe(404);
  });
});

describe('resumable uploads survive a restart (embedded database)', () => {
  it('continues after the server restarts, with the right sha256', async () => {
    let server = await startTestServer('embedded', {}, { keep: true });
    const dataDir = server.dataDir;
    try {
      const id = await createInvocation(server);
      const data = randomBytes(2 * 1024 * 1024 + 3);
      const location = (await createUpload(server, id, data, { sha256: sha256(data) })).headers.get('location')!;
      expect((await patch(server, location, 0, data.subarray(0, 1024 * 1024 + 1))).status).toBe(204);
      await server.stop();
      server = await startTestServer('embedded', { MM_DATA_DIR: dataDir }, { keep: true });
      const offset = await offsetOf(server, location);
      expect(offset).toBe(1024 * 1024 + 1);
      expect((await patch(server, location, offset, data.subarray(offset))).status).toBe(204);
      const inv = await json(await server.api(`/api/invocations/${id}/`));
      expect(inv.files.weights.sha256).toBe(sha256(data));
    } finally {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
