import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { cameraFrames } from '../db/schema.ts';
import { ApiError, boardOffline, GatewayTimeoutError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { CameraSharing, CameraTarget, RemoteFrameSink } from './camera-relay.ts';

/** A viewer replica repeats its `camera.want` this often… */
export const CAMERA_WANT_EVERY_MS = 2000;
/** …and the holder forgets a want not repeated for this long (its replica died). */
export const CAMERA_WANT_STALE_MS = 7000;

const keyOf = (t: { boardId: string; scriptId: string }) => `${t.boardId}/${t.scriptId}`;

/** A camera this replica's viewers watch while another replica holds the board's link. */
interface Following {
  target: CameraTarget;
  sink: RemoteFrameSink;
  /** The row's seq last delivered (or seen when following began). */
  lastSeq: number;
  answered: boolean;
  /** A read is running; `again` asks for one more after it (newer notes came meanwhile). */
  reading: boolean;
  again: boolean;
  wantTimer: TimerHandle | undefined;
  firstFrameTimer: TimerHandle | undefined;
  done: boolean;
}

/**
 * Cameras across replicas (docs/replicas.md, *Cameras*). PG NOTIFY caps a payload at 8 KB and
 * a frame is 30–60 KB, so frames travel through ONE row per camera in `camera_frames`: the
 * replica holding the link overwrites it with each newest frame (one write in flight per
 * camera; frames arriving meanwhile replace the pending one) and sends a `camera.frame` note;
 * a replica with viewers reads the row on the note (one read in flight, coalescing notes)
 * and hands the frame to its own CameraRelay feed, which fans it out newest-wins as for a
 * local upstream. Only whole frames cross, memory stays at one frame per camera per side.
 */
export class RemoteCameras implements CameraSharing {
  private readonly following = new Map<string, Following>();
  /** Holder side: the newest frame waiting for the write in flight, per camera. */
  private readonly pending = new Map<string, { target: CameraTarget; frame: Buffer | undefined; capturedAt: number | undefined; error: ApiError | undefined }>();
  private readonly writing = new Set<string>();
  private readonly clock: Clock;

  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      replicaId: string;
      log: Logger;
      isLocal(boardId: string): boolean;
      /** A replica elsewhere wants (or let go of) this camera of a board linked here. */
      onWant(target: CameraTarget, replicaId: string, wanted: boolean): void;
      timeoutMs: number;
      clock?: Clock;
    },
  ) {
    this.clock = deps.clock ?? systemClock;
    deps.bus.subscribe('camera.want', undefined, (m) => {
      if (m.replicaId === deps.replicaId || !deps.isLocal(m.boardId)) return;
      deps.onWant({ boardId: m.boardId, scriptId: m.scriptId, port: m.port }, m.replicaId, m.wanted);
    });
    deps.bus.subscribe('camera.frame', undefined, (m) => {
      const f = this.following.get(keyOf(m));
      if (f) this.read(f);
    });
  }

  /** Viewer side: frames of the camera from the replica holding the link, until `signal` aborts. */
  async follow(target: CameraTarget, signal: AbortSignal, sink: RemoteFrameSink): Promise<void> {
    const key = keyOf(target);
    const [row] = await this.deps.db
      .select({ seq: cameraFrames.seq })
      .from(cameraFrames)
      .where(and(eq(cameraFrames.boardId, target.boardId), eq(cameraFrames.scriptId, target.scriptId)));
    if (signal.aborted) return;
    const f: Following = { target, sink, lastSeq: row?.seq ?? 0, answered: false, reading: false, again: false, wantTimer: undefined, firstFrameTimer: undefined, done: false };
    this.following.set(key, f);
    const want = (wanted: boolean) =>
      this.deps.bus.publish('camera.want', target.boardId, { ...target, replicaId: this.deps.replicaId, wanted });
    want(true);
    f.wantTimer = this.clock.setInterval(() => want(true), CAMERA_WANT_EVERY_MS);
    f.wantTimer.unref();
    f.firstFrameTimer = this.clock.setTimeout(() => {
      if (!f.answered) this.finish(f, new GatewayTimeoutError('board_timeout', "No frame came from the replica holding the board's link in time."));
    }, this.deps.timeoutMs);
    f.firstFrameTimer.unref();
    await new Promise<void>((resolve, reject) => {
      f.sink = {
        ...sink,
        end: (err) => (err ? reject(err) : resolve()),
      };
      signal.addEventListener('abort', () => this.finish(f, undefined), { once: true });
    });
  }

  /** Holder side: the newest frame, for replicas that want it. */
  share(target: CameraTarget, frame: Buffer, capturedAt: number | undefined): void {
    this.pending.set(keyOf(target), { target, frame, capturedAt, error: undefined });
    this.flush(keyOf(target));
  }

  /** Holder side: the upstream could not be opened; viewers elsewhere hear why. */
  shareError(target: CameraTarget, error: unknown): void {
    const apiError = error instanceof ApiError ? error : new ApiError(502, 'script_unreachable', 'Bad Gateway', String(error));
    this.pending.set(keyOf(target), { target, frame: undefined, capturedAt: undefined, error: apiError });
    this.flush(keyOf(target));
  }

  close(): void {
    for (const f of [...this.following.values()]) this.finish(f, undefined);
  }

  private finish(f: Following, err: unknown): void {
    if (f.done) return;
    f.done = true;
    this.clock.clearInterval(f.wantTimer);
    this.clock.clearTimeout(f.firstFrameTimer);
    const key = keyOf(f.target);
    if (this.following.get(key) === f) this.following.delete(key);
    this.deps.bus.publish('camera.want', f.target.boardId, { ...f.target, replicaId: this.deps.replicaId, wanted: false });
    f.sink.end(err);
  }

  private flush(key: string): void {
    if (this.writing.has(key)) return;
    const next = this.pending.get(key);
    if (!next) return;
    this.pending.delete(key);
    this.writing.add(key);
    const { target, frame, capturedAt, error } = next;
    const values = {
      frame: frame ?? null,
      capturedAt: capturedAt ?? null,
      errorStatus: error?.status ?? null,
      errorCode: error?.code ?? null,
      errorDetail: error?.message ?? null,
    };
    void this.deps.db
      .insert(cameraFrames)
      .values({ boardId: target.boardId, scriptId: target.scriptId, seq: 1, ...values })
      .onConflictDoUpdate({
        target: [cameraFrames.boardId, cameraFrames.scriptId],
        set: { seq: sql`${cameraFrames.seq} + 1`, ...values, updatedAt: sql`now()` },
      })
      .then(() => this.deps.bus.publish('camera.frame', target.boardId, { boardId: target.boardId, scriptId: target.scriptId }))
      .catch((err: unknown) => this.deps.log.warn({ err, camera: key }, 'could not share a camera frame'))
      .finally(() => {
        this.writing.delete(key);
        this.flush(key);
      });
  }

  private read(f: Following): void {
    if (f.reading) {
      f.again = true;
      return;
    }
    f.reading = true;
    f.again = false;
    void this.deps.db
      .select()
      .from(cameraFrames)
      .where(and(eq(cameraFrames.boardId, f.target.boardId), eq(cameraFrames.scriptId, f.target.scriptId), sql`${cameraFrames.seq} > ${f.lastSeq}`))
      .then(([row]) => {
        if (!row || f.done) return;
        f.lastSeq = row.seq;
        if (row.frame) {
          if (!f.answered) {
            f.answered = true;
            this.clock.clearTimeout(f.firstFrameTimer);
            f.sink.answered();
          }
          f.sink.frame(Buffer.from(row.frame), row.capturedAt ?? undefined);
        } else if (!f.answered) {
          // The holder could not open the upstream: the first viewers hear its problem.
          const status = row.errorStatus ?? 502;
          this.finish(f, status === 503 && row.errorCode === 'board_offline' ? boardOffline(f.target.boardId, row.errorDetail ?? undefined) : new ApiError(status, row.errorCode ?? 'script_unreachable', titleOf(status), row.errorDetail ?? undefined));
        } else this.finish(f, undefined);
      })
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not read a shared camera frame'))
      .finally(() => {
        f.reading = false;
        if (f.again && !f.done) this.read(f);
      });
  }
}

function titleOf(status: number): string {
  return status === 503 ? 'Service Unavailable' : status === 504 ? 'Gateway Timeout' : 'Bad Gateway';
}
