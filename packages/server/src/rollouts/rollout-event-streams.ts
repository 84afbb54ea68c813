import type { ServerResponse } from 'node:http';
import type { Clock } from '@mm/protocol';
import type { EventBus } from '../events/event-bus.ts';
import { formatEvent } from '../sse/format.ts';
import { SseChannel } from '../sse/sse-channel.ts';
import type { RolloutBoard, RolloutObject } from './rollout-object.ts';
import type { Rollouts } from './rollouts.ts';

export interface RolloutEventStreamOptions {
  clock: Clock;
  heartbeatMs: number;
  maxBacklogBytes: number;
  graceMs: number;
  retryMs: number;
}

interface RolloutStream {
  channel: SseChannel;
  /** What the clients were last told. */
  last: RolloutObject;
  /** One re-read at a time; a change during it asks for one more. */
  reading: Promise<void> | undefined;
  dirty: boolean;
  unsubscribe: () => void;
}

const frame = (event: string, data: unknown) => formatEvent({ event, data: JSON.stringify(data) });
const boardKey = (b: RolloutBoard) => JSON.stringify([b.status, b.operation_id, b.run_ms, b.metrics, b.error]);

/**
 * `GET /api/rollouts/<id>/events/`: each client first gets a `status` event with the whole
 * rollout, then `board` (one board's step changed: the board and the counts), `status`
 * (the rollout's status changed) and, once it has finished, `end` (the final rollout) and
 * the stream closes. One channel per rollout on each replica: a `rollout.changed` message
 * on the bus (from any replica) makes it read the rollout once and tell every client what
 * differs. A client that reconnects starts again from the whole rollout, so no event ids.
 */
export class RolloutEventStreams {
  private readonly streams = new Map<number, RolloutStream>();
  private closed = false;

  constructor(
    private readonly deps: { rollouts: Pick<Rollouts, 'get'>; bus: EventBus },
    private readonly opts: RolloutEventStreamOptions,
  ) {}

  /** The client's stream; `rollout` is the rollout as just read. */
  open(rollout: RolloutObject, out?: ServerResponse): ReadableStream<Uint8Array> {
    const intro = [frame('status', rollout)];
    if (rollout.finished_at) {
      const channel = new SseChannel({ ...this.opts, ringSize: 0 });
      channel.close();
      return channel.attach({ out, intro: [...intro, frame('end', rollout)] }).body;
    }
    const stream = this.streamOf(rollout);
    const client = stream.channel.attach({ out, intro });
    // It may have moved between the read and the attach.
    this.refresh(rollout.id, stream);
    return client.body;
  }

  totalClients(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.channel.clientCount;
    return n;
  }

  close(): void {
    this.closed = true;
    for (const s of [...this.streams.values()]) s.channel.close();
  }

  private streamOf(rollout: RolloutObject): RolloutStream {
    const existing = this.streams.get(rollout.id);
    if (existing && !existing.channel.isClosed) return existing;
    const stream: RolloutStream = {
      channel: new SseChannel({ ...this.opts, ringSize: 0 }, () => this.forget(rollout.id, stream)),
      last: rollout,
      reading: undefined,
      dirty: false,
      unsubscribe: this.deps.bus.subscribe('rollout.changed', rollout.id, () => this.refresh(rollout.id, stream)),
    };
    if (this.closed) stream.channel.close();
    this.streams.set(rollout.id, stream);
    return stream;
  }

  private forget(id: number, stream: RolloutStream): void {
    stream.unsubscribe();
    if (this.streams.get(id) === stream) this.streams.delete(id);
  }

  private refresh(id: number, stream: RolloutStream): void {
    if (stream.reading) {
      stream.dirty = true;
      return;
    }
    stream.reading = (async () => {
      do {
        stream.dirty = false;
        const now = await this.deps.rollouts.get(id).catch(() => undefined);
        if (now) this.publishChanges(stream, now);
      } while (stream.dirty && !stream.channel.isClosed);
    })().finally(() => {
      stream.reading = undefined;
    });
  }

  private publishChanges(stream: RolloutStream, now: RolloutObject): void {
    const before = stream.last;
    stream.last = now;
    now.boards.forEach((b, i) => {
      const was = before.boards[i];
      if (!was || boardKey(was) !== boardKey(b)) stream.channel.publish(frame('board', { ...b, counts: now.counts }), { remember: false });
    });
    if (before.status !== now.status) stream.channel.publish(frame('status', now), { remember: false });
    if (now.finished_at) {
      stream.channel.publish(frame('end', now), { remember: false });
      stream.channel.close();
      this.forget(now.id, stream);
    }
  }
}
