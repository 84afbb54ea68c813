import type { ServerResponse } from 'node:http';
import { boundaryOf, CAPTURE_TIME_HEADER, looksLikeJpeg, MjpegPartReader } from '@mm/webcam/frames';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import { ApiError, BadGatewayError, boardOffline, ServiceUnavailableError } from '../errors.ts';
import { CameraFrameMemory, type FrameHolder, type HeldFrame } from './camera-frame-memory.ts';
import type { ProxyRelay } from './proxy-relay.ts';

/** Where the webcam script serves its MJPEG stream (docs/webcam.md). */
export const CAMERA_STREAM_PATH = '/stream.mjpg';
/** The boundary the relay separates frames with towards its viewers. */
export const CAMERA_BOUNDARY = 'mmframe';

export interface CameraRelayOptions {
  clock: Clock;
  /** How long the upstream stays open after its last viewer left (a reloading page comes back). */
  lingerMs: number;
  /** How long the board may take to answer the upstream request. */
  timeoutMs: number;
  /** Wait before the upstream is opened again after it ended while viewers remain. */
  retryMs: number;
  /** Viewers one camera may have at once (MM_CAMERA_MAX_VIEWERS); more get 503 `camera_full`. */
  maxViewersPerCamera: number;
  /** Viewers one user (or client address) may have at once, all cameras together (MM_CAMERA_MAX_VIEWERS_PER_USER); more get 429. */
  maxViewersPerUser: number;
  /** Bytes of replaced frames viewers may still hold before the furthest behind are cut (MM_CAMERA_MAX_PENDING_BYTES). */
  maxPendingBytes: number;
}

export const DEFAULT_CAMERA_RELAY_OPTIONS: CameraRelayOptions = {
  clock: systemClock,
  lingerMs: 3000,
  timeoutMs: 30_000,
  retryMs: 1000,
  maxViewersPerCamera: 50,
  maxViewersPerUser: 8,
  maxPendingBytes: 64 * 1024 * 1024,
};

/** How long a refused viewer is asked to wait (Retry-After) before trying again. */
const CAMERA_RETRY_AFTER_S = 5;

/** Who a viewer is, for the per-user cap: a user, the shared API token, or (auth off) a client address. */
export type ViewerKey = string;

/** Which script's camera on which board, and where the script serves. */
export interface CameraTarget {
  boardId: string;
  scriptId: string;
  port: number;
}

/** The part of the agent hub the relay needs. */
export interface CameraLinks {
  connection(boardId: string): BoardLink | undefined;
}

/** Where a camera fed from another replica hands its frames (remote-cameras.ts). */
export interface RemoteFrameSink {
  answered(): void;
  frame(jpeg: Buffer, capturedAt: number | undefined): void;
  /** Set by the sharing: ends the follow (with the problem, if any). */
  end(err?: unknown): void;
}

/** Cameras across replicas: following one linked elsewhere, sharing one linked here. */
export interface CameraSharing {
  /** Frames of a camera whose board is linked to another replica, until `signal` aborts; rejects with the holder's problem. */
  follow(target: CameraTarget, signal: AbortSignal, sink: RemoteFrameSink): Promise<void>;
  share(target: CameraTarget, frame: Buffer, capturedAt: number | undefined): void;
  shareError(target: CameraTarget, error: unknown): void;
}

/** One frame as the relay passes it on: formatted once, written to every viewer that is ready. */
interface RelayedFrame extends HeldFrame {
  seq: number;
  part: Buffer;
  /** The script's capture time (ms since the epoch), when it said. */
  capturedAt: number | undefined;
}

/** The relayed camera of one script on one board: its viewers, its newest frame, its one upstream. */
interface CameraFeed {
  key: string;
  target: CameraTarget;
  viewers: Set<CameraViewer>;
  /** Viewers attached and being attached (admitted, waiting for the upstream): what the cap counts. */
  places: number;
  latest: RelayedFrame | undefined;
  seq: number;
  /** The upstream request while it is open (or being opened). */
  upstream: AbortController | undefined;
  /** Settles once the upstream answered: the first viewers wait for it to learn whether it works. */
  opening: Promise<void> | undefined;
  linger: TimerHandle | undefined;
  retry: TimerHandle | undefined;
  /** Upstreams opened so far (tests: one per feed, not per viewer). */
  opened: number;
  /** Fed from the replica holding the board's link rather than from a link here. */
  remote: boolean;
  /** Other replicas whose viewers want this camera of a board linked here, and until when (ms). */
  remoteWants: Map<string, number>;
}

