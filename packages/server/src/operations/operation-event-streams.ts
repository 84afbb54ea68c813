import type { ServerResponse } from 'node:http';
import type { Clock } from '@mm/protocol';
import type { EventBus } from '../events/event-bus.ts';
import { formatEvent } from '../sse/format.ts';
import { SseChannel } from '../sse/sse-channel.ts';
import type { SseClient } from '../sse/sse-client.ts';
import type { OperationEventLog } from './event-log.ts';
import { publicEventData, type OperationEvent } from './operation-event.ts';
import type { OperationProgress } from './operation-object.ts';

export interface OperationEventStreamOptions {
  clock: Clock;
  heartbeatMs: number;
  maxBacklogBytes: number;
  graceMs: number;
  /** The `retry:` each stream starts with: how long an EventSource waits before reconnecting. */
  retryMs: number;
}

export const DEFAULT_OPERATION_STREAM_OPTIONS: Omit<OperationEventStreamOptions, 'clock'> = {
  heartbeatMs: 15_000,
  maxBacklogBytes: 1024 * 1024,
  graceMs: 5_000,
  retryMs: 2_000,
};

/** One operation's live stream: its channel, and where each client is in the event sequence. */
interface OperationStream {
  channel: SseChannel;
  /** The last seq written to each client; clients still catching up are not in here. */
  live: Map<SseClient, number>;
  /** Clients reading the stored events: told when a live event arrives meanwhile. */
  catchingUp: Set<{ missed: boolean }>;
  unsubscribe: () => void;
  unsubscribeProgress: () => void;
}

/**
 * A log event without the first `cut` bytes of its text (UTF-8), never splitting a
 * character: a cut inside one drops the rest of that character too.
 */
function withoutLeadingBytes(event: OperationEvent, cut: number): OperationEvent {
  const data = event.data as { data?: unknown };
  if (typeof data.data !== 'string') return event;
  const bytes = Buffer.from(data.data, 'utf8');
  let at = Math.min(cut, bytes.length);
  while (at < bytes.length && (bytes[at]! & 0xc0) === 0x80) at++;
  return { ...event, data: { ...data, data: bytes.subarray(at).toString('utf8') } };
}

const frameOf = (e: OperationEvent) => formatEvent({ id: String(e.seq), event: e.type, data: JSON.stringify(publicEventData(e.type, e.data)) });

/**
 * `GET /api/operations/<id>/events/`: each client first gets the stored events after its
 * `Last-Event-ID`, read from the database a page at a time (at the pace the client reads
 * them), then the live ones from the event bus, each formatted once for every client of
 * the operation. A live event that arrives while a client is still reading stored ones
 * sends it back to the database for the rest, so nothing waits in memory for it. The
 * stream ends after `end`.
 */
export class OperationEventStreams {
  private readonly streams = new Map<number, OperationStream>();
  private closed = false;

  constructor(
    private readonly deps: { events: OperationEventLog; bus: EventBus },
    private readonly opts: OperationEventStreamOptions,
  ) {}

  /** The client's stream (the response body). The operation must exist. */
  /**
   * With `logTailBytes` (and no `afterSeq`), only the last that many bytes of the stored log
   * are replayed, after one `log_skipped` event `{ bytes }` (no id) saying how much came
   * before; status and progress events are all replayed, live ones all follow.
   */
  open(operationId: number, afterSeq: number, out?: ServerResponse, logTailBytes?: number): ReadableStream<Uint8Array> {
    const stream = this.streamOf(operationId);
    const client = stream.channel.attach({ out });
    if (client.isOpen) void this.catchUp(operationId, stream, client, afterSeq, afterSeq === 0 ? logTailBytes : undefined);
    return client.body;
  }

  /** Clients of the operation's live stream right now (tests). */
  clientCount(operationId: number): number {
    return this.streams.get(operationId)?.channel.clientCount ?? 0;
  }

