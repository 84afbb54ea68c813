import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import jpeg from 'jpeg-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../src/camera-source.ts';
import { looksLikeJpeg } from '../src/jpeg-splitter.ts';
import { startWebcamServer, type WebcamServer } from '../src/webcam-server.ts';
import { openMjpeg, type MjpegClient } from './mjpeg-reader.ts';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/mm-webcam.mjs');

describe('the webcam script with the simulated camera', () => {
  let server: WebcamServer;
  const clients: MjpegClient[] = [];
  beforeAll(async () => {
    server = await startWebcamServer({ camera: new SimulatedCamera({ width: 640, height: 480, fps: 15 }), port: 0 });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  it('GET /state says size, rate and device', async () => {
    const state = await (await fetch(`${server.url}/state`)).json();
    expect(state).toMatchObject({ width: 640, height: 480, fps: 15, device: 'simulated' });
  });

  it('GET /stream.mjpg sends whole JPEG frames, decodable, 640×480, with a moving frame counter and capture time', async () => {
    const c = await openMjpeg(`${server.url}/stream.mjpg`);
    clients.push(c);
    expect(c.status).toBe(200);
    expect(c.contentType).toBe('multipart/x-mixed-replace; boundary=mmframe');
    await c.waitParts(6);
    const times = c.parts.map((p) => Number(p.headers['x-capture-time']));
    for (const p of c.parts.slice(0, 6)) {
      expect(p.headers['content-type']).toBe('image/jpeg');
      expect(looksLikeJpeg(p.body)).toBe(true);
      const img = jpeg.decode(p.body);
      expect([img.width, img.height]).toEqual([640, 480]);
    }
    // Capture times rise at about 15 fps; the pictures differ (the pattern moves).
    for (let i = 1; i < 6; i++) expect(times[i]!).toBeGreaterThan(times[i - 1]!);
    expect(c.parts[1]!.body.equals(c.parts[2]!.body)).toBe(false);
    const frames = async () => ((await (await fetch(`${server.url}/state`)).json()) as { frames: number }).frames;
    const before = await frames();
    await new Promise((r) => setTimeout(r, 300));
    expect(await frames()).toBeGreaterThan(before);
  });

  it('GET /snapshot.jpg is the newest frame', async () => {
    const res = await fetch(`${server.url}/snapshot.jpg`);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const body = Buffer.from(await res.arrayBuffer());
    expect(looksLikeJpeg(body)).toBe(true);
    expect(Date.now() - Number(res.headers.get('x-capture-time'))).toBeLessThan(2000);
    expect(jpeg.decode(body).width).toBe(640);
  });

  it('a viewer that stops reading does not hold up another one, and gets recent frames when it reads again', async () => {
    const stalled = await openMjpeg(`${server.url}/stream.mjpg`);
    clients.push(stalled);
    stalled.res.pause();
    const live = await openMjpeg(`${server.url}/stream.mjpg`);
    clients.push(live);
    await live.waitParts(1);
    // Watch until the camera has made 15 frames (a loaded machine makes them slower than 15 fps).
    const made0 = server.frames();
    const got0 = live.count();
    for (let i = 0; i < 300 && server.frames() - made0 < 15; i++) await new Promise((r) => setTimeout(r, 100));
    const made = server.frames() - made0;
    expect(made).toBeGreaterThanOrEqual(15);
    // The live viewer kept getting frames while the other read nothing. (Not every one: the
    // encoder runs in this same process and, on a loaded machine, can make the next frame
    // before the live socket drained, and then that viewer skips one by design. The
    // end-to-end test, with the script in its own process, holds the rate to the camera's.)
    expect(live.count() - got0).toBeGreaterThanOrEqual(3);
    stalled.res.resume();
    // What the kernel's socket buffers held is read first; then frames are fresh again (well
    // under the few seconds a loaded machine may add), and it skipped what it could not take.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !(stalled.count() > 0 && stalled.ages.at(-1)! < 3000 && stalled.count() > 3)) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(stalled.ages.at(-1)!).toBeLessThan(3000);
  });

  it('404 for unknown routes, 405 for other methods', async () => {
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/state`, { method: 'POST' })).status).toBe(405);
  });
});

describe('mm-webcam on a board without a camera or a capture tool', () => {
  it('says so and exits 1 when neither ffmpeg nor gst-launch-1.0 is on PATH', () => {
    const r = spawnSync(process.execPath, [bin, '--device', '/dev/null', '--port', '0'], { encoding: 'utf8', env: { ...process.env, PATH: '/nonexistent' }, timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no capture tool found: install ffmpeg or gst-launch-1.0/);
  });

  it('says so and exits 1 when the camera device does not exist', () => {
    // A PATH with a stand-in "ffmpeg" (any executable will do: it is never started).
    const dir = path.dirname(process.execPath);
    const r = spawnSync(process.execPath, [bin, '--device', '/dev/video-none', '--port', '0'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${fakeToolDir()}:${dir}` },
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no camera at \/dev\/video-none/);
  });

  it('refuses bad settings with exit 2', () => {
    const r = spawnSync(process.execPath, [bin, '--simulate', '--fps', '500'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--fps \/ MM_WEBCAM_FPS must be from 1 to 60/);
  });
});

function fakeToolDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-webcam-tool-'));
  fs.writeFileSync(path.join(dir, 'ffmpeg'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  return dir;
}
