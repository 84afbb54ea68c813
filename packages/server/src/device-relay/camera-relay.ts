import { boundaryOf, CAPTURE_TIME_HEADER, looksLikeJpeg, MjpegPartReader } from '@mm/webcam/frames';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import { BadGatewayError, boardOffline } from '../errors.ts';
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
}

export const DEFAULT_CAMERA_RELAY_OPTIONS: CameraRelayOptions = { clock: systemClock, lingerMs: 3000, timeoutMs: 30_000, retryMs: 1000 };

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
interface RelayedFrame {
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
 */
export class CameraRelay {
  private readonly feeds = new Map<string, CameraFeed>();
  private closed = false;
  private sharing: CameraSharing | undefined;

  constructor(
    private readonly links: CameraLinks,
    private readonly proxy: ProxyRelay,
    private readonly opts: CameraRelayOptions = DEFAULT_CAMERA_RELAY_OPTIONS,
  ) {}

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
   * on the port or not an MJPEG stream, 504 no answer) when it could not be opened.
   */
  async attach(target: CameraTarget, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const feed = this.feedFor(target);
    this.opts.clock.clearTimeout(feed.linger);
    feed.linger = undefined;
    if (!feed.upstream) this.open(feed);
    try {
      await feed.opening;
    } catch (err) {
      if (feed.viewers.size === 0) this.lastViewerLeft(feed);
      throw err;
    }
    if (signal.aborted) throw new Error('the viewer went away');
    const viewer = new CameraViewer(feed, () => {
      feed.viewers.delete(viewer);
      if (feed.viewers.size === 0) this.lastViewerLeft(feed);
    });
    feed.viewers.add(viewer);
    return viewer.body;
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
      feed = { key, target, viewers: new Set(), latest: undefined, seq: 0, upstream: undefined, opening: undefined, linger: undefined, retry: undefined, opened: 0, remote: false, remoteWants: new Map() };
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
    feed.latest = { seq: feed.seq, part: formatPart(jpeg, capturedAt), capturedAt };
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
 * viewer cannot take are skipped, never stored.
 */
class CameraViewer {
  readonly body: ReadableStream<Uint8Array>;
  private sent = 0;
  private wake: (() => void) | undefined;
  private done = false;
  private left = false;

  constructor(
    private readonly feed: CameraFeed,
    private readonly onGone: () => void,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
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

  private gone(): void {
    this.done = true;
    this.offer();
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