  /** Clients of every operation's stream right now (the SSE clients metric). */
  totalClients(): number {
    let n = 0;
    for (const stream of this.streams.values()) n += stream.channel.clientCount;
    return n;
  }

  /** Shutdown: every stream ends. */
  close(): void {
    this.closed = true;
    for (const stream of [...this.streams.values()]) stream.channel.close();
  }

  private streamOf(operationId: number): OperationStream {
    const existing = this.streams.get(operationId);
    if (existing) return existing;
    const stream: OperationStream = {
      channel: new SseChannel({ ...this.opts, ringSize: 0 }, () => this.forget(operationId, stream)),
      live: new Map(),
      catchingUp: new Set(),
      unsubscribe: this.deps.bus.subscribe('operation.event', operationId, ({ event }) => this.onEvent(stream, event)),
      unsubscribeProgress: this.deps.bus.subscribe('operation.progress', operationId, ({ progress }) => this.onProgress(stream, progress)),
    };
    if (this.closed) stream.channel.close();
    this.streams.set(operationId, stream);
    return stream;
  }

  private forget(operationId: number, stream: OperationStream): void {
    stream.unsubscribe();
    stream.unsubscribeProgress();
    if (this.streams.get(operationId) === stream) this.streams.delete(operationId);
  }

  private onEvent(stream: OperationStream, event: OperationEvent): void {
    for (const mark of stream.catchingUp) mark.missed = true;
    if (stream.live.size === 0) return;
    stream.channel.publish(frameOf(event), { remember: false, skip: (client) => (stream.live.get(client) ?? Infinity) >= event.seq });
    for (const client of stream.live.keys()) stream.live.set(client, Math.max(stream.live.get(client)!, event.seq));
    if (event.type === 'end') for (const client of [...stream.live.keys()]) client.end();
  }

  /**
   * A progress report between two stored ones: to the live clients only. It is not stored,
   * so its id is that of the last stored event each client has: `Last-Event-ID` resumes
   * after that one, and the next stored event carries on. (It went without an id, which
   * every event should have.)
   */
  private onProgress(stream: OperationStream, progress: OperationProgress): void {
    if (stream.live.size === 0) return;
    const data = JSON.stringify({ ...progress, at: new Date().toISOString() });
    for (const seq of new Set(stream.live.values())) {
      stream.channel.publish(formatEvent({ id: String(seq), event: 'progress', data }), { remember: false, skip: (client) => stream.live.get(client) !== seq });
    }
  }

  /** Stored events first, page by page; live ones once nothing new arrived during the last read. */
  private async catchUp(operationId: number, stream: OperationStream, client: SseClient, afterSeq: number, logTailBytes?: number): Promise<void> {
    const mark = { missed: false };
    stream.catchingUp.add(mark);
    let sent = afterSeq;
    try {
      const tail = logTailBytes !== undefined ? await this.deps.events.logTail(operationId, logTailBytes) : undefined;
      if (tail) client.write(formatEvent({ event: 'log_skipped', data: JSON.stringify({ bytes: tail.skipped }) }));
      for (;;) {
        mark.missed = false;
        for await (const event of this.deps.events.replay(operationId, sent, undefined, tail?.fromSeq)) {
          if (!client.isOpen) return;
          client.write(frameOf(tail && event.seq === tail.fromSeq && tail.cut > 0 ? withoutLeadingBytes(event, tail.cut) : event));
          sent = event.seq;
          if (event.type === 'end') {
            client.end();
            return;
          }
          await client.drained();
        }
        if (!client.isOpen) return;
        // Synchronously from the check to joining: no live event can fall in between.
        if (!mark.missed) {
          stream.live.set(client, sent);
          client.onClose(() => stream.live.delete(client));
          return;
        }
      }
    } catch {
      // The database failed mid-replay: the client reconnects and resumes.
      client.end();
    } finally {
      stream.catchingUp.delete(mark);
    }
  }
}
