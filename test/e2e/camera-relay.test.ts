import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJpeg, looksLikeJpeg } from '@mm/webcam';
import { openMjpeg, type MjpegClient } from '../../packages/webcam/test/mjpeg-reader.ts';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { eventually, freePort, startSimulatedAgent, type SimulatedAgent } from './device-scripts-support.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEBCAM_BIN = path.join(repoRoot, 'packages/webcam/bin/mm-webcam.mjs');

/** The webcam script with the simulated camera, on this machine's loopback (the simulated board's loopback too). */
async function startWebcamScript(port: number): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [WEBCAM_BIN, '--simulate', '--port', String(port)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  await eventually(async () => expect((await fetch(`http://127.0.0.1:${port}/state`)).status).toBe(200), 30_000);
  return proc;
}

/** How old the last frame a viewer got was when it arrived. */
const captureAge = (c: MjpegClient) => c.ages.at(-1)!;
/**
 * What counts as fresh here: the machine running the suite may be loaded many times over
 * (latency itself is measured by bench/camera-relay.ts); a backlog would be far older.
 */
const FRESH_MS = 3000;

// One database kind is enough here: the relay keeps nothing in the database.
describe.each(dbKinds.slice(-1))('camera relay end to end: mm-agent --simulate and the webcam script (%s database)', (kind) => {
  let server: TestServer;
  let agent: SimulatedAgent;
  let webcam: ChildProcess;
  let webcamPort: number;
  let deadPort: number;
  let gpioPort: number;
  let board: { id: string; token: string };
  let camId: string;
  const viewers: MjpegClient[] = [];
  const cameraUrl = (id = camId) => `${server.url}/api/device-scripts/${id}/camera/?board_id=${board.id}`;
  const open = async (id = camId, opts: { keep?: number } = {}) => {
    const c = await openMjpeg(cameraUrl(id), {}, opts);
    viewers.push(c);
    return c;
  };
  const scriptState = async () => (await json(await fetch(`http://127.0.0.1:${webcamPort}/state`))) as { viewers: number; frames: number };
  /** The script's own count of `/stream.mjpg` connections: the relay should hold one. */
  const scriptViewers = async () => (await scriptState()).viewers;

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_CAMERA_LINGER_MS: '500' });
    board = await json(await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'car' }) }));
    webcamPort = await freePort();
    deadPort = await freePort();
    webcam = await startWebcamScript(webcamPort);
    // The seeded webcam entry, moved to the port the script got here.
    const { scripts } = await json(await server.api('/api/device-scripts/?device_type=webcam'));
    camId = scripts[0].id;
    const patched = await server.api(`/api/device-scripts/${camId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: webcamPort }) });
    expect(patched.status).toBe(200);
    gpioPort = await freePort();
    agent = await startSimulatedAgent(server.url, board.token, { gpioPort, env: { MM_SCRIPT_PORTS: `${webcamPort},${deadPort}` } });
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000);
  });

  afterAll(async () => {
    for (const v of viewers) v.close();
    await agent?.stop();
    webcam?.kill('SIGTERM');
    await server?.stop();
    if (agent) await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('several viewers each get whole, decodable JPEG frames from one upstream', async () => {
    const many = await Promise.all(Array.from({ length: 8 }, () => open()));
    try {
      for (const v of many) {
        expect(v.status).toBe(200);
        expect(v.contentType).toBe('multipart/x-mixed-replace; boundary=mmframe');
      }
      await Promise.all(many.map((v) => v.waitParts(10)));
      for (const v of many) {
        for (const p of v.parts.slice(0, 10)) {
          expect(p.headers['content-type']).toBe('image/jpeg');
          expect(Number(p.headers['content-length'])).toBe(p.body.length);
          expect(looksLikeJpeg(p.body)).toBe(true);
        }
        const img = decodeJpeg(v.parts[9]!.body);
        expect([img.width, img.height]).toEqual([640, 480]);
        // Fresh frames, not a backlog.
        expect(captureAge(v)).toBeLessThan(FRESH_MS);
      }
      // The board holds one stream, and the server opened one upstream for all of them.
      expect(await scriptViewers()).toBe(1);
      expect(server.ctx.deviceRelay.camera.upstreamsOpened(board.id, camId)).toBe(1);
      expect(server.ctx.deviceRelay.camera.viewerCount(board.id, camId)).toBe(8);
    } finally {
      for (const v of many) v.close();
    }
  });

  it('a stalled viewer neither slows the others nor gets a backlog: it skips to the newest frames', async () => {
    const stalled = await open(camId, { keep: 5 });
    const live = [await open(camId, { keep: 5 }), await open(camId, { keep: 5 })];
    try {
      await stalled.waitParts(1);
      stalled.res.pause();
      await Promise.all(live.map((v) => v.waitParts(1)));
      const from = live.map((v) => v.count());
      const relayed = () => server.ctx.deviceRelay.camera.framesRelayed(board.id, camId);
      const relayedBefore = relayed();
      // Watch for at least 4 s and until 15 frames went through (a loaded machine makes them slowly).
      const t0 = Date.now();
      while ((Date.now() - t0 < 4000 || relayed() - relayedBefore < 15) && Date.now() - t0 < 40_000) await new Promise((r) => setTimeout(r, 100));
      const made = relayed() - relayedBefore;
      // The live viewers kept getting the frames that reached the relay while one viewer read
      // nothing (a viewer skips one only when its socket has not taken the previous one yet,
      // which a loaded machine makes happen now and then).
      expect(made).toBeGreaterThan(10);
      // (Counted, not timed: each kept receiving while the other read nothing.)
      live.forEach((v, i) => expect(v.count() - from[i]!).toBeGreaterThanOrEqual(3));
      for (const v of live) expect(captureAge(v)).toBeLessThan(FRESH_MS);
      // Back to reading: what sat in the socket buffers comes first, then the newest frames, so
      // its delay does not grow. (Comparing frame counts proves nothing here: at a loaded
      // machine's few frames a second, loopback socket buffers hold the whole stall.)
      stalled.res.resume();
      const before = stalled.count();
      await stalled.waitParts(before + 10, 20_000);
      await eventually(async () => expect(captureAge(stalled)).toBeLessThan(FRESH_MS), 20_000);
    } finally {
      stalled.close();
      for (const v of live) v.close();
    }
  });

  it('closes the upstream on the board after the last viewer left (grace period MM_CAMERA_LINGER_MS)', async () => {
    // Whatever an earlier test left is gone first.
    await eventually(async () => expect(await scriptViewers()).toBe(0), 10_000);
    const a = await open();
    const b = await open();
    await Promise.all([a.waitParts(2), b.waitParts(2)]);
    expect(await scriptViewers()).toBe(1);
    a.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(server.ctx.deviceRelay.camera.upstreamOpen(board.id, camId)).toBe(true);
    b.close();
    await eventually(async () => expect(await scriptViewers()).toBe(0), 10_000);
    expect(server.ctx.deviceRelay.camera.upstreamOpen(board.id, camId)).toBe(false);
    // A viewer coming back opens it again.
    const c = await open();
    await c.waitParts(3);
    expect(await scriptViewers()).toBe(1);
    c.close();
  });

  it('answers clearly when there is no camera: unknown script 404, nothing on the port 502, not MJPEG 502', async () => {
    const unknown = await server.api(`/api/device-scripts/00000000-0000-4000-8000-000000000000/camera/?board_id=${board.id}`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('device_script_not_found');

    const create = async (port: number) =>
      (await json(
        await server.api('/api/device-scripts/', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `cam ${port}`, device_type: 'webcam', description: '', script_filename: 'x.mjs', remote_dir: '/opt/x', port, version: '1.0.0' }),
        }),
      )).id as string;
    const dead = await server.api(`/api/device-scripts/${await create(deadPort)}/camera/?board_id=${board.id}`);
    expect(dead.status).toBe(502);
    expect((await json(dead)).code).toBe('script_unreachable');

    // The simulated board's motor script serves no /stream.mjpg (it answers 404): not a camera.
    const notCamera = await server.api(`/api/device-scripts/${await create(gpioPort)}/camera/?board_id=${board.id}`);
    expect(notCamera.status).toBe(502);
    expect((await json(notCamera)).code).toBe('not_a_camera_stream');
  });
});
