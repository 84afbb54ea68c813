import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachInvocationFile } from '../src/invocations/invocation-files.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { contentDir, createInvocation, eventually, fakeMp4, patterned, readZip, sha256, uploadFile } from './invocations-support.ts';
import { asVideo } from '../../../test/support/fake-video.ts';

/** Files this process (the in-process server) has open inside a folder. */
async function openFilesUnder(dir: string): Promise<string[]> {
  const open: string[] = [];
  for (const fd of await fs.readdir('/proc/self/fd')) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(dir + path.sep)) open.push(target);
  }
  return open;
}

describe.each(dbKinds)('ZIP download (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('streams <kind>/<filename> entries, stored, and invocation.json with name, description and sha256s', async () => {
    const id = await createInvocation(server, 'Zip me: ünïcode', 'what it is for');
    const parameter = Buffer.from('{"duration_s": 0.1}');
    const weights = patterned(300_000);
    const video = fakeMp4(20_000);
    await uploadFile(server, id, 'parameter', 'params.json', parameter);
    await uploadFile(server, id, 'weights', 'model.bin', weights);
    const stored = await server.ctx.files.ingest(Readable.from([video]));
    await attachInvocationFile(server.ctx, id, 'output_video', { filename: 'out.mp4', ...stored });

    const res = await server.api(`/api/invocations/${id}/download/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const disposition = res.headers.get('content-disposition')!;
    expect(disposition).toMatch(/^attachment; filename="[^"]+\.zip"/);
    expect(disposition).toContain(`-${id}.zip`);
    const zip = Buffer.from(await res.arrayBuffer());

    const entries = readZip(zip);
    expect(entries.map((e) => e.name).sort()).toEqual(['invocation.json', 'output_video/out.mp4', 'parameter/params.json', 'weights/model.bin']);
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(byName.get('parameter/params.json')!.data.equals(parameter)).toBe(true);
    expect(byName.get('weights/model.bin')!.data.equals(weights)).toBe(true);
    expect(byName.get('output_video/out.mp4')!.data.equals(video)).toBe(true);
    for (const e of entries) {
      expect(e.method, `${e.name} is stored, not deflated`).toBe(0);
      expect(crc32(e.data) >>> 0, `${e.name} CRC`).toBe(e.crc32);
    }
    const manifest = JSON.parse(byName.get('invocation.json')!.data.toString('utf8'));
    expect(manifest).toMatchObject({
      id,
      name: 'Zip me: ünïcode',
      description: 'what it is for',
      files: {
        parameter: { filename: 'params.json', size: parameter.length, sha256: sha256(parameter) },
        weights: { filename: 'model.bin', size: weights.length, sha256: sha256(weights) },
        output_video: { filename: 'out.mp4', size: video.length, sha256: sha256(video), content_type: 'video/mp4' },
      },
    });
    expect(manifest.files.bitstream).toBeUndefined();

    // A second opinion when the machine has Info-ZIP.
    if (spawnSync('unzip', ['-v']).status === 0) {
      const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'mm-zip-')), 'inv.zip');
      await fs.writeFile(file, zip);
      const check = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
      await fs.rm(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('zips an invocation without files as invocation.json alone, also without the trailing slash', async () => {
    const id = await createInvocation(server, 'empty', '');
    const res = await server.api(`/api/invocations/${id}/download`);
    expect(res.status).toBe(200);
    const entries = readZip(Buffer.from(await res.arrayBuffer()));
    expect(entries.map((e) => e.name)).toEqual(['invocation.json']);
    expect(JSON.parse(entries[0]!.data.toString())).toMatchObject({ name: 'empty', description: '', files: {} });
  });

  it('answers unknown and non-numeric ids with 404', async () => {
    for (const bad of ['999999', 'abc']) {
      const res = await server.api(`/api/invocations/${bad}/download/`);
      expect(res.status).toBe(404);
      expect((await json(res)).code).toBe('invocation_not_found');
    }
  });

  it('answers HEAD without opening a file', async () => {
    const id = await createInvocation(server, 'head');
    await uploadFile(server, id, 'weights', 'w.bin', patterned(1000));
    const res = await server.api(`/api/invocations/${id}/download/`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(await openFilesUnder(contentDir(server))).toEqual([]);
  });

  it('closes every file it opened when the client aborts the download', async () => {
    const id = await createInvocation(server, 'aborted download');
    // Large enough that the socket buffers cannot take it all: the server is mid-stream.
    for (const [i, k] of (['weights', 'input_video', 'bitstream'] as const).entries()) {
      const big = asVideo(Buffer.alloc(24 * 1024 * 1024, i + 1));
      const stored = await server.ctx.files.ingest(Readable.from([big]));
      await attachInvocationFile(server.ctx, id, k, { filename: `${k}.bin`, ...stored });
    }
    const abort = new AbortController();
    const res = await server.api(`/api/invocations/${id}/download/`, { signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let received = 0;
    while (received < 1024 * 1024) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.byteLength;
    }
    expect((await openFilesUnder(contentDir(server))).length).toBeGreaterThan(0);
    abort.abort();
    await reader.cancel().catch(() => {});
    await eventually(async () => (await openFilesUnder(contentDir(server))).length === 0, 'every content file is closed');
    // The server still answers, and a full download still works.
    const again = await server.api(`/api/invocations/${id}/download/`);
    expect(readZip(Buffer.from(await again.arrayBuffer())).map((e) => e.name).sort()).toEqual([
      'bitstream/bitstream.bin',
      'input_video/input_video.bin',
      'invocation.json',
      'weights/weights.bin',
    ]);
    await eventually(async () => (await openFilesUnder(contentDir(server))).length === 0, 'files closed after a full download');
  });

  it('closes the file when the client aborts a per-file or video download', async () => {
    const id = await createInvocation(server, 'aborted file download');
    const big = Buffer.alloc(48 * 1024 * 1024, 0x5a);
    big.write('\0\0\0\x18ftypisom', 0, 'latin1');
    const stored = await server.ctx.files.ingest(Readable.from([big]));
    await attachInvocationFile(server.ctx, id, 'output_video', { filename: 'big.mp4', ...stored });
    for (const url of [`/api/invocations/${id}/video/`, `/api/invocations/${id}/files/output_video/`]) {
      const abort = new AbortController();
      const res = await server.api(url, { signal: abort.signal, headers: { range: 'bytes=1000-' } });
      expect(res.status).toBe(206);
      const reader = res.body!.getReader();
      await reader.read();
      expect((await openFilesUnder(contentDir(server))).length).toBeGreaterThan(0);
      abort.abort();
      await reader.cancel().catch(() => {});
      await eventually(async () => (await openFilesUnder(contentDir(server))).length === 0, `${url}: the file is closed`);
    }
    expect((await server.api('/api/health/')).status).toBe(200);
  });
});

describe.each(dbKinds)('per-file download of a file larger than one read (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers spans up to one read from a buffer and longer ones streamed, each with its request id', async () => {
    const MiB = 1024 * 1024;
    const big = patterned(2.5 * MiB + 7);
    const id = await createInvocation(server, 'big ranges');
    const stored = await server.ctx.files.ingest(Readable.from([big]));
    await attachInvocationFile(server.ctx, id, 'weights', { filename: 'big.bin', ...stored });
    for (const [start, end] of [
      [0, MiB - 1], // exactly one read
      [1, MiB + 1], // one byte more
      [MiB - 3, 2 * MiB + 5],
      [0, big.length - 1],
    ] as const) {
      const res = await server.api(`/api/invocations/${id}/files/weights/`, { headers: { range: `bytes=${start}-${end}`, 'x-request-id': `range-${start}` } });
      expect(res.status).toBe(206);
      expect(res.headers.get('x-request-id')).toBe(`range-${start}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await res.arrayBuffer()).equals(big.subarray(start, end + 1)), `bytes ${start}-${end}`).toBe(true);
    }
    const whole = await server.api(`/api/invocations/${id}/files/weights/`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(Buffer.from(await whole.arrayBuffer()).equals(big)).toBe(true);
  });
});
