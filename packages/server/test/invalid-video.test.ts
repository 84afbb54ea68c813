/**
 * Issue 39, item 15: an `input_video` whose bytes are no video container is refused with 400
 * `invalid_video` and nothing is stored, by both upload paths (multipart and tus) and by an
 * attach of content the server holds; a real container still goes in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeMp4, sha256, storedContent, upload, uploadFile } from './invocations-support.ts';

const TUS = { 'tus-resumable': '1.0.0' };
const tusMetadata = (v: Record<string, string>) =>
  Object.entries(v)
    .map(([k, x]) => `${k} ${Buffer.from(x).toString('base64')}`)
    .join(',');

describe.each(dbKinds)('input videos must be videos (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });
  const inputVideo = async (id: number) => (await json(await server.api(`/api/invocations/${id}/`))).files.input_video;

  it('a multipart upload of a text file as input_video is 400 invalid_video, and nothing is stored', async () => {
    const id = await createInvocation(server, 'not a video');
    const before = await storedContent(server);
    const res = await upload(server, id, [
      { name: 'file_type', value: 'input_video' },
      { name: 'file', filename: 'notes.mp4', data: Buffer.from('these are my notes, not a video\n'.repeat(100)) },
    ]);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_video' });
    expect(await inputVideo(id)).toBeNull();
    expect(await storedContent(server)).toEqual(before);
    // The same text is fine as a parameter file, and a real container as the video.
    expect((await uploadFile(server, id, 'input_video', 'clip.mp4', fakeMp4(8192))).kind).toBe('input_video');
    const mkv = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81]), Buffer.alloc(4000, 3)]);
    expect((await uploadFile(server, id, 'input_video', 'clip.mkv', mkv)).sha256).toBe(sha256(mkv));
  });

  it('a tus upload of a non-video as input_video is 400 invalid_video at its last byte; nothing attached, nothing stored', async () => {
    const id = await createInvocation(server, 'tus not a video');
    const before = await storedContent(server);
    const data = Buffer.from('PK\x03\x04 a zip file pretending to be a video '.repeat(50), 'latin1');
    const created = await server.api('/api/uploads/', {
      method: 'POST',
      headers: { ...TUS, 'upload-length': String(data.length), 'upload-metadata': tusMetadata({ invocation_id: String(id), file_type: 'input_video', filename: 'clip.mp4' }) },
    });
    expect(created.status).toBe(201);
    const res = await server.api(created.headers.get('location')!, {
      method: 'PATCH',
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      body: data,
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_video' });
    expect(await inputVideo(id)).toBeNull();
    expect(await storedContent(server)).toEqual(before);
  });

  it('attaching held content that is no video as input_video is 400 invalid_video', async () => {
    const id = await createInvocation(server, 'attach not a video');
    const text = Buffer.from('{"schema": "mm-runner/1", "inputs": {}}');
    const param = await uploadFile(server, id, 'weights', 'w.bin', text);
    const res = await server.api(`/api/invocations/${id}/files/input_video/`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: param.sha256, filename: 'clip.mp4' }),
    });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'invalid_video' });
    expect(await inputVideo(id)).toBeNull();
    // The weights keep their content.
    expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights.sha256).toBe(param.sha256);
  });
});
