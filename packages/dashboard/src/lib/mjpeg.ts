import { authHeaders } from '../api/client.ts';

/** One frame of the camera relay: the JPEG and, when the script said, its capture time (ms since the epoch). */
export interface CameraFrame {
  jpeg: Blob;
  capturedAt: number | undefined;
}

export interface CameraFeedHandlers {
  onFrame(frame: CameraFrame): void;
  /** The stream is open (true) or ended / could not be opened (false, with why, and the server's problem when it sent one). */
  onStatus(up: boolean, error?: string, problem?: CameraProblem): void;
}

/** The relay's problem document, as far as the page reads it (`deployed: false`: the script is not on that board). */
export interface CameraProblem {
  code?: string;
  detail?: string;
  deployed?: boolean;
}

class CameraRefused extends Error {
  constructor(readonly problem: CameraProblem | undefined, message: string) {
    super(message);
  }
}

const HEADERS_END = [13, 10, 13, 10];
/** A part bigger than this is not a camera frame: the feed is given up and opened again. */
const MAX_PART_BYTES = 16 * 1024 * 1024;

/**
 * Follows `GET /api/device-scripts/<id>/camera/` with fetch and hands over whole frames as
 * they arrive (the relay's parts always carry Content-Length). An `<img src>` would show the
 * stream too, but the page could not tell frames arrive or stop (to stop the motor on a lost
 * feed). Reconnects after `retryMs` when the stream ends; returns the function that stops it.
 */
export function followCamera(url: string, handlers: CameraFeedHandlers, retryMs = 2000): () => void {
  let stopped = false;
  let abort: AbortController | undefined;
  let retry: number | undefined;

  const run = async () => {
    abort = new AbortController();
    try {
      const res = await fetch(url, { signal: abort.signal, credentials: 'same-origin', headers: { accept: 'multipart/x-mixed-replace', ...authHeaders() } });
      if (!res.ok || !res.body) {
        let detail = `${res.status} ${res.statusText}`;
        let problem: CameraProblem | undefined;
        try {
          problem = (await res.json()) as CameraProblem;
          if (problem.detail) detail = problem.detail;
        } catch {
          /* not a problem document */
        }
        throw new CameraRefused(problem, detail);
      }
      const boundary = /boundary=("?)([^";]+)\1/.exec(res.headers.get('content-type') ?? '')?.[2];
      if (!boundary) throw new Error('the answer is not an MJPEG stream');
      handlers.onStatus(true);
      await readParts(res.body, boundary, handlers.onFrame);
      if (!stopped) handlers.onStatus(false, 'the camera stream ended');
    } catch (err) {
      if (!stopped) handlers.onStatus(false, err instanceof Error ? err.message : String(err), err instanceof CameraRefused ? err.problem : undefined);
    }
    if (!stopped) retry = window.setTimeout(() => void run(), retryMs);
  };
  void run();
  return () => {
    stopped = true;
    clearTimeout(retry);
    abort?.abort();
  };
}

async function readParts(body: ReadableStream<Uint8Array>, boundary: string, onFrame: (f: CameraFrame) => void): Promise<void> {
  const delimiter = new TextEncoder().encode(`--${boundary}`);
  const reader = body.getReader();
  let buf: Uint8Array = new Uint8Array(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buf = concat(buf, value);
    for (;;) {
      const start = indexOf(buf, delimiter, 0);
      if (start < 0) break;
      const headEnd = indexOf(buf, HEADERS_END, start + delimiter.length);
      if (headEnd < 0) break;
      const head = new TextDecoder('latin1').decode(buf.subarray(start + delimiter.length, headEnd));
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
      if (!Number.isSafeInteger(length) || length > MAX_PART_BYTES) throw new Error('a camera frame without a usable Content-Length');
      const bodyStart = headEnd + HEADERS_END.length;
      if (buf.length < bodyStart + length) break;
      const capture = Number(/x-capture-time:\s*(\d+)/i.exec(head)?.[1] ?? NaN);
      onFrame({ jpeg: new Blob([buf.slice(bodyStart, bodyStart + length)], { type: 'image/jpeg' }), capturedAt: Number.isFinite(capture) ? capture : undefined });
      buf = buf.slice(bodyStart + length);
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function indexOf(hay: Uint8Array, needle: ArrayLike<number>, from: number): number {
  const first = needle[0]!;
  for (let i = hay.indexOf(first, from); i >= 0 && i + needle.length <= hay.length; i = hay.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}
