/**
 * One rule for every way a file name enters (issue 27, hole 2): a multipart upload, a tus
 * upload's Upload-Metadata and attach-by-digest all store a plain base name (no folders,
 * no NUL or control characters, at most 255 bytes), and the ZIP's entries are
 * `<kind>/<that name>`, never a path that climbs out of its folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainFileName } from '../src/http/file-name.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, readZip, sha256, uploadFile } from './invocations-support.ts';

const TUS = { 'tus-resumable': '1.0.0' };
const tusMetadata = (v: Record<string, string>) =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${Buffer.from(x).toString('base64')}`)
    .join(',');

const longName = `${'é'.repeat(200)}.bin`;
/** What was sent → what is stored. */
const cases: Array<[string, string]> = [
  ['../../../etc/cron.d/evil', 'evil'],
  ['/abs/../../x', 'x'],
  ['C:\\Users\\me\\weights.bin', 'weights.bin'],
  ['tab\there\u0001\u007f.bin', 'tabhere.bin'],
  ['..', 'upload'],
  [longName, 'é'.repeat(127)],
];

describe('plainFileName', () => {
  it.each(cases)('%j → %j', (sent, stored) => {
    expect(plainFileName(sent)).toBe(stored);
  });
  it('removes NUL and keeps within 255 bytes of UTF-8 on a character boundary', () => {
    expect(plainFileName('a\0b.bin')).toBe('ab.bin');
    expect(Buffer.byteLength(plainFileName('😀'.repeat(100)))).toBe(252);
  });
});

describe.each(dbKinds)('file names from every entry (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function viaTus(id: number, filename: string, data: Buffer) {
    const created = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': String(data.length), 'upload-metadata': tusMetadata({ invocation_id: String(id), file_type: 'bitstream', filename }) },
    });
    expect(created.status).toBe(201);
    const done = await server.api(created.headers.get('location')!, {
      method: 'PATCH',
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: data,
    });
    expect(done.status).toBe(204);
  }

  async function viaDigest(id: number, filename: string, data: Buffer) {
    const res = await server.api(`/api/invocations/${id}/files/weights/`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: sha256(data), filename }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  }

  it.each(cases)('%j is stored as %j through multipart, tus and attach-by-digest, and zipped so', async (sent, stored) => {
    const id = await createInvocation(server, `names ${stored}`);
    const data = Buffer.from(`content for ${sent}`);
    // Multipart cannot carry control characters in a header: that entry gets the rest of the name.
    const multipartName = sent.replace(/[\u0000-\u001f\u007f]/g, '');
    await uploadFile(server, id, 'parameter', multipartName, data);
    await viaTus(id, sent, data);
    await viaDigest(id, sent, data);
    const files = (await json(await server.api(`/api/invocations/${id}/`))).files;
    expect(files.parameter.filename).toBe(plainFileName(multipartName));
    expect(files.bitstream.filename).toBe(stored);
    expect(files.weights.filename).toBe(stored);

    const zip = readZip(Buffer.from(await (await server.api(`/api/invocations/${id}/download/`)).arrayBuffer()));
    const names = zip.map((e) => e.name).sort();
    expect(names).toEqual(['bitstream/' + stored, 'invocation.json', 'parameter/' + plainFileName(multipartName), 'weights/' + stored].sort());
    for (const name of names) expect(name.split('/').every((segment) => segment !== '..' && segment !== '')).toBe(true);
  });

  it('a NUL in a name sent by tus or attach-by-digest is removed, not refused and not a 500', async () => {
    const id = await createInvocation(server, 'nul');
    const data = Buffer.from('nul');
    await uploadFile(server, id, 'parameter', 'seed.bin', data);
    await viaTus(id, 'a\0b.bin', data);
    await viaDigest(id, '../x\0y.bin', data);
    const files = (await json(await server.api(`/api/invocations/${id}/`))).files;
    expect(files.bitstream.filename).toBe('ab.bin');
    expect(files.weights.filename).toBe('xy.bin');
  });
});