/**
 * `GET /api/device-scripts/<id>/camera/`: the webcam script's `GET /stream.mjpg` to any
 * number of viewers from ONE upstream request per (board, script), carried by the board's
 * agent link like any relayed request (`http.request`, body pulled under the link's flow
 * control). The upstream is read as fast as it comes and parsed into whole frames; the
 * relay keeps only the newest. Each viewer is a pull-driven stream: it is handed the newest
 * frame whenever its socket has taken the previous one, so a slow viewer skips frames
 * instead of building a queue, and holds at most one frame of the server's memory. The
 * upstream closes `lingerMs` after the last viewer left; when it ends while viewers
 * remain (script restart, link drop) it is opened again every `retryMs`.
 *
 * Bounded (issue 46): at most `maxViewersPerCamera` viewers per camera and
 * `maxViewersPerUser` per user on this replica (503 `camera_full`, 429
 * `too_many_camera_viewers`, both with Retry-After), and the frames viewers still hold after
 * newer ones replaced them at most `maxPendingBytes` (camera-frame-memory.ts): memory is
 * bounded in bytes, not in frames per viewer.
 */
export class CameraRelay {
  private readonly feeds = new Map<string, CameraFeed>();
  private closed = false;
  private sharing: CameraSharing | undefined;
  /** Viewers per user (or client address), all cameras together, admitted ones included. */
  private readonly perViewerKey = new Map<ViewerKey, number>();
  private readonly memory: CameraFrameMemory;

  constructor(
    private readonly links: CameraLinks,
    private readonly proxy: ProxyRelay,
    private readonly opts: CameraRelayOptions = DEFAULT_CAMERA_RELAY_OPTIONS,
  ) {
    this.memory = new CameraFrameMemory(opts.maxPendingBytes);
  }

  /** Bytes of replaced frames that viewers' sockets still hold (bounded by maxPendingBytes; tests, diagnostics). */
  pendingFrameBytes(): number {
    return this.memory.pendingBytes;
  }

  /** Bytes of every frame a viewer's socket still holds, newest ones included (tests, diagnostics). */
  heldFrameBytes(): number {
    return this.memory.heldBytes;
  }

  /** Several replicas: cameras cross them through this. */
  useSharing(sharing: CameraSharing): void {
    this.sharing = sharing;
  }

  /**
   * Another replica's viewers want this camera (repeated every few seconds while they do):
   * the upstream stays open for them as for a viewer here; `wanted: false` lets go at once.
   */
  remoteWant(target: CameraTarget, replicaId: string, wanted: boolean, staleMs: number): void {
    if (this.closed) return;
    if (!wanted) {
      const feed = this.feeds.get(feedKey(target.boardId, target.scriptId));
      if (!feed) return;
      feed.remoteWants.delete(replicaId);
      // The grace period starts now, not when the want would have gone stale.
      this.opts.clock.clearTimeout(feed.linger);
      feed.linger = undefined;
      if (feed.viewers.size === 0 && !this.remotelyWanted(feed)) this.lastViewerLeft(feed);
      return;
    }
    const feed = this.feedFor(target);
    feed.remoteWants.set(replicaId, this.opts.clock.now() + staleMs);
    if (!feed.upstream) this.open(feed);
    // The linger timer looks again when the want goes stale.
    if (feed.viewers.size === 0) this.lastViewerLeft(feed);
  }

  /** Viewers of this board's script's camera right now. */
  viewerCount(boardId: string, scriptId: string): number {
    return this.feeds.get(feedKey(boardId, scriptId))?.viewers.size ?? 0;
  }

  /** Whether the upstream of this camera is open (tests, diagnostics). */
  upstreamOpen(boardId: string, scriptId: string): boolean {
    return this.feeds.get(feedKey(boardId, scriptId))?.upstream !== undefined;
  }

  /** Frames this camera's upstream delivered so far (tests: what viewers could have had). */
  framesRelayed(boardId: string, scriptId: string): number {
    return this.feeds.get(feedKey(boardId, scriptId))?.seq ?? 0;
  }

  /** How many upstream requests this camera has had (tests: one for many viewers). */
  upstreamsOpened(boardId: string, scriptId: string): number {
    return this.feeds.get(feedKey(boardId, scriptId))?.opened ?? 0;
  }

