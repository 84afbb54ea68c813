import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachInvocationFile } from '../src/invocations/invocation-files.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeAvi, fakeMp4, rawGet, sha256 } from './invocations-support.ts';

describe.each(dbKinds)('videos: output video, list, results folder (%s database)', (kind) => {
  let server: TestServer;
  let root: string;
  let results: string;
  const nested = fakeAvi(5000);
  const top = fakeMp4(3000);
  const secret = fakeMp4(1234);

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-videos-'));
    results = path.join(root, 'results');
    await fs.mkdir(path.join(results, 'run 1', 'deep'), { recursive: true });
    await fs.writeFile(path.join(results, 'top.mp4'), top);
    await fs.writeFile(path.join(results, 'run 1', 'deep', 'Clip.AVI'), nested);
    await fs.writeFile(path.join(results, 'run 1', 'notes.txt'), 'not a video');
    await fs.writeFile(path.join(results, 'run 1', 'fake.mp4.txt'), 'not a video either');
    // Outside the results folder, reachable only through tricks.
    await fs.writeFile(path.join(root, 'secret.mp4'), secret);
    await fs.symlink(path.join(root, 'secret.mp4'), path.join(results, 'escape.mp4'));
    await fs.symlink(root, path.join(results, 'escape-dir'));
    // A symlink that stays inside is fine.
    await fs.symlink(path.join(results, 'top.mp4'), path.join(results, 'alias.mp4'));
    server = await startTestServer(kind, { MM_RESULTS_DIR: results });
  });
  afterAll(async () => {
    await server?.stop();
    await fs.rm(root, { recursive: true, force: true });
  });

  async function attachOutputVideo(id: number, data: Buffer, filename: string) {
    const stored = await server.ctx.files.ingest(Readable.from([data]));
    return attachInvocationFile(server.ctx, id, 'output_video', { filename, ...stored });
  }

  describe('GET /api/invocations/<id>/video/', () => {
    it('serves the output video with its sniffed type and Range', async () => {
      const id = await createInvocation(server, 'with video');
      const video = fakeMp4(50_000);
      const record = await attachOutputVideo(id, video, 'out.mp4');
      expect(record).toMatchObject({ kind: 'output_video', filename: 'out.mp4', size: video.length, sha256: sha256(video), content_type: 'video/mp4' });

      const full = await server.api(`/api/invocations/${id}/video/`);
      expect(full.status).toBe(200);
      expect(full.headers.get('content-type')).toBe('video/mp4');
      expect(full.headers.get('accept-ranges')).toBe('bytes');
      expect(full.headers.get('etag')).toBe(`"${record.sha256}"`);
      expect(full.headers.get('last-modified')).toBeTruthy();
      expect(Buffer.from(await full.arrayBuffer()).equals(video)).toBe(true);

      const part = await server.api(`/api/invocations/${id}/video`, { headers: { range: 'bytes=-100' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes ${video.length - 100}-${video.length - 1}/${video.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(video.subarray(-100))).toBe(true);

      const beyond = await server.api(`/api/invocations/${id}/video/`, { headers: { range: `bytes=${video.length}-` } });
      expect(beyond.status).toBe(416);
      expect(beyond.headers.get('content-range')).toBe(`bytes */${video.length}`);
    });

    it('serves an AVI as video/x-msvideo', async () => {
      const id = await createInvocation(server, 'avi');
      await attachOutputVideo(id, fakeAvi(2000), 'out.avi');
      const res = await server.api(`/api/invocations/${id}/video/`);
      expect(res.headers.get('content-type')).toBe('video/x-msvideo');
      await res.arrayBuffer();
    });

    it('answers 404 without an output video, and for unknown invocations', async () => {
      const id = await createInvocation(server, 'no video yet');
      const none = await server.api(`/api/invocations/${id}/video/`);
      expect(none.status).toBe(404);
      expect((await json(none)).code).toBe('video_not_found');
      for (const bad of ['999999', 'abc']) {
        const res = await server.api(`/api/invocations/${bad}/video/`);
        expect(res.status).toBe(404);
        expect((await json(res)).code).toBe('invocation_not_found');
      }
    });

    it('a new output video replaces the old one', async () => {
      const id = await createInvocation(server, 'replaced video');
      await attachOutputVideo(id, fakeMp4(1000), 'first.mp4');
      const second = fakeAvi(1500);
      await attachOutputVideo(id, second, 'second.avi');
      const inv = await json(await server.api(`/api/invocations/${id}/`));
      expect(inv.files.output_video).toMatchObject({ filename: 'second.avi', sha256: sha256(second) });
      const res = await server.api(`/api/invocations/${id}/video/`);
      expect(Buffer.from(await res.arrayBuffer()).equals(second)).toBe(true);
    });

    it('attaching to an invocation that does not exist is its 404, and keeps nothing', async () => {
      const orphan = Buffer.from('video of nobody');
      const stored = await server.ctx.files.ingest(Readable.from([orphan]));
      await expect(attachInvocationFile(server.ctx, 999_999, 'output_video', { filename: 'x.mp4', ...stored })).rejects.toMatchObject({
        status: 404,
        code: 'invocation_not_found',
      });
      expect(await server.ctx.files.has(stored.sha256)).toBe(false);
    });
  });

  describe('GET /api/videos/', () => {
    it('lists invocation output videos and results-folder videos, subfolders included', async () => {
      const id = await createInvocation(server, 'listed');
      const video = fakeMp4(777);
      await attachOutputVideo(id, video, 'listed.mp4');

      const res = await server.api('/api/videos/');
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.total).toBe(body.videos.length);
      const fromInvocation = body.videos.find((v: { invocation_id: number | null }) => v.invocation_id === id);
      expect(fromInvocation).toEqual({
        source: 'invocation',
        invocation_id: id,
        name: 'listed',
        filename: 'listed.mp4',
        size: 777,
        content_type: 'video/mp4',
        modified_at: expect.stringMatching(/\.\d{3}Z$/),
        url: `/api/invocations/${id}/video/`,
      });

      const fromResults = body.videos.filter((v: { source: string }) => v.source === 'results');
      expect(fromResults.map((v: { name: string }) => v.name).sort()).toEqual(['alias.mp4', 'run 1/deep/Clip.AVI', 'top.mp4']);
      const clip = fromResults.find((v: { name: string }) => v.name === 'run 1/deep/Clip.AVI');
      expect(clip).toEqual({
        source: 'results',
        invocation_id: null,
        name: 'run 1/deep/Clip.AVI',
        filename: 'Clip.AVI',
        size: nested.length,
        content_type: 'video/x-msvideo',
        modified_at: expect.stringMatching(/\.\d{3}Z$/),
        url: '/api/videos/results/run%201/deep/Clip.AVI',
      });
      // Newest first.
      const times = body.videos.map((v: { modified_at: string }) => v.modified_at);
      expect([...times].sort().reverse()).toEqual(times);
    });

    it('pages with limit and offset', async () => {
      const all = await json(await server.api('/api/videos/'));
      const page = await json(await server.api('/api/videos?limit=1&offset=1'));
      expect(page.total).toBe(all.total);
      expect(page.videos).toEqual(all.videos.slice(1, 2));
      expect((await server.api('/api/videos/?limit=0')).status).toBe(400);
    });
  });

  describe('GET /api/videos/results/<path>', () => {
    it('serves each listed video by its URL, with Range', async () => {
      const res = await server.api('/api/videos/results/run%201/deep/Clip.AVI');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('video/x-msvideo');
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('etag')).toMatch(/^".+"$/);
      expect(Buffer.from(await res.arrayBuffer()).equals(nested)).toBe(true);

      const part = await server.api('/api/videos/results/top.mp4', { headers: { range: 'bytes=10-19' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-type')).toBe('video/mp4');
      expect(part.headers.get('content-range')).toBe(`bytes 10-19/${top.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(top.subarray(10, 20))).toBe(true);

      const alias = await server.api('/api/videos/results/alias.mp4');
      expect(Buffer.from(await alias.arrayBuffer()).equals(top)).toBe(true);

      const etag = res.headers.get('etag')!;
      expect((await server.api('/api/videos/results/run%201/deep/Clip.AVI', { headers: { 'if-none-match': etag } })).status).toBe(304);
      expect((await server.api('/api/videos/results/top.mp4', { headers: { range: 'bytes=5000-' } })).status).toBe(416);
    });

    it.each([
      ['/api/videos/results/../secret.mp4'],
      ['/api/videos/results/%2e%2e/secret.mp4'],
      ['/api/videos/results/%2E%2E/secret.mp4'],
      ['/api/videos/results/%2e%2e%2fsecret.mp4'],
      ['/api/videos/results/run%201/..%2f..%2fsecret.mp4'],
      ['/api/videos/results/run%201%2fdeep%2fClip.AVI'],
      ['/api/videos/results/run%201%5cdeep%5cClip.AVI'],
      ['/api/videos/results//top.mp4'],
      ['/api/videos/results/%2ftmp%2fsecret.mp4'],
      ['/api/videos/results/escape.mp4'],
      ['/api/videos/results/escape-dir/secret.mp4'],
      ['/api/videos/results/run%201/notes.txt'],
      ['/api/videos/results/run%201'],
      ['/api/videos/results/missing.mp4'],
      ['/api/videos/results/top.mp4%00.txt'],
      ['/api/videos/results/%E0%A4%A.mp4'],
      ['/api/videos/results/'],
    ])('answers %s with 404', async (rawPath) => {
      const res = await rawGet(server, rawPath);
      expect(res.status).toBe(404);
      expect(res.body.includes(secret)).toBe(false);
    });

    it('answers a traversal attempt with a problem+json 404, not the file', async () => {
      const res = await rawGet(server, '/api/videos/results/escape.mp4');
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(res.body.toString()).code).toBe('video_not_found');
    });
  });
});
