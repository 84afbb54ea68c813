import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CameraSource, Frame } from './camera-source.ts';
import { formatMjpegPart, mjpegContentType } from './mjpeg-parts.ts';

export interface WebcamServerOptions {
  camera: CameraSource;
  port: number;
  host?: string;
  log?: (line: string) => void;
  /** The camera failed while running (the capture tool died): main.ts exits so the supervisor restarts it. */
  onCameraError?: (err: Error) => void;
}

export interface WebcamServer {
  url: string;
  port: number;
  /** Frames captured so far. */
  frames(): number;
  close(): Promise<void>;
}

/** How long `/snapshot.jpg` waits for the first frame after start. */
const FIRST_FRAME_WAIT_MS = 5000;

/** One `/stream.mjpg` viewer: a frame is written only when its socket has taken the last one. */
interface Viewer {
  res: ServerResponse;
  /** A newer frame arrived while the socket was still busy: the newest is sent on `drain`. */
  waiting: boolean;
}

/**
 * The webcam script's HTTP side: `GET /stream.mjpg` (multipart/x-mixed-replace, one JPEG a
 * part, each with `Content-Length` and `X-Capture-Time`), `GET /snapshot.jpg` (the newest
 * frame) and `GET /state` (`{ width, height, fps, device, frames, viewers }`).
 *
 * A viewer that reads slower than the camera never gets a backlog: while its socket still
 * holds an unsent frame, newer frames are not queued for it; when the socket drains it gets
 * the newest one. Memory per viewer is one frame at most, whatever the viewer does.
 */
export async function startWebcamServer(opts: WebcamServerOptions): Promise<WebcamServer> {
  const { camera } = opts;
  const log = opts.log ?? (() => {});
  const viewers = new Set<Viewer>();
  let latest: { frame: Frame; part: Buffer } | undefined;
  let cameraError: Error | undefined;
  const firstFrameWaiters = new Set<() => void>();

  const send = (v: Viewer) => {
    if (!latest || v.res.destroyed) return;
    v.waiting = false;
    v.res.write(latest.part);
  };

  camera.start(
    (frame) => {
      latest = { frame, part: formatMjpegPart(frame.jpeg, frame.capturedAt) };
      for (const w of firstFrameWaiters) w();
      firstFrameWaiters.clear();
      for (const v of viewers) {
        if (v.res.writableNeedDrain) v.waiting = true;
        else send(v);
      }
    },
    (err) => {
      cameraError = err;
      log(`error: ${err.message}`);
      for (const w of firstFrameWaiters) w();
      firstFrameWaiters.clear();
      for (const v of viewers) v.res.destroy();
      opts.onCameraError?.(err);
    },
  );

  const firstFrame = () =>
    new Promise<void>((resolve) => {
      if (latest || cameraError) return resolve();
      const t = setTimeout(() => {
        firstFrameWaiters.delete(done);
        resolve();
      }, FIRST_FRAME_WAIT_MS);
      const done = () => {
        clearTimeout(t);
        resolve();
      };
      firstFrameWaiters.add(done);
    });

  const state = () => ({
    width: camera.settings.width,
    height: camera.settings.height,
    fps: camera.settings.fps,
    device: camera.device,
    frames: latest?.frame.seq ?? 0,
    viewers: viewers.size,
    ...(cameraError ? { error: cameraError.message } : {}),
  });

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://script');
    if (req.method !== 'GET' && req.method !== 'HEAD') return problem(res, 405, 'method_not_allowed', 'Only GET and HEAD.');
    switch (url.pathname) {
      case '/state':
        return sendJson(res, 200, state());
      case '/snapshot.jpg':
        void firstFrame().then(() => {
          if (!latest) return problem(res, 503, 'no_frame', cameraError ? `The camera failed: ${cameraError.message}` : 'The camera has not delivered a frame yet.');
          res.writeHead(200, {
            'content-type': 'image/jpeg',
            'content-length': latest.frame.jpeg.length,
            'cache-control': 'no-store',
            'x-capture-time': String(latest.frame.capturedAt),
          });
          res.end(req.method === 'HEAD' ? undefined : latest.frame.jpeg);
        });
        return;
      case '/stream.mjpg': {
        if (cameraError) return problem(res, 503, 'camera_failed', `The camera failed: ${cameraError.message}`);
        res.writeHead(200, { 'content-type': mjpegContentType(), 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
        if (req.method === 'HEAD') return res.end();
        res.socket?.setNoDelay(true);
        const viewer: Viewer = { res, waiting: false };
        viewers.add(viewer);
        res.on('drain', () => viewer.waiting && send(viewer));
        res.on('close', () => viewers.delete(viewer));
        // The newest frame at once: a viewer sees a picture without waiting a frame interval.
        send(viewer);
        return;
      }
      default:
        return problem(res, 404, 'not_found', `No route ${url.pathname}: GET /stream.mjpg, /snapshot.jpg, /state.`);
    }
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  log(`webcam script on http://${host}:${address.port} (${camera.device}, ${camera.settings.width}x${camera.settings.height} at ${camera.settings.fps} fps)`);
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    frames: () => latest?.frame.seq ?? 0,
    async close() {
      for (const v of viewers) v.res.destroy();
      await camera.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function problem(res: ServerResponse, status: number, code: string, detail: string): void {
  const text = JSON.stringify({ type: 'about:blank', title: http.STATUS_CODES[status] ?? 'Error', status, code, detail });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