  /**
   * A new viewer's body (`multipart/x-mixed-replace; boundary=mmframe`). Resolves once the
   * upstream is open; rejects with the board's or script's problem (503 offline, 502 nothing
   * on the port or not an MJPEG stream, 504 no answer) when it could not be opened, and
   * before anything with 503 `camera_full` / 429 `too_many_camera_viewers` past the caps.
   * `viewer` names who watches (the per-user cap); `out` is the viewer's Node response, which
   * is reset when the viewer falls so far behind that the memory bound needs its frame back.
   */
  async attach(target: CameraTarget, signal: AbortSignal, opts: { viewer?: ViewerKey; out?: ServerResponse } = {}): Promise<ReadableStream<Uint8Array>> {
    const leave = this.admit(target, opts.viewer ?? 'anonymous');
    const feed = this.feedFor(target);
    feed.places++;
    let admitted = true;
    const gone = () => {
      if (!admitted) return;
      admitted = false;
      feed.places--;
      leave();
    };
    this.opts.clock.clearTimeout(feed.linger);
    feed.linger = undefined;
    if (!feed.upstream) this.open(feed);
    try {
      await feed.opening;
    } catch (err) {
      gone();
      if (feed.viewers.size === 0) this.lastViewerLeft(feed);
      throw err;
    }
    if (signal.aborted) {
      gone();
      if (feed.viewers.size === 0) this.lastViewerLeft(feed);
      throw new Error('the viewer went away');
    }
    const viewer = new CameraViewer(feed, this.memory, opts.out, () => {
      feed.viewers.delete(viewer);
      gone();
      if (feed.viewers.size === 0) this.lastViewerLeft(feed);
    });
    feed.viewers.add(viewer);
    return viewer.body;
  }

  /**
   * Takes a place for a new viewer, or refuses: this user already watches as many as allowed
   * (429: theirs to close), or the camera is full (503: the server's limit, any viewer may get
   * the place later). Answers the function that gives the user's place back.
   */
  private admit(target: CameraTarget, viewer: ViewerKey): () => void {
    const mine = this.perViewerKey.get(viewer) ?? 0;
    if (mine >= this.opts.maxViewersPerUser) {
      const err = new ApiError(
        429,
        'too_many_camera_viewers',
        'Too Many Requests',
        `You already watch ${mine} camera streams here, as many as this server allows per user (MM_CAMERA_MAX_VIEWERS_PER_USER); close one first.`,
      );
      err.headers['retry-after'] = String(CAMERA_RETRY_AFTER_S);
      throw err;
    }
    const watching = this.feeds.get(feedKey(target.boardId, target.scriptId))?.places ?? 0;
    if (watching >= this.opts.maxViewersPerCamera) {
      const err = new ServiceUnavailableError(
        'camera_full',
        `This camera already has ${watching} viewers, as many as this server allows (MM_CAMERA_MAX_VIEWERS); try again later.`,
      );
      err.headers['retry-after'] = String(CAMERA_RETRY_AFTER_S);
      throw err;
    }
    this.perViewerKey.set(viewer, mine + 1);
    return () => {
      const n = (this.perViewerKey.get(viewer) ?? 1) - 1;
      if (n <= 0) this.perViewerKey.delete(viewer);
      else this.perViewerKey.set(viewer, n);
    };
  }

  /** Shutdown: every upstream is let go and every viewer's stream ends. */
  close(): void {
    this.closed = true;
    for (const feed of this.feeds.values()) {
      this.opts.clock.clearTimeout(feed.linger);
      this.opts.clock.clearTimeout(feed.retry);
      feed.upstream?.abort();
      feed.upstream = undefined;
      for (const v of [...feed.viewers]) v.end();
    }
    this.feeds.clear();
  }

