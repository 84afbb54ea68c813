/**
 * The camera relay across replicas (docs/replicas.md, *Cameras*): two control-plane processes
 * on one PostgreSQL, a simulated board linked to A running the webcam script. Viewers on B
 * (which holds no link) get whole JPEG frames from the ONE upstream A keeps; the upstream
 * closes when the last viewer anywhere left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJpeg, looksLikeJpeg } from '@mm/webcam';
import { openMjpeg, type MjpegClient } from '../../packages/webcam/test/mjpeg-reader.ts';
import { createScratchDatabase, skipWithoutRealDatabase } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { serverCluster, type ServerCluster, type ServerProcess } from '../support/processes.ts';
import { eventually, freePort, startSimulatedAgent, type SimulatedAgent } from './device-scripts-support.ts';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 300_000 });

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEBCAM_BIN = path.join(repoRoot, 'packages/webcam/bin/mm-webcam.mjs');

describe.skipIf(skipWithoutRealDatabase('the camera relay across two replicas on one database'))('camera relay across replicas: a viewer on the replica without the link', () => {
  const clusters: ServerCluster[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let A: ServerProcess;
  let B: ServerProcess;
  let agent: SimulatedAgent;
  let webcam: ChildProcess;
  let webcamPort: number;
  let board: { id: string; token: string };
  let camId: string;
  const viewers: MjpegClient[] = [];
  const open = async (s: ServerProcess) => {
    const c = await openMjpeg(`${s.url}/api/device-scripts/${camId}/camera/?board_id=${board.id}`, {}, { keep: 20 });
    viewers.push(c);
    return c;
  };
  /** The webcam script's own count of `/stream.mjpg` connections. */
  const scriptViewers = async () => ((await json(await fetch(`http://127.0.0.1:${webcamPort}/state`))) as { viewers: number }).viewers;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-camera-replicas-'));
    const start = async (name: string) => {
      const cluster = await serverCluster('embedded', { DATABASE_URL: scratch.url, MM_DATA_DIR: sharedDir, MM_REPLICA_ID: name, MM_CAMERA_LINGER_MS: '500' });
      clusters.push(cluster);
      return cluster.start();
    };
    A = await start('replica-a');
    B = await start('replica-b');
    board = await json(await B.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'car' }) }));
    webcamPort = await freePort();
    webcam = spawn(process.execPath, [WEBCAM_BIN, '--simulate', '--port', String(webcamPort)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    await eventually(async () => expect((await fetch(`http://127.0.0.1:${webcamPort}/state`)).status).toBe(200), 30_000);
    const { scripts } = await json(await B.api('/api/device-scripts/?device_type=webcam'));
    camId = scripts[0].id;
    const patched = await B.api(`/api/device-scripts/${camId}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ port: webcamPort }) });
    expect(patched.status).toBe(200);
    // The board links to A only.
    agent = await startSimulatedAgent(A.url, board.token, { gpioPort: await freePort(), env: { MM_SCRIPT_PORTS: String(webcamPort) } });
    await A.output.waitFor((l) => l.msg === 'agent online', 'agent online on A', 60_000);
    await eventually(async () => expect((await json(await B.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000);
  });

  afterAll(async () => {
    for (const v of viewers) v.close();
    await agent?.stop();
    webcam?.kill('SIGTERM');
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    if (sharedDir) await fs.rm(sharedDir, { recursive: true, force: true });
    if (agent) await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('viewers on B get whole JPEG frames from the one upstream A keeps, which closes once the last viewer anywhere left', async () => {
    const onB = await Promise.all([open(B), open(B), open(B)]);
    const onA = await open(A);
    for (const v of [...onB, onA]) {
      expect(v.status).toBe(200);
      expect(v.contentType).toBe('multipart/x-mixed-replace; boundary=mmframe');
    }
    await Promise.all([...onB, onA].map((v) => v.waitParts(10, 60_000)));
    for (const v of onB) {
      for (const p of v.parts.slice(0, 10)) {
        expect(p.headers['content-type']).toBe('image/jpeg');
        expect(Number(p.headers['content-length'])).toBe(p.body.length);
        expect(looksLikeJpeg(p.body)).toBe(true);
      }
      const img = decodeJpeg(v.parts.at(-1)!.body);
      expect([img.width, img.height]).toEqual([640, 480]);
      // Fresh frames, not a backlog (a loaded machine is slow, a backlog is far older).
      expect(v.ages.at(-1)!).toBeLessThan(5000);
    }
    // ONE stream on the board for the viewers of both replicas.
    expect(await scriptViewers()).toBe(1);

    // A's own viewer leaves: B's viewers keep getting frames from A's upstream.
    onA.close();
    await new Promise((r) => setTimeout(r, 1500));
    const before = onB.map((v) => v.count());
    await Promise.all(onB.map((v, i) => v.waitParts(before[i]! + 5, 30_000)));
    expect(await scriptViewers()).toBe(1);

    // The last viewer anywhere leaves: B lets go at once and A closes the upstream after the grace period.
    for (const v of onB) v.close();
    await eventually(async () => expect(await scriptViewers()).toBe(0), 20_000);
  });

  it("a viewer on B hears the problem A's upstream met: 502 script_unreachable when nothing serves the camera", async () => {
    webcam.kill('SIGTERM');
    await eventually(async () => expect(await fetch(`http://127.0.0.1:${webcamPort}/state`).then(() => true, () => false)).toBe(false), 10_000);
    const res = await B.api(`/api/device-scripts/${camId}/camera/?board_id=${board.id}`);
    expect(res.status).toBe(502);
    expect((await json(res)).code).toBe('script_unreachable');
  });

  it('a viewer on B of a board linked nowhere answers 503 board_offline', async () => {
    await agent.stop();
    await eventually(async () => expect((await json(await B.api(`/api/boards/${board.id}/`))).status).not.toBe('online'), 30_000);
    const res = await B.api(`/api/device-scripts/${camId}/camera/?board_id=${board.id}`);
    expect(res.status).toBe(503);
    expect((await json(res)).code).toBe('board_offline');
  });
});
