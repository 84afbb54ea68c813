/**
 * tus 1.0 as the protocol says it (issue 27): a PATCH past Upload-Length is 400
 * `upload_too_long` and keeps nothing, X-HTTP-Method-Override is honoured, every answer but
 * OPTIONS carries Tus-Resumable (errors too), a finished upload still answers HEAD, an upload
 * URL answers OPTIONS, and a stalled PATCH never blocks its retry or a DELETE (hole 6).
 * tus-js-client itself is run against the server in packages/dashboard/test/tus-js-client.test.ts.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';

const TUS = { 'tus-resumable': '1.0.0' };
const OCTETS = { ...TUS, 'content-type': 'application/offset+octet-stream' };
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const tusMetadata = (v: Record<string, string>) =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${Buffer.from(x).toString('base64')}`)
    .join(',');

describe.each(dbKinds)('tus 1.0 conformance (%s database)', (kind) => {
  let server: TestServer;
  let invocationId: number;
  beforeAll(async () => {
    server = await startTestServer(kind);
    invocationId = await createInvocation(server, 'tus conformance');
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function create(length: number, filename = 'w.bin'): Promise<string> {
    const res = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': String(length), 'upload-metadata': tusMetadata({ invocation_id: String(invocationId), file_type: 'weights', filename }) },
    });
    expect(res.status).toBe(201);
    return res.headers.get('location')!;
  }
  const head = (location: string) => server.api(location, { method: 'HEAD', headers: TUS });
  const offsetOf = async (location: string) => Number((await head(location)).headers.get('upload-offset'));
  const weights = async () => (await json(await server.api(`/api/invocations/${invocationId}/`))).files.weights;

  /** A PATCH with a chunked body (no Content-Length): the server finds out its length as it reads. */
  function chunkedPatch(location: string, offset: number, body: Buffer): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(location, server.url), { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': String(offset), 'transfer-encoding': 'chunked' } });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      });
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      req.end(body.subarray(10));
    });
  }

  it('a PATCH that runs past Upload-Length is 400 upload_too_long, keeps none of its bytes and attaches nothing', async () => {
    const before = await weights();
    const location = await create(100);
    const first = await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': '0' }, body: Buffer.alloc(40, 1) });
    expect(first.status).toBe(204);
    // Declared (Content-Length) past the end: refused before a byte is read.
    const declared = await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': '40' }, body: Buffer.alloc(61, 2) });
    expect(declared.status).toBe(400);
    expect(declared.headers.get('tus-resumable')).toBe('1.0.0');
    expect((await json(declared)).code).toBe('upload_too_long');
    expect(await offsetOf(location)).toBe(40);
    // Chunked past the end: found out while reading; nothing of it is kept either.
    const chunked = await chunkedPatch(location, 40, Buffer.alloc(200, 3));
    expect(chunked.status).toBe(400);
    expect(JSON.parse(chunked.body).code).toBe('upload_too_long');
    expect(await offsetOf(location)).toBe(40);
    expect(await weights()).toEqual(before);
    // The upload goes on from where it was, and its content is exactly what was meant.
    const rest = Buffer.alloc(60, 4);
    expect((await chunkedPatch(location, 40, rest)).status).toBe(204);
    expect((await weights()).sha256).toBe(sha256(Buffer.concat([Buffer.alloc(40, 1), rest])));
  });

  it('honours X-HTTP-Method-Override on POST (PATCH and DELETE)', async () => {
    const data = Buffer.from('sent as POST with an override');
    const location = await create(data.length, 'override.bin');
    const half = await server.api(location, { method: 'POST', headers: { ...OCTETS, 'x-http-method-override': 'PATCH', 'upload-offset': '0' }, body: data.subarray(0, 10) });
    expect(half.status).toBe(204);
    expect(half.headers.get('upload-offset')).toBe('10');
    const rest = await server.api(location, { method: 'POST', headers: { ...OCTETS, 'x-http-method-override': 'PATCH', 'upload-offset': '10' }, body: data.subarray(10) });
    expect(rest.status).toBe(204);
    expect(await weights()).toMatchObject({ filename: 'override.bin', sha256: sha256(data) });

    const other = await create(10);
    expect((await server.api(other, { method: 'POST', headers: { ...TUS, 'x-http-method-override': 'DELETE' } })).status).toBe(204);
    expect((await head(other)).status).toBe(404);
    const none = await server.api(other, { method: 'POST', headers: TUS });
    expect(none.status).toBe(400);
  });

  it('carries Tus-Resumable on every answer, errors included', async () => {
    const location = await create(10);
    const answers = [
      await server.api('/api/uploads/', { method: 'POST', headers: { ...TUS, 'upload-length': 'x' } }), // 400
      await server.api('/api/uploads/', { method: 'POST', headers: { 'upload-length': '1' } }), // 412
      await head('/api/uploads/00000000-0000-4000-8000-000000000000/'), // 404
      await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': '5' }, body: Buffer.alloc(1) }), // 409
      await server.api(location, { method: 'PATCH', headers: { ...TUS, 'upload-offset': '0', 'content-type': 'text/plain' }, body: 'x' }), // 415
      await head(location), // 200
      await server.api(location, { method: 'DELETE', headers: TUS }), // 204
    ];
    expect(answers.map((r) => r.status)).toEqual([400, 412, 404, 409, 415, 200, 204]);
    for (const r of answers) expect(r.headers.get('tus-resumable'), `answer ${r.status}`).toBe('1.0.0');
  });

  it('a finished upload still answers HEAD with its full offset; an empty PATCH at its end changes nothing', async () => {
    const data = Buffer.from('finished upload');
    const location = await create(data.length, 'finished.bin');
    expect((await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': '0' }, body: data })).status).toBe(204);
    const attached = await weights();
    const res = await head(location);
    expect(res.status).toBe(200);
    expect(res.headers.get('upload-offset')).toBe(String(data.length));
    expect(res.headers.get('upload-length')).toBe(String(data.length));
    const again = await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': String(data.length) }, body: Buffer.alloc(0) });
    expect(again.status).toBe(204);
    const more = await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': String(data.length) }, body: Buffer.alloc(1) });
    expect(more.status).toBe(400);
    expect(await weights()).toEqual(attached);
  });

  it('answers OPTIONS on an upload URL as on the collection', async () => {
    const location = await create(10);
    const res = await server.api(location, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toContain('creation');
  });

  /** Starts a PATCH declared `declared` bytes long, sends `sent` of them, then stalls (the connection stays open). */
  async function stalledPatch(location: string, offset: number, sent: Buffer, declared: number) {
    const req = http.request(new URL(location, server.url), {
      method: 'PATCH',
      headers: { ...OCTETS, 'upload-offset': String(offset), 'content-length': String(declared) },
    });
    const ended = new Promise<void>((resolve) => {
      req.on('error', () => resolve());
      req.on('close', () => resolve());
    });
    req.write(sent);
    // Wait until the server holds the bytes sent so far (the running PATCH counts in HEAD's offset).
    for (let i = 0; i < 400 && (await offsetOf(location)) < offset + sent.length; i++) await new Promise((r) => setTimeout(r, 25));
    return { req, ended };
  }

  it('a new PATCH ends a stalled one at once and continues from its bytes (hole 6)', async () => {
    const data = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const location = await create(data.length, 'stalled.bin');
    const stalled = await stalledPatch(location, 0, data.subarray(0, 1000), data.length);
    const started = Date.now();
    // The client retries: it asks the offset, then sends the rest.
    const offset = await offsetOf(location);
    expect(offset).toBe(1000);
    const retry = await server.api(location, { method: 'PATCH', headers: { ...OCTETS, 'upload-offset': String(offset) }, body: data.subarray(offset) });
    expect(retry.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(10_000); // the body idle limit is 120 s
    await stalled.ended;
    expect(await weights()).toMatchObject({ filename: 'stalled.bin', sha256: sha256(data) });
  });

  it('a DELETE ends a stalled PATCH at once (hole 6)', async () => {
    const location = await create(5000);
    const stalled = await stalledPatch(location, 0, Buffer.alloc(500, 9), 5000);
    const started = Date.now();
    const del = await server.api(location, { method: 'DELETE', headers: TUS });
    expect(del.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(10_000);
    await stalled.ended;
    expect((await head(location)).status).toBe(404);
  });
});

describe('tus answers refused by auth (embedded database)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_API_TOKEN: 'tus-auth-token' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a 401 of the upload routes carries Tus-Resumable too', async () => {
    for (const [path, method] of [['/api/uploads/', 'POST'], ['/api/uploads/00000000-0000-4000-8000-000000000000/', 'HEAD']] as const) {
      const res = await server.api(path, { method, headers: TUS });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get('tus-resumable'), `${method} ${path}`).toBe('1.0.0');
    }
  });
});