  private feedFor(target: CameraTarget): CameraFeed {
    const key = feedKey(target.boardId, target.scriptId);
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = { key, target, viewers: new Set(), places: 0, latest: undefined, seq: 0, upstream: undefined, opening: undefined, linger: undefined, retry: undefined, opened: 0, remote: false, remoteWants: new Map() };
      this.feeds.set(key, feed);
    } else if (!feed.upstream) feed.target = target; // the entry may have moved to another port
    return feed;
  }

  private open(feed: CameraFeed): void {
    if (this.closed) return;
    this.opts.clock.clearTimeout(feed.retry);
    feed.retry = undefined;
    const upstream = new AbortController();
    feed.upstream = upstream;
    feed.opened++;
    let answered!: () => void;
    let failed!: (err: unknown) => void;
    feed.opening = new Promise<void>((resolve, reject) => {
      answered = resolve;
      failed = reject;
    });
    // A failure nobody awaits (a retry with viewers already attached) must not be unhandled.
    feed.opening.catch(() => {});
    void this.run(feed, upstream, answered).then(
      () => this.upstreamEnded(feed, upstream),
      (err: unknown) => {
        failed(err);
        if (!feed.remote && this.remotelyWanted(feed)) this.sharing?.shareError(feed.target, err);
        this.upstreamEnded(feed, upstream);
      },
    );
  }

  /** One upstream request, from sending it to the end of its body. */
  private async run(feed: CameraFeed, upstream: AbortController, answered: () => void): Promise<void> {
    const conn = this.links.connection(feed.target.boardId);
    if (!conn) {
      // Linked to another replica (or nowhere): its holder shares the frames, for our viewers only.
      if (!this.sharing || feed.remoteWants.size > 0) throw boardOffline(feed.target.boardId);
      feed.remote = true;
      await this.sharing.follow(feed.target, upstream.signal, {
        answered,
        frame: (jpeg, capturedAt) => this.deliver(feed, jpeg, capturedAt),
        end: () => {},
      });
      return;
    }
    feed.remote = false;
    const res = await this.proxy.forward({
      conn,
      port: feed.target.port,
      method: 'GET',
      path: CAMERA_STREAM_PATH,
      headers: [['accept', 'multipart/x-mixed-replace']],
      body: undefined,
      signal: upstream.signal,
      timeoutMs: this.opts.timeoutMs,
    });
    const boundary = boundaryOf(res.headers.get('content-type'));
    if (res.status !== 200 || !boundary || !res.body) {
      await res.body?.cancel().catch(() => {});
      throw new BadGatewayError(
        'not_a_camera_stream',
        `The device script's GET ${CAMERA_STREAM_PATH} answered ${res.status} ${res.headers.get('content-type') ?? 'without a content type'}, not a multipart/x-mixed-replace stream: is it the webcam script?`,
      );
    }
    answered();
    const reader = new MjpegPartReader(boundary, (part) => {
      // Whole JPEG frames only: a part that is not one is dropped, never passed on.
      if (!looksLikeJpeg(part.body)) return;
      const capturedRaw = Number(part.headers[CAPTURE_TIME_HEADER]);
      const capturedAt = Number.isFinite(capturedRaw) && capturedRaw > 0 ? capturedRaw : undefined;
      this.deliver(feed, part.body, capturedAt);
      if (this.remotelyWanted(feed)) this.sharing?.share(feed.target, part.body, capturedAt);
    });
    const body = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await body.read();
        if (done) return;
        reader.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    } finally {
      body.releaseLock();
    }
  }

  /** A whole frame, newest wins: viewers that are ready take it. */
  private deliver(feed: CameraFeed, jpeg: Buffer, capturedAt: number | undefined): void {
    feed.seq++;
    const previous = feed.latest;
    const part = formatPart(jpeg, capturedAt);
    feed.latest = { seq: feed.seq, part, capturedAt, bytes: part.byteLength, retired: false, retiredOrder: 0 };
    // What viewers still hold of the one it replaces now counts against the bound.
    if (previous) this.memory.retire(previous);
    for (const v of feed.viewers) v.offer();
  }

  /** Whether a fresh want of another replica keeps this (local) camera's upstream. */
  private remotelyWanted(feed: CameraFeed): boolean {
    const now = this.opts.clock.now();
    for (const [replica, until] of feed.remoteWants) if (until <= now) feed.remoteWants.delete(replica);
    return feed.remoteWants.size > 0;
  }

  private upstreamEnded(feed: CameraFeed, upstream: AbortController): void {
    if (feed.upstream !== upstream) return;
    upstream.abort();
    feed.upstream = undefined;
    if (this.closed || (feed.viewers.size === 0 && !this.remotelyWanted(feed))) return;
    // Viewers are still there (their streams stay open, frames paused): try again.
    feed.retry = this.opts.clock.setTimeout(() => {
      feed.retry = undefined;
      if ((feed.viewers.size > 0 || this.remotelyWanted(feed)) && !feed.upstream) this.open(feed);
    }, this.opts.retryMs);
    feed.retry.unref();
  }

  /** The grace period, or until the freshest want of another replica would go stale. */
  private lingerDelay(feed: CameraFeed): number {
    const now = this.opts.clock.now();
    let delay = this.opts.lingerMs;
    for (const until of feed.remoteWants.values()) delay = Math.max(delay, until - now + this.opts.lingerMs);
    return delay;
  }

  private lastViewerLeft(feed: CameraFeed): void {
    if (this.closed || feed.linger) return;
    this.opts.clock.clearTimeout(feed.retry);
    feed.retry = undefined;
    feed.linger = this.opts.clock.setTimeout(() => {
      feed.linger = undefined;
      if (feed.viewers.size > 0) return;
      if (this.remotelyWanted(feed)) {
        // Wanted elsewhere still: look again once the freshest want would go stale.
        this.lastViewerLeft(feed);
        return;
      }
      feed.upstream?.abort();
      feed.upstream = undefined;
      if (feed.latest) this.memory.retire(feed.latest);
      feed.latest = undefined;
      this.feeds.delete(feed.key);
    }, this.lingerDelay(feed));
    feed.linger.unref();
  }
}

