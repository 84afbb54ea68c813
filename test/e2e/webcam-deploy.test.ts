/**
 * The webcam deployed like any device script (issue 31): its bundle uploaded as the seeded
 * webcam entry's program, deployed to a simulated board (whose supervisor sets
 * MM_WEBCAM_SIMULATE=1: the test pattern), its frames read through the camera relay,
 * stopped, a broken version rolled back, a remote_dir outside the scripts root refused.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJpeg, looksLikeJpeg } from '@mm/webcam';
import { openMjpeg, type MjpegClient } from '../../packages/webcam/test/mjpeg-reader.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { eventually, freePort, startSimulatedAgent, type SimulatedAgent } from './device-scripts-support.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEBCAM_DIR = path.join(repoRoot, 'packages/webcam');
const BUNDLE = path.join(WEBCAM_DIR, 'dist/mm-webcam.mjs');

/** A version that exits at once. */
const brokenWebcam = `console.error('broken webcam: no camera today');\nprocess.exit(1);\n`;

describe.each(realDatabaseUrl ? (['postgres'] as const) : (['embedded'] as const))('the webcam deployed through the catalogue to a simulated board (%s database)', (kind) => {
  let server: TestServer;
  let board: { id: string; token: string };
  let agent: SimulatedAgent;
  let camId: string;
  let camPort: number;
  const viewers: MjpegClient[] = [];

  const send = (p: string, method: string, body?: unknown) =>
    server.api(p, body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const upload = (content: Buffer | string) => {
    const form = new FormData();
    form.append('file', new Blob([content]), 'mm-webcam.mjs');
    return server.api(`/api/device-scripts/${camId}/file/`, { method: 'PUT', body: form });
  };
  const op = (action: string) => send(`/api/device-scripts/${camId}/${action}/`, 'POST', { board_id: board.id });
  const ours = async () => ((await json(await server.api(`/api/boards/${board.id}/scripts/`))).scripts as Array<Record<string, unknown>>).find((s) => s.script_id === camId);
  const cameraUrl = () => `${server.url}/api/device-scripts/${camId}/camera/?board_id=${board.id}`;
  /** Ten whole, decodable frames through the relay. */
  const framesFlow = async () => {
    const v = await openMjpeg(cameraUrl(), {}, { keep: 12 });
    viewers.push(v);
    try {
      expect(v.status).toBe(200);
      await v.waitParts(10, 60_000);
      for (const p of v.parts.slice(0, 10)) {
        expect(p.headers['content-type']).toBe('image/jpeg');
        expect(Number(p.headers['content-length'])).toBe(p.body.length);
        expect(looksLikeJpeg(p.body)).toBe(true);
      }
      const img = decodeJpeg(v.parts.at(-1)!.body);
      expect([img.width, img.height]).toEqual([640, 480]);
    } finally {
      v.close();
    }
  };

  beforeAll(async () => {
    // The bundle a user deploys (pnpm --filter @mm/webcam bundle).
    execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: WEBCAM_DIR, stdio: 'ignore' });
    server = await startTestServer(kind, { MM_SCRIPT_HEALTH_TIMEOUT_S: '8', MM_CAMERA_LINGER_MS: '300', MM_WEBCAM_PROGRAM: BUNDLE });
    board = await json(await send('/api/boards/', 'POST', { name: 'sim-webcam' }));
    agent = await startSimulatedAgent(server.url, board.token, { gpioPort: await freePort() });
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000);
    const { scripts } = await json(await server.api('/api/device-scripts/?device_type=webcam'));
    camId = scripts[0].id;
    // A free port here: the simulated board's scripts share this machine.
    camPort = await freePort();
    expect((await send(`/api/device-scripts/${camId}/`, 'PATCH', { port: camPort })).status).toBe(200);
  });

  afterAll(async () => {
    for (const v of viewers) v.close();
    await agent?.stop();
    await server?.stop();
    if (agent) await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('the entry starts with the bundle MM_WEBCAM_PROGRAM names as its program (as under pnpm start)', async () => {
    const got = await server.api(`/api/device-scripts/${camId}/file/`);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(await fs.readFile(BUNDLE));
  });

  it('uploads the bundle as the entry program, deploys it, sees it running, and reads whole JPEG frames', async () => {
    expect((await upload(await fs.readFile(BUNDLE))).status).toBe(200);
    const res = await op('deploy');
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ kind: 'script_deploy', status: 'succeeded' });
    expect(await fs.readFile(path.join(agent.agentDir, 'device-scripts', 'webcam', 'mm-webcam.mjs'))).toEqual(await fs.readFile(BUNDLE));
    await eventually(async () => expect(await ours()).toMatchObject({ version: '1.0.0', port: camPort, state: 'running' }), 15_000);
    await framesFlow();
  });

  it('stops it: state stopped, the camera answers a clear error', async () => {
    const stopped = await op('stop');
    expect(stopped.status).toBe(200);
    await eventually(async () => expect((await ours())?.state).toBe('stopped'), 10_000);
    const res = await fetch(cameraUrl());
    expect(res.status).toBe(502);
    const problem = await json(res);
    expect(problem.code).toBe('script_unreachable');
    expect(await op('start').then((r) => r.status)).toBe(200);
    await eventually(async () => expect((await ours())?.state).toBe('running'), 15_000);
  });

  it('a broken version is rolled back (script_unhealthy) and frames flow again from the previous one', async () => {
    expect((await send(`/api/device-scripts/${camId}/`, 'PATCH', { version: '1.1.0' })).status).toBe(200);
    expect((await upload(brokenWebcam)).status).toBe(200);
    const res = await op('deploy');
    const problem = await json(res);
    expect(res.status, JSON.stringify(problem)).toBe(502);
    expect(problem.operation.error.code).toBe('script_unhealthy');
    expect(problem.operation.error.message).toContain('version 1.0.0 is back');
    expect(problem.operation.error.message).toContain('broken webcam: no camera today');
    await eventually(async () => expect(await ours()).toMatchObject({ version: '1.0.0', state: 'running' }), 15_000);
    await framesFlow();
  });

  it('refuses a remote_dir outside the scripts root, writing nothing; the webcam keeps running', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-webcam-outside-'));
    try {
      expect((await send(`/api/device-scripts/${camId}/`, 'PATCH', { version: '1.2.0', remote_dir: outside })).status).toBe(200);
      expect((await upload(await fs.readFile(BUNDLE))).status).toBe(200);
      const res = await op('deploy');
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('script_dir_refused');
      expect(await fs.readdir(outside)).toEqual([]);
      expect((await ours())?.state).toBe('running');
      await framesFlow();
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });
});
