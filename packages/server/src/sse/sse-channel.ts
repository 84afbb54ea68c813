import type { ServerResponse } from 'node:http';
import { startHeartbeat, type Clock, type Heartbeat } from '@mm/protocol';
import { EventRing } from './event-ring.ts';
import { gapEvent, HEARTBEAT_COMMENT, preamble } from './format.ts';
import { SseClient } from './sse-client.ts';

export interface SseChannelOptions {
  clock: Clock;
  /** An idle client hears a heartbeat comment about this often. */
  heartbeatMs: number;
  /** Events kept for `Last-Event-ID` resumption (0: none, the caller replays from elsewhere). */
  ringSize: number;
  /** The `retry:` told to clients first (EventSource reconnect delay); none when left out. */
  retryMs?: number;
  /** Unread output a client may have before it counts as behind. */
  maxBacklogBytes: number;
  /** How long a client may stay behind before it is cut off. */
  graceMs: number;
}

/**
 * One server-sent event stream with any number of clients: both of the server's streams
 * (an operation's events, a device script's relayed stream) are channels. An event is
 * formatted once by the caller and written to every client; the channel keeps the last
 * `ringSize` of them for `Last-Event-ID`, bounds every client's backlog (SseClient) and
 * sends idle clients heartbeat comments while it has any.
 */
export class SseChannel {
  private readonly clients = new Set<SseClient>();
  private readonly ring: EventRing;
  private heartbeat: Heartbeat | undefined;
  private closed = false;

  constructor(
    private readonly opts: SseChannelOptions,
    /** Called when the last client has gone. */
    private readonly onEmpty: () => void = () => {},
  ) {
    this.ring = new EventRing(opts.ringSize);
  }

  get clientCount(): number {
    return this.clients.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * A new client (its `body` is the response body): the `retry:` preamble, then the events
   * it missed since `lastEventId` that the ring still holds (after an `event: gap` when
   * some it missed are no longer held), then `intro` (e.g. the current state), then live
   * events. On a closed channel the stream ends after that.
   */
  attach(opts: { out?: ServerResponse | undefined; lastEventId?: string | undefined; intro?: Buffer[] } = {}): SseClient {
    const client = new SseClient(
      { clock: this.opts.clock, maxBacklogBytes: this.opts.maxBacklogBytes, graceMs: this.opts.graceMs },
      opts.out,
    );
    if (this.opts.retryMs !== undefined) client.write(preamble(this.opts.retryMs));
    if (opts.lastEventId !== undefined) for (const frame of this.replay(opts.lastEventId)) client.write(frame);
    for (const frame of opts.intro ?? []) client.write(frame);
    if (this.closed) {
      client.end();
      return client;
    }
    this.clients.add(client);
    client.onClose(() => this.detach(client));
    this.heartbeat ??= startHeartbeat({
      clock: this.opts.clock,
      // Looked at a few times per period, so an idle client hears from us about every heartbeatMs.
      intervalMs: Math.max(10, Math.floor(this.opts.heartbeatMs / 3)),
      beat: () => this.sendHeartbeats(),
    });
    return client;
  }

  /**
   * An event for every client (but those `skip` names). With `lastId` (the stream's last
   * event id once this event is seen) it is kept in the ring for resumption.
   */
  publish(frame: Buffer, opts: { lastId?: string | undefined; remember?: boolean; skip?: (client: SseClient) => boolean } = {}): void {
    if (opts.remember !== false) this.ring.push(opts.lastId, frame);
    for (const client of [...this.clients]) if (!opts.skip?.(client)) client.write(frame);
  }

  /** Ends every client's stream politely; later clients get what the ring holds and an end. */
  close(): void {
    this.closed = true;
    for (const client of [...this.clients]) client.end();
    this.stopHeartbeat();
  }

  /**
   * What a client resuming after `lastEventId` is sent: the events it missed, newest last.
   * When the ring no longer holds that id, or the missed events would not fit in the
   * client's allowance (it would be cut at once, and again on every retry), the oldest are
   * left out and an `event: gap` says so first: a client never misses events silently.
   */
  private replay(lastEventId: string): Buffer[] {
    if (this.opts.ringSize === 0) return [];
    const { frames, complete } = this.ring.since(lastEventId);
    let bytes = 0;
    let first = frames.length;
    while (first > 0 && bytes + frames[first - 1]!.byteLength <= this.opts.maxBacklogBytes) bytes += frames[--first]!.byteLength;
    const kept = frames.slice(first);
    return complete && first === 0 ? kept : [gapEvent(lastEventId), ...kept];
  }

  private detach(client: SseClient): void {
    if (!this.clients.delete(client) || this.clients.size > 0) return;
    this.stopHeartbeat();
    this.onEmpty();
  }

  private stopHeartbeat(): void {
    this.heartbeat?.stop();
    this.heartbeat = undefined;
  }

  private sendHeartbeats(): void {
    const due = this.opts.clock.now() - this.opts.heartbeatMs;
    for (const client of [...this.clients]) if (client.lastWriteAt <= due) client.write(HEARTBEAT_COMMENT);
  }
}