/**
 * One viewer: a pull-driven body with no queue of its own. The Node adapter reads it, writes
 * what it got to the socket and reads again only once the socket has drained; each read
 * gets the newest frame not yet sent (or waits for the next one). So the frames a slow
 * viewer cannot take are skipped, never stored. The one frame it was handed last is held
 * (the socket is writing it) until it reads again: the frame memory counts it, and cuts the
 * viewer when that memory is needed back.
 */
class CameraViewer implements FrameHolder {
  readonly body: ReadableStream<Uint8Array>;
  private sent = 0;
  private wake: (() => void) | undefined;
  private done = false;
  private left = false;
  /** The frame the socket is still writing (handed over, not read past yet). */
  private holding: RelayedFrame | undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  constructor(
    private readonly feed: CameraFeed,
    private readonly memory: CameraFrameMemory,
    private readonly out: ServerResponse | undefined,
    private readonly onGone: () => void,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        pull: async (controller) => {
          // Reading again: the socket took the frame handed over last.
          this.releaseFrame();
          for (;;) {
            if (this.done) {
              // Cancelled already (the viewer left) or ended by shutdown: closing may find it closed.
              try {
                controller.close();
              } catch {
                /* already closed */
              }
              return;
            }
            const frame = this.feed.latest;
            if (frame && frame.seq > this.sent) {
              this.sent = frame.seq;
              this.holding = frame;
              this.memory.hold(this, frame);
              controller.enqueue(frame.part);
              return;
            }
            await new Promise<void>((resolve) => (this.wake = resolve));
          }
        },
        cancel: () => this.gone(),
      },
      { highWaterMark: 0 },
    );
  }

  /** A new frame: a read that is waiting takes it. */
  offer(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Shutdown: the stream ends after the frame in flight. */
  end(): void {
    this.done = true;
    this.offer();
    this.gone();
  }

  /**
   * Too far behind for the memory bound: the connection is reset (the socket's unsent bytes,
   * this frame among them, go with it); without a Node response, the body fails.
   */
  cut(): void {
    const socket = this.out?.socket;
    if (socket) socket.resetAndDestroy();
    else if (this.out) this.out.destroy();
    else {
      try {
        this.controller?.error(new Error('the viewer fell too far behind'));
      } catch {
        /* already closed */
      }
    }
    this.gone();
  }

  private releaseFrame(): void {
    if (!this.holding) return;
    this.memory.release(this, this.holding);
    this.holding = undefined;
  }

  private gone(): void {
    this.done = true;
    this.offer();
    this.releaseFrame();
    if (this.left) return;
    this.left = true;
    this.onGone();
  }
}

function formatPart(jpeg: Buffer, capturedAt: number | undefined): Buffer {
  const head =
    `--${CAMERA_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\n` +
    (capturedAt !== undefined ? `X-Capture-Time: ${capturedAt}\r\n` : '') +
    '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), jpeg, CRLF]);
}

const CRLF = Buffer.from('\r\n');

function feedKey(boardId: string, scriptId: string): string {
  return `${boardId}/${scriptId}`;
}
