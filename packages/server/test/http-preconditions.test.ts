/**
 * Downloads and RFC 9110 (issue 27): If-Match and If-Unmodified-Since are evaluated (412),
 * and a request for several ranges gets either the one span they merge into (206) or the
 * whole file (200), never only its first range.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, patterned, uploadFile } from './invocations-support.ts';

describe.each(dbKinds)('download preconditions and ranges (%s database)', (kind) => {
  let server: TestServer;
  let url: string;
  let etag: string;
  let lastModified: string;
  const data = patterned(1000);
  beforeAll(async () => {
    server = await startTestServer(kind);
    const id = await createInvocation(server, 'preconditions');
    await uploadFile(server, id, 'parameter', 'p.bin', data);
    url = `/api/invocations/${id}/files/parameter/`;
    const res = await server.api(url, { method: 'HEAD' });
    etag = res.headers.get('etag')!;
    lastModified = res.headers.get('last-modified')!;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const get = (headers: Record<string, string>, method = 'GET') => server.api(url, { method, headers });

  it('If-Match: the current tag or * → 200; another tag, or a weak one → 412 precondition_failed', async () => {
    expect((await get({ 'if-match': etag })).status).toBe(200);
    expect((await get({ 'if-match': `"other", ${etag}` })).status).toBe(200);
    expect((await get({ 'if-match': '*' })).status).toBe(200);
    for (const tag of ['"other"', `W/${etag}`]) {
      const res = await get({ 'if-match': tag });
      expect(res.status, tag).toBe(412);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await json(res)).code).toBe('precondition_failed');
    }
    expect((await get({ 'if-match': '"other"' }, 'HEAD')).status).toBe(412);
    // A failed If-Match wins over a Range: nothing partial is sent.
    expect((await get({ 'if-match': '"other"', range: 'bytes=0-9' })).status).toBe(412);
  });

  it('If-Unmodified-Since: modified after it → 412; not → 200; If-Match, when sent, decides instead', async () => {
    const before = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await get({ 'if-unmodified-since': before })).status).toBe(412);
    expect((await get({ 'if-unmodified-since': lastModified })).status).toBe(200);
    expect((await get({ 'if-unmodified-since': new Date(Date.now() + 3_600_000).toUTCString() })).status).toBe(200);
    expect((await get({ 'if-unmodified-since': 'not a date' })).status).toBe(200);
    expect((await get({ 'if-unmodified-since': before, 'if-match': etag })).status).toBe(200);
  });

  it('several ranges: merged into one span → 206 of it; apart → the whole file with 200', async () => {
    const apart = await get({ range: 'bytes=0-9,20-29' });
    expect(apart.status).toBe(200);
    expect(apart.headers.get('content-range')).toBeNull();
    expect(Buffer.from(await apart.arrayBuffer()).equals(data)).toBe(true);

    for (const range of ['bytes=0-9,5-19', 'bytes=10-19, 0-9', 'bytes=0-19,5000-']) {
      const res = await get({ range });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range'), range).toBe(`bytes 0-19/${data.length}`);
      expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(0, 20)), range).toBe(true);
    }
  });
});
