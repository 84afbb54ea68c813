/**
 * The camera relay's bounds through the real route (issue 46, "Also seen"): viewers past the
 * per-user cap get 429 `too_many_camera_viewers`, past the per-camera cap 503 `camera_full`,
 * both problem+json with Retry-After; and viewers whose sockets stopped taking the largest
 * frames are reset once the frames they hold pass MM_CAMERA_MAX_PENDING_BYTES, so the
 * server's memory stays bounded in bytes. The board is a protocol-speaking fake agent that
 * serves the camera's MJPEG stream frame by frame as the test writes it.
 */
import net from 'node:net';
import { formatMjpegPart, MAX_JPEG_BYTES, mjpegContentType } from '@mm/webcam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, makeUser, type TestUser } from './support/accounts.ts';
import { FakeAgent } from './support/fake-agent.ts';

const MiB = 1024 * 1024;

function jpeg(bytes: number, n: number): Buffer {
  const b = Buffer.alloc(bytes, n & 0xff);
  b[0] = 0xff;
  b[1] = 0xd8;
  b[bytes - 2] = 0xff;
  b[bytes - 1] = 0xd9;
  return b;
}

/** The camera's frames, handed to the relay's pull as the test writes them. */
class Camera {
  private frames: Buffer[] = [];
  private wake: (() => void) | undefined;
  private sent = 0;
  write(bytes: number): void {
    this.frames.push(formatMjpegPart(jpeg(bytes, ++this.sent), Date.now()));
    this.wake?.();
  }
  async *source(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = this.frames.shift();
      if (next) yield next;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/** A viewer that reads the response head and then nothing: its socket stops taking frames. */
async function stalledViewer(url: string, token: string): Promise<{ socket: net.Socket; ended: Promise<string> }> {
  const u = new URL(url);
  const socket = net.connect({ host: u.hostname, port: Number(u.port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  let head = '';
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
  });
  expect(head.split('\r\n\r\n')[0]).toMatch(/^HTTP\/1.1 200/);
  const ended = new Promise<string>((resolve) => {
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    socket.once('close', () => resolve('closed'));
  });
  return { socket, ended };
}

describe('camera relay limits through the route', () => {
  let server: TestServer;
  let agent: FakeAgent;
  let camId: string;
  let boardId: string;
  let user: TestUser;
  const camera = new Camera();
  const admin = bearer(ADMIN_TOKEN);
  const cameraUrl = () => `${server.url}/api/device-scripts/${camId}/camera/?board_id=${boardId}`;

  beforeAll(async () => {
    server = await startTestServer('embedded', {
      MM_API_TOKEN: ADMIN_TOKEN,
      MM_CAMERA_MAX_VIEWERS: '3',
      MM_CAMERA_MAX_VIEWERS_PER_USER: '2',
      MM_CAMERA_MAX_PENDING_BYTES: String(16 * MiB),
      MM_CAMERA_LINGER_MS: '60000',
    });
    user = await makeUser(server, 'watcher', 'viewer');
    const post = (p: string, body: unknown) => server.api(p, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const board = await json(await post('/api/boards/', { name: 'camera-board' }));
    boardId = board.id;
    const entry = { name: 'cam', device_type: 'webcam-test', description: '', script_filename: 'c.mjs', remote_dir: '/opt/c', port: 4330, version: '1.0.0' };
    camId = (await json(await post('/api/device-scripts/', entry))).id;
    agent = await FakeAgent.online(server.url, board.token);
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  /** The relay's one upstream request: answered as an MJPEG stream whose frames the test writes. */
  const serveUpstream = async () => {
    const req = await agent.next('http.request', (m) => m.path === '/stream.mjpg');
    agent.send({ type: 'http.response', req_id: req.req_id, status: 200, headers: [['content-type', mjpegContentType()]], has_body: true });
    const pull = await agent.next('stream.pull', (m) => m.source.kind === 'http.response_body' && m.source.req_id === req.req_id);
    void agent.peer.serve(pull, async () => ({ source: camera.source() }));
  };

  it('answers 429 past the per-user cap and 503 past the per-camera cap, problem+json with Retry-After', async () => {
    const open: Array<AbortController> = [];
    const view = async (auth: Record<string, string>) => {
      const ctl = new AbortController();
      const res = await fetch(cameraUrl(), { headers: auth, signal: ctl.signal });
      if (res.status === 200) open.push(ctl);
      return res;
    };
    const first = view(admin);
    await serveUpstream();
    camera.write(1000);
    expect((await first).status).toBe(200);
    expect((await view(admin)).status).toBe(200);
    const tooMany = await view(admin);
    expect(tooMany.status).toBe(429);
    expect(tooMany.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(tooMany.headers.get('retry-after')).toBe('5');
    expect(await json(tooMany)).toMatchObject({ status: 429, code: 'too_many_camera_viewers' });
    expect((await view(bearer(user.token))).status).toBe(200);
    const full = await view(bearer(user.token));
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('5');
    const problem = await json(full);
    expect(problem).toMatchObject({ status: 503, code: 'camera_full' });
    // A viewer that leaves frees its place.
    open.shift()!.abort();
    await eventually(() => expect(server.ctx.deviceRelay.camera.viewerCount(boardId, camId)).toBe(2));
    expect((await view(bearer(user.token))).status).toBe(200);
    for (const c of open.splice(0)) c.abort();
    await eventually(() => expect(server.ctx.deviceRelay.camera.viewerCount(boardId, camId)).toBe(0));
  });

  it('resets viewers whose sockets hold the oldest of the largest frames once those pass MM_CAMERA_MAX_PENDING_BYTES', async () => {
    const big = MAX_JPEG_BYTES - 1024;
    const relay = server.ctx.deviceRelay.camera;
    const viewers: Array<Awaited<ReturnType<typeof stalledViewer>>> = [];
    const tokens = [ADMIN_TOKEN, ADMIN_TOKEN, user.token];
    for (const [i, token] of tokens.entries()) {
      // A small frame first: the new viewer takes it whole (the stalled ones do not), so the
      // big frame after it is this viewer's alone.
      camera.write(1000);
      const opening = !relay.upstreamOpen(boardId, camId);
      const viewer = stalledViewer(cameraUrl(), token);
      if (opening) await serveUpstream();
      viewers.push(await viewer);
      await eventually(() => expect(relay.viewerCount(boardId, camId)).toBe(i + 1));
      // A frame it starts writing and never finishes (8 MiB: more than its socket buffers take).
      camera.write(big);
      await eventually(() => expect(relay.heldFrameBytes()).toBeGreaterThanOrEqual((i + 1) * big), 10_000);
    }
    // Two replaced 8 MiB frames are held: at the bound. The next frame retires a third: the
    // viewer holding the oldest is reset, the others keep theirs.
    expect(relay.pendingFrameBytes()).toBeLessThanOrEqual(16 * MiB);
    camera.write(big);
    await eventually(() => expect(relay.viewerCount(boardId, camId)).toBe(2));
    expect(relay.pendingFrameBytes()).toBeLessThanOrEqual(16 * MiB);
    // The cut viewer, reading again, finds its connection reset after what its own buffer held.
    viewers[0]!.socket.on('data', () => {});
    viewers[0]!.socket.resume();
    expect(await viewers[0]!.ended).toMatch(/ECONNRESET|closed/);
    for (const v of viewers) v.socket.destroy();
    await eventually(() => expect(relay.viewerCount(boardId, camId)).toBe(0));
  });
});
