import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import {
  createInvocation,
  eventually,
  multipart,
  type Part,
  patterned,
  sha256,
  storedContent,
  tempFiles,
  upload,
  uploadFile,
} from './invocations-support.ts';
import { asVideo } from '../../../test/support/fake-video.ts';

const MAX_UPLOAD = 1024 * 1024;

describe.each(dbKinds)('invocation uploads and per-file routes (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('upload', () => {
    it('stores the file (file_type first) and answers 201 with its record', async () => {
      const id = await createInvocation(server);
      const data = Buffer.from('{"duration_s": 1}\n');
      const res = await upload(server, id, [
        { name: 'file_type', value: 'parameter' },
        { name: 'file', filename: 'params.json', data },
      ]);
      expect(res.status).toBe(201);
      const record = await json(res);
      expect(record).toEqual({
        kind: 'parameter',
        filename: 'params.json',
        size: data.length,
        sha256: sha256(data),
        content_type: 'application/json',
        uploaded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        url: `/api/invocations/${id}/files/parameter/`,
      });
      const inv = await json(await server.api(`/api/invocations/${id}/`));
      expect(inv.files.parameter).toEqual(record);
      expect(inv.updated_at >= inv.created_at).toBe(true);
      expect(await storedContent(server)).toContain(`${record.sha256.slice(0, 2)}/${record.sha256}`);
    });

    it('accepts the file part before file_type', async () => {
      const id = await createInvocation(server);
      const data = patterned(200_000);
      const res = await upload(server, id, [
        { name: 'file', filename: 'design.bit', data },
        { name: 'file_type', value: 'bitstream' },
      ]);
      expect(res.status).toBe(201);
      expect(await json(res)).toMatchObject({ kind: 'bitstream', filename: 'design.bit', size: data.length, sha256: sha256(data), content_type: 'application/octet-stream' });
      const back = await server.api(`/api/invocations/${id}/files/bitstream/`);
      expect(Buffer.from(await back.arrayBuffer()).equals(data)).toBe(true);
    });

    it('sniffs video content types from the bytes, not the name', async () => {
      const id = await createInvocation(server);
      const mp4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(100)]);
      expect((await uploadFile(server, id, 'input_video', 'clip.bin', mp4)).content_type).toBe('video/mp4');
      const avi = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('AVI LIST'), Buffer.alloc(100)]);
      expect((await uploadFile(server, id, 'input_video', 'clip.mp4', avi)).content_type).toBe('video/x-msvideo');
      // (Not named .xmodel: that would be read as an XIR model, and these bytes are none.)
      expect((await uploadFile(server, id, 'weights', 'model.bin', Buffer.from('weights'))).content_type).toBe('application/octet-stream');
    });

    it.each([
      ['../../x.bit', 'x.bit'],
      ['/etc/x', 'x'],
      ['C:\\Users\\me\\y.bin', 'y.bin'],
      ['..', 'upload'],
    ])('stores client filename %j as %j', async (sent, stored) => {
      const id = await createInvocation(server);
      const record = await uploadFile(server, id, 'weights', sent, Buffer.from(`w-${sent}`));
      expect(record.filename).toBe(stored);
    });

    it('accepts an empty file and a file of exactly the size limit', async () => {
      const id = await createInvocation(server);
      expect((await uploadFile(server, id, 'parameter', 'empty.txt', Buffer.alloc(0))).size).toBe(0);
      const full = patterned(MAX_UPLOAD);
      expect((await uploadFile(server, id, 'weights', 'full.bin', full)).sha256).toBe(sha256(full));
    });

    it('replaces the file of that kind and removes content nothing uses any more', async () => {
      const id = await createInvocation(server);
      const first = await uploadFile(server, id, 'weights', 'a.bin', Buffer.from('replace-me-first'));
      const second = await uploadFile(server, id, 'weights', 'b.bin', Buffer.from('replace-me-second'));
      const inv = await json(await server.api(`/api/invocations/${id}/`));
      expect(inv.files.weights).toMatchObject({ filename: 'b.bin', sha256: second.sha256 });
      const stored = await storedContent(server);
      expect(stored).toContain(`${second.sha256.slice(0, 2)}/${second.sha256}`);
      expect(stored).not.toContain(`${first.sha256.slice(0, 2)}/${first.sha256}`);
    });

    it('stores the same bytes once, and keeps them while another invocation uses them', async () => {
      const data = Buffer.from('shared-content-bytes');
      const a = await createInvocation(server, 'a');
      const b = await createInvocation(server, 'b');
      const ra = await uploadFile(server, a, 'weights', 'w.bin', data);
      const rb = await uploadFile(server, b, 'parameter', 'p.bin', data);
      expect(rb.sha256).toBe(ra.sha256);
      const entry = `${ra.sha256.slice(0, 2)}/${ra.sha256}`;
      expect((await storedContent(server)).filter((f) => f === entry)).toHaveLength(1);

      expect((await server.api(`/api/invocations/${a}/`, { method: 'DELETE' })).status).toBe(204);
      expect(await storedContent(server)).toContain(entry);
      const back = await server.api(`/api/invocations/${b}/files/parameter/`);
      expect(Buffer.from(await back.arrayBuffer()).equals(data)).toBe(true);

      expect((await server.api(`/api/invocations/${b}/`, { method: 'DELETE' })).status).toBe(204);
      expect(await storedContent(server)).not.toContain(entry);
    });

    it('works without the trailing slash', async () => {
      const id = await createInvocation(server);
      const { body, contentType } = multipart([
        { name: 'file_type', value: 'parameter' },
        { name: 'file', filename: 'p.txt', data: Buffer.from('no slash') },
      ]);
      const res = await server.api(`/api/invocations/${id}/upload`, { method: 'POST', headers: { 'content-type': contentType }, body });
      expect(res.status).toBe(201);
    });

    describe('bad input', () => {
      let id: number;
      beforeAll(async () => {
        id = await createInvocation(server, 'bad-input');
      });

      const expectProblem = async (res: Response, status: number, code: string, field?: string) => {
        expect(res.status).toBe(status);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        const problem = await json(res);
        expect(problem.code).toBe(code);
        if (field) expect(problem.errors.map((e: { field: string }) => e.field)).toContain(field);
        // Nothing of the rejected upload stays behind.
        expect(await tempFiles(server)).toEqual([]);
        expect(await storedContent(server)).not.toContain(`${sha256(rejected).slice(0, 2)}/${sha256(rejected)}`);
      };
      const rejected = Buffer.from('bytes of a rejected upload');

      it.each([['output_video'], ['video'], ['']])('rejects file_type %j with 400, before or after the file', async (fileType) => {
        await expectProblem(
          await upload(server, id, [
            { name: 'file_type', value: fileType },
            { name: 'file', filename: 'x.bin', data: rejected },
          ]),
          400,
          'validation_failed',
          'file_type',
        );
        await expectProblem(
          await upload(server, id, [
            { name: 'file', filename: 'x.bin', data: rejected },
            { name: 'file_type', value: fileType },
          ]),
          400,
          'validation_failed',
          'file_type',
        );
      });

      it('rejects a missing file_type with 400', async () => {
        await expectProblem(await upload(server, id, [{ name: 'file', filename: 'x.bin', data: rejected }]), 400, 'validation_failed', 'file_type');
      });

      it('rejects a form without a file part with 400', async () => {
        await expectProblem(await upload(server, id, [{ name: 'file_type', value: 'parameter' }]), 400, 'validation_failed', 'file');
        // A text field named "file" is no file part either.
        await expectProblem(
          await upload(server, id, [
            { name: 'file_type', value: 'parameter' },
            { name: 'file', value: 'just text' },
          ]),
          400,
          'validation_failed',
          'file',
        );
      });

      it('rejects two file parts with 400', async () => {
        await expectProblem(
          await upload(server, id, [
            { name: 'file_type', value: 'parameter' },
            { name: 'file', filename: 'a.bin', data: rejected },
            { name: 'file', filename: 'b.bin', data: Buffer.from('second') },
          ]),
          400,
          'too_many_files',
        );
      });

      it.each([['application/json'], ['application/octet-stream'], ['text/plain']])('rejects Content-Type %s with 415', async (type) => {
        const res = await server.api(`/api/invocations/${id}/upload/`, { method: 'POST', headers: { 'content-type': type }, body: rejected });
        await expectProblem(res, 415, 'unsupported_media_type');
      });

      it('rejects a multipart Content-Type without boundary with 400', async () => {
        const res = await server.api(`/api/invocations/${id}/upload/`, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: rejected });
        await expectProblem(res, 400, 'malformed_multipart');
      });

      it('rejects a truncated multipart body with 400', async () => {
        const { body, contentType } = multipart([
          { name: 'file_type', value: 'parameter' },
          { name: 'file', filename: 'x.bin', data: rejected },
        ]);
        const cut = body.subarray(0, body.length - 30);
        const res = await server.api(`/api/invocations/${id}/upload/`, { method: 'POST', headers: { 'content-type': contentType }, body: cut });
        await expectProblem(res, 400, 'malformed_multipart');
      });

      it('leaves no temp file behind however quickly a rejected upload fails (repeated)', async () => {
        // The file part is rejected right after its temp file was created (sometimes before the
        // file was even open): removal must wait for the file to be closed.
        for (let i = 0; i < 80; i++) {
          const variants: Part[][] = [
            [
              { name: 'file_type', value: 'parameter' },
              { name: 'file', filename: 'a.bin', data: rejected },
              { name: 'file', filename: 'b.bin', data: Buffer.from('second') },
            ],
            [
              { name: 'file', filename: 'x.bin', data: rejected },
              { name: 'file_type', value: 'bogus' },
            ],
          ];
          const res = await upload(server, id, variants[i % 2]!);
          expect(res.status).toBe(400);
          await res.arrayBuffer();
        }
        await new Promise((r) => setTimeout(r, 50));
        expect(await tempFiles(server)).toEqual([]);
      });

      it.each([['999999'], ['abc'], ['0']])('answers invocation %s with 404', async (bad) => {
        await expectProblem(
          await upload(server, bad, [
            { name: 'file_type', value: 'parameter' },
            { name: 'file', filename: 'x.bin', data: rejected },
          ]),
          404,
          'invocation_not_found',
        );
      });

      it.each([
        ['one byte over the limit', MAX_UPLOAD + 1],
        ['three times the limit', 3 * MAX_UPLOAD],
      ])('rejects a file %s with 413 and keeps nothing', async (_, size) => {
        const big = patterned(size);
        const res = await upload(server, id, [
          { name: 'file_type', value: 'weights' },
          { name: 'file', filename: 'big.bin', data: big },
        ]);
        expect(res.status).toBe(413);
        expect((await json(res)).code).toBe('payload_too_large');
        expect(await tempFiles(server)).toEqual([]);
        expect(await storedContent(server)).not.toContain(`${sha256(big).slice(0, 2)}/${sha256(big)}`);
        const inv = await json(await server.api(`/api/invocations/${id}/`));
        expect(inv.files.weights).toBeNull();
      });
    });

    it('refuses a declared Content-Length far beyond the limit before reading the body', async () => {
      const id = await createInvocation(server, 'huge');
      const url = new URL(server.url);
      const socket = net.connect(Number(url.port), url.hostname);
      socket.on('error', () => {});
      let answer = '';
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        `POST /api/invocations/${id}/upload/ HTTP/1.1\r\nHost: localhost\r\n` +
          `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${100 * 1024 ** 3}\r\n\r\n--b\r\n`,
      );
      // Only the headers and a few bytes went out: the answer cannot have waited for the body.
      await eventually(() => answer.includes('\r\n\r\n'), 'the server answers');
      socket.destroy();
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('payload_too_large');
      expect(await tempFiles(server)).toEqual([]);
    });

    it('survives a client that aborts mid-upload: nothing on disk, server fine', async () => {
      const id = await createInvocation(server, 'aborted');
      const before = await storedContent(server);
      const boundary = 'abort-boundary';
      const head =
        `POST /api/invocations/${id}/upload/ HTTP/1.1\r\nHost: localhost\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${MAX_UPLOAD - 1000}\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\nweights\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="partial.bin"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`;
      const url = new URL(server.url);
      const socket = net.connect(Number(url.port), url.hostname);
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(head);
      socket.write(patterned(300_000));
      // The server is streaming it to a temp file...
      await eventually(async () => (await tempFiles(server)).length > 0, 'a temp file appears');
      // ...when the client goes away.
      socket.destroy();
      await eventually(async () => (await tempFiles(server)).length === 0, 'the temp file is removed');
      expect(await storedContent(server)).toEqual(before);
      expect((await server.api('/api/health/')).status).toBe(200);
      expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights).toBeNull();
      // And a following upload works.
      await uploadFile(server, id, 'weights', 'after.bin', Buffer.from('after the abort'));
    });
  });

  describe('per-file download', () => {
    let id: number;
    const data = patterned(10_000);
    let record: { sha256: string; uploaded_at: string };
    beforeAll(async () => {
      id = await createInvocation(server, 'ranges');
      record = await uploadFile(server, id, 'weights', 'model weights.bin', data);
    });
    const get = (headers: Record<string, string> = {}, method = 'GET') => server.api(`/api/invocations/${id}/files/weights/`, { headers, method });

    it('answers 200 with the bytes, ETag, Last-Modified, Accept-Ranges and type', async () => {
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toBe(`"${record.sha256}"`);
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('content-length')).toBe(String(data.length));
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toContain('attachment');
      expect(new Date(res.headers.get('last-modified')!).getTime()).toBe(Math.floor(Date.parse(record.uploaded_at) / 1000) * 1000);
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    });

    it('works without the trailing slash', async () => {
      const res = await server.api(`/api/invocations/${id}/files/weights`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    });

    it.each([
      ['bytes=0-0', 0, 0],
      ['bytes=9999-9999', 9999, 9999],
      ['bytes=100-199', 100, 199],
      ['bytes=-500', 9500, 9999],
      ['bytes=-20000', 0, 9999],
      ['bytes=9000-', 9000, 9999],
      ['bytes=9000-20000', 9000, 9999],
      ['bytes=20000-, 10-19', 10, 19],
      ['BYTES = 1-2', 1, 2],
    ])('answers Range %s with 206 and those bytes', async (range, start, end) => {
      const res = await get({ range });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${data.length}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(start, end + 1))).toBe(true);
    });

    it('answers two ranges apart with the whole file and 200 (RFC 9110 lets a server ignore Range; docs/conformance.md)', async () => {
      const res = await get({ range: 'bytes=5-9, 20-29' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-range')).toBeNull();
      expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    });

    it.each([['bytes=10000-'], ['bytes=20000-30000'], ['bytes=-0'], ['bytes=5-2'], ['bytes=abc'], ['bytes=1-2-3'], ['bytes='], ['bytes=-']])(
      'answers Range %s with 416 and Content-Range bytes */size',
      async (range) => {
        const res = await get({ range });
        expect(res.status).toBe(416);
        expect(res.headers.get('content-range')).toBe(`bytes */${data.length}`);
        expect((await json(res)).code).toBe('range_not_satisfiable');
      },
    );

    it.each([['items=0-5'], ['garbage']])('ignores Range %s (unknown unit) and answers 200', async (range) => {
      const res = await get({ range });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(data.length);
    });

    it('answers If-None-Match with the ETag with 304', async () => {
      const res = await get({ 'if-none-match': `"other", "${record.sha256}"` });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(`"${record.sha256}"`);
      expect((await res.arrayBuffer()).byteLength).toBe(0);
      expect((await get({ 'if-none-match': '"other"' })).status).toBe(200);
    });

    it('answers If-Modified-Since not older than the upload with 304', async () => {
      expect((await get({ 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status).toBe(304);
      expect((await get({ 'if-modified-since': new Date('2000-01-01').toUTCString() })).status).toBe(200);
    });

    it('honours If-Range: the range only while the ETag matches', async () => {
      expect((await get({ range: 'bytes=0-9', 'if-range': `"${record.sha256}"` })).status).toBe(206);
      const stale = await get({ range: 'bytes=0-9', 'if-range': '"stale"' });
      expect(stale.status).toBe(200);
      expect((await stale.arrayBuffer()).byteLength).toBe(data.length);
    });

    it('answers HEAD with the headers and no body', async () => {
      const res = await get({}, 'HEAD');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(data.length));
      expect(res.headers.get('etag')).toBe(`"${record.sha256}"`);
      const ranged = await get({ range: 'bytes=0-9' }, 'HEAD');
      expect(ranged.status).toBe(206);
      expect(ranged.headers.get('content-range')).toBe(`bytes 0-9/${data.length}`);
    });

    it('answers 404 for a kind it has no file of, an unknown kind, an unknown invocation', async () => {
      const none = await server.api(`/api/invocations/${id}/files/parameter/`);
      expect(none.status).toBe(404);
      expect((await json(none)).code).toBe('file_not_found');
      const unknownKind = await server.api(`/api/invocations/${id}/files/firmware/`);
      expect(unknownKind.status).toBe(404);
      expect((await json(unknownKind)).code).toBe('file_not_found');
      for (const bad of ['999999', 'abc']) {
        const res = await server.api(`/api/invocations/${bad}/files/weights/`);
        expect(res.status).toBe(404);
        expect((await json(res)).code).toBe('invocation_not_found');
      }
    });
  });

  describe('per-file delete', () => {
    it('answers 204, the file is gone from the invocation and from disk', async () => {
      const id = await createInvocation(server, 'per-file-delete');
      const record = await uploadFile(server, id, 'input_video', 'in.avi', asVideo(Buffer.from('unique input video bytes')));
      const before = await json(await server.api(`/api/invocations/${id}/`));
      const res = await server.api(`/api/invocations/${id}/files/input_video/`, { method: 'DELETE' });
      expect(res.status).toBe(204);
      const inv = await json(await server.api(`/api/invocations/${id}/`));
      expect(inv.files.input_video).toBeNull();
      expect(inv.updated_at >= before.updated_at).toBe(true);
      expect(await storedContent(server)).not.toContain(`${record.sha256.slice(0, 2)}/${record.sha256}`);
      expect((await server.api(`/api/invocations/${id}/files/input_video/`)).status).toBe(404);
      const again = await server.api(`/api/invocations/${id}/files/input_video`, { method: 'DELETE' });
      expect(again.status).toBe(404);
      expect((await json(again)).code).toBe('file_not_found');
    });

    it('answers 404 for an unknown kind and an unknown invocation', async () => {
      const id = await createInvocation(server);
      expect((await server.api(`/api/invocations/${id}/files/nope/`, { method: 'DELETE' })).status).toBe(404);
      const res = await server.api('/api/invocations/999999/files/weights/', { method: 'DELETE' });
      expect(res.status).toBe(404);
      expect((await json(res)).code).toBe('invocation_not_found');
    });
  });
});
