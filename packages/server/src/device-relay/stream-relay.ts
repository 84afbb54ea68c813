import type { ServerResponse } from 'node:http';
import { systemClock, type Clock, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { BoardLink } from '../agent-link/board-link.ts';
import { formatEvent } from '../sse/format.ts';
import { SseChannel } from '../sse/sse-channel.ts';

export interface StreamRelayOptions {
  clock: Clock;
  /** An idle client gets a heartbeat comment this often. */
  heartbeatMs: number;
  /** How long the upstream stays open after its last client left (a reloading page comes back). */
  lingerMs: number;
  /** Events kept per stream for `Last-Event-ID` resumption. */
  ringSize: number;
  /** Unread output a client may pile up before it counts as behind. */
  maxClientBufferBytes: number;
  /** How long a client may stay behind before it is cut off. */
  graceMs: number;
  /** The `retry:` the relay tells clients (EventSource reconnect delay). */
  retryMs: number;
}

export const DEFAULT_STREAM_RELAY_OPTIONS: StreamRelayOptions = {
  clock: systemClock,
  heartbeatMs: 15_000,
  lingerMs: 2_000,
  ringSize: 256,
  maxClientBufferBytes: 1024 * 1024,
  graceMs: 2_000,
  retryMs: 2_000,
};

/** Which script's stream on which board, and where the script serves it. */
export interface StreamTarget {
  boardId: string;
  scriptId: string;
  port: number;
  path: string;
}

/** The part of the agent hub the stream relay needs. */
export interface BoardLinks {
  connection(boardId: string): BoardLink | undefined;
}

/**
 * Streams across replicas (remote-streams.ts): a stream whose board is linked elsewhere
 * asks for it (`want`) instead of subscribing; a stream some other replica wants passes
 * on what its upstream sends (`share`).
 */
export interface StreamSharing {
  want(target: StreamTarget): void;
  share(target: StreamTarget, frame: Buffer, lastEventId: string | undefined, state: 'up' | 'down' | undefined): void;
}

type UpstreamState = 'idle' | 'connecting' | 'up' | 'down';

/** The relayed stream of one script on one board: its clients, its buffer, its one upstream subscription. */
interface ScriptStream {
  key: string;
  boardId: string;
  port: number;
  path: string;
  /** Its clients, the ring of its last events, their heartbeats. */
  channel: SseChannel;
  /** The script's last event id (SSE ids stick): sent again when the subscription is made anew. */
  lastId: string | undefined;
  state: UpstreamState;
  sub: { id: number; conn: BoardLink } | undefined;
  linger: TimerHandle | undefined;
  scriptId: string;
  /** Its board is linked to another replica: events come from there (remote-streams.ts). */
  remote: boolean;
  /** Another replica's clients want it: its upstream stays open and its events are shared. */
  wanted: boolean;
}

/**
 * `GET /api/device-scripts/<id>/stream/` for any number of clients from ONE upstream per
 * (board, script): the first client makes the subscription (`sse.subscribe`), the agent
 * forwards the script's events (`sse.event`), each is formatted once and written to every
 * client, and the subscription ends (`sse.unsubscribe`) `lingerMs` after the last client
 * left. When the link drops, clients get `event: upstream` `{"state":"down"}`; when the
 * board is back the subscription is made again (with the last id seen, so the script can
 * resume) and they get `{"state":"up"}` once it is open.
 */
export class StreamRelay {
  private readonly streams = new Map<string, ScriptStream>();
  private readonly bySub = new Map<number, ScriptStream>();
  private readonly watched = new WeakSet<BoardLink>();
  private nextSubId = 1;
  private closed = false;
  private sharing: StreamSharing | undefined;

  constructor(
    private readonly links: BoardLinks,
    private readonly opts: StreamRelayOptions = DEFAULT_STREAM_RELAY_OPTIONS,
  ) {}

  /** Streams across replicas go through this (services.ts wires it when there can be several). */
  useSharing(sharing: StreamSharing): void {
    this.sharing = sharing;
  }

  /** Clients connected to the stream of this board and script (tests, diagnostics). */
  clientCount(boardId: string, scriptId: string): number {
    return this.streams.get(streamKey(boardId, scriptId))?.channel.clientCount ?? 0;
  }

  /** Clients of every relayed stream right now (the SSE clients metric). */
  totalClients(): number {
    let n = 0;
    for (const stream of this.streams.values()) n += stream.channel.clientCount;
    return n;
  }

  /**
   * A new client's event stream (the response body): the `retry:` preamble, the events
   * missed since `lastEventId` (if given), the upstream's state if it is known, then live
   * events. The first client of a stream makes its upstream subscription. With `out` (the
   * client's Node response) live events are written to it directly (see SseClient).
   */
  attach(target: StreamTarget, opts: { lastEventId?: string | undefined; out?: ServerResponse } = {}): ReadableStream<Uint8Array> {
    const stream = this.streamFor(target);
    this.opts.clock.clearTimeout(stream.linger);
    stream.linger = undefined;
    const intro = stream.state === 'up' || stream.state === 'down' ? [upstreamEvent(stream.state)] : [];
    const client = stream.channel.attach({ out: opts.out, lastEventId: opts.lastEventId, intro });
    if (!this.closed && !stream.sub) {
      if (!this.links.connection(target.boardId) && this.sharing) {
        // Linked to another replica (or nowhere yet): that replica's upstream feeds this stream.
        stream.remote = true;
        this.sharing.want(this.targetOf(stream));
      } else this.subscribe(stream);
    }
    return client.body;
  }

  onEvent(conn: BoardLink, m: MessageOf<'sse.event'>): void {
    const stream = this.streamOf(conn, m.sub_id);
    if (!stream) return;
    if (m.id !== undefined) stream.lastId = m.id;
    const frame = formatEvent(m);
    stream.channel.publish(frame, { lastId: stream.lastId });
    if (stream.wanted) this.sharing?.share(this.targetOf(stream), frame, stream.lastId, undefined);
  }

  // ── across replicas ──────────────────────────────────────────────────────────────

  /** Streams of this replica fed by another one (their clients still here), as targets. */
  remoteStreams(): StreamTarget[] {
    return [...this.streams.values()].filter((s) => s.remote && s.channel.clientCount > 0).map((s) => this.targetOf(s));
  }

  /** Streams other replicas want from this one's links right now. */
  wantedStreams(): StreamTarget[] {
    return [...this.streams.values()].filter((s) => s.wanted).map((s) => this.targetOf(s));
  }

  /**
   * Another replica's clients want (or no longer want) the stream of a board linked here:
   * its upstream opens (or may close, once no client here is left either).
   */
  setWanted(target: StreamTarget, wanted: boolean): void {
    if (this.closed) return;
    if (!wanted) {
      const stream = this.streams.get(streamKey(target.boardId, target.scriptId));
      if (!stream || !stream.wanted) return;
      stream.wanted = false;
      if (stream.channel.clientCount === 0) this.lastClientLeft(stream);
      return;
    }
    if (!this.links.connection(target.boardId)) return;
    const stream = this.streamFor(target);
    stream.wanted = true;
    stream.remote = false;
    this.opts.clock.clearTimeout(stream.linger);
    stream.linger = undefined;
    if (!stream.sub) this.subscribe(stream);
    else if (stream.state === 'up' || stream.state === 'down') {
      // The upstream was open already: the replica asking learns its state.
      this.sharing?.share(target, upstreamEvent(stream.state), stream.lastId, stream.state);
    }
  }

  /** What another replica's upstream sent, for this replica's clients of a stream fed from there. */
  deliverShared(boardId: string, scriptId: string, frame: Buffer, lastEventId: string | null, state: string | null): void {
    const stream = this.streams.get(streamKey(boardId, scriptId));
    if (!stream || !stream.remote || stream.sub) return;
    if (state === 'up' || state === 'down') {
      if (stream.state === state) return;
      stream.state = state;
      stream.channel.publish(frame, { remember: false });
      return;
    }
    if (lastEventId !== null) stream.lastId = lastEventId;
    stream.channel.publish(frame, { lastId: stream.lastId });
  }

  /**
   * The replica that fed a stream of a board linked elsewhere is gone (its board_sessions row
   * expired) or the board linked to yet another replica: that upstream is no more, as when a
   * link drops here. Clients get `upstream` `down`; `up` follows once the board's new holder
   * has made the subscription again and says so.
   */
  remoteUpstreamLost(boardId: string, scriptId: string, message: string): void {
    const stream = this.streams.get(streamKey(boardId, scriptId));
    if (!stream || !stream.remote || stream.sub || stream.state === 'down') return;
    stream.state = 'down';
    stream.channel.publish(upstreamEvent('down', message), { remember: false });
  }

  private targetOf(stream: ScriptStream): StreamTarget {
    return { boardId: stream.boardId, scriptId: stream.scriptId, port: stream.port, path: stream.path };
  }

  onStatus(conn: BoardLink, m: MessageOf<'sse.status'>): void {
    const stream = this.streamOf(conn, m.sub_id);
    if (!stream) return;
    this.setState(stream, m.state === 'open' ? 'up' : 'down', m.message);
  }

  /** The board's agent said hello (again): streams with clients subscribe on the new link. */
  boardOnline(boardId: string): void {
    const conn = this.links.connection(boardId);
    if (!conn) return;
    for (const stream of this.streams.values()) {
      if (stream.boardId !== boardId || (stream.channel.clientCount === 0 && !stream.wanted)) continue;
      // Fed from another replica until now: the board is linked here. That replica's upstream
      // ended with its link (it may have died without saying so): down, then up once ours opens.
      if (stream.remote && stream.state === 'up') this.setState(stream, 'down', "the board's link moved to this replica");
      stream.remote = false;
      if (stream.sub?.conn === conn) continue;
      this.forgetSubscription(stream);
      this.subscribe(stream);
    }
  }

  /** Shutdown: upstreams are let go and every client's stream ends. */
  close(): void {
    this.closed = true;
    for (const stream of this.streams.values()) {
      this.opts.clock.clearTimeout(stream.linger);
      this.unsubscribe(stream);
      stream.channel.close();
    }
  }

  // ── internals ────────────────────────────────────────────────────────────────────

  private streamFor(target: StreamTarget): ScriptStream {
    const key = streamKey(target.boardId, target.scriptId);
    let stream = this.streams.get(key);
    if (!stream) {
      const { clock, heartbeatMs, ringSize, retryMs, maxClientBufferBytes, graceMs } = this.opts;
      const created: ScriptStream = {
        key,
        boardId: target.boardId,
        port: target.port,
        path: target.path,
        channel: new SseChannel({ clock, heartbeatMs, ringSize, retryMs, maxBacklogBytes: maxClientBufferBytes, graceMs }, () =>
          this.lastClientLeft(created),
        ),
        lastId: undefined,
        state: 'idle',
        sub: undefined,
        linger: undefined,
        scriptId: target.scriptId,
        remote: false,
        wanted: false,
      };
      if (this.closed) created.channel.close();
      this.streams.set(key, created);
      stream = created;
    } else if (!stream.sub) {
      // The entry may have moved to another port since the last subscription.
      stream.port = target.port;
      stream.path = target.path;
    }
    return stream;
  }

  /** The stream a message of this connection belongs to; a stray subscription is ended on the board. */
  private streamOf(conn: BoardLink, subId: number): ScriptStream | undefined {
    const stream = this.bySub.get(subId);
    if (stream && stream.sub?.conn === conn) return stream;
    if (conn.isOpen) conn.sendMessage({ type: 'sse.unsubscribe', sub_id: subId });
    return undefined;
  }

  private subscribe(stream: ScriptStream): void {
    const conn = this.links.connection(stream.boardId);
    if (!conn) {
      this.setState(stream, 'down', 'the board is not connected');
      return;
    }
    this.watch(conn);
    const id = this.nextSubId++;
    stream.sub = { id, conn };
    this.bySub.set(id, stream);
    if (stream.state === 'idle') stream.state = 'connecting';
    conn.sendMessage({
      type: 'sse.subscribe',
      sub_id: id,
      port: stream.port,
      path: stream.path,
      ...(stream.lastId !== undefined ? { last_event_id: stream.lastId } : {}),
    });
  }

  private unsubscribe(stream: ScriptStream): void {
    const sub = stream.sub;
    this.forgetSubscription(stream);
    if (sub?.conn.isOpen) sub.conn.sendMessage({ type: 'sse.unsubscribe', sub_id: sub.id });
    stream.state = 'idle';
  }

  private forgetSubscription(stream: ScriptStream): void {
    if (stream.sub) this.bySub.delete(stream.sub.id);
    stream.sub = undefined;
  }

  private lastClientLeft(stream: ScriptStream): void {
    if (this.closed || stream.wanted) return;
    if (!stream.sub) {
      if (!stream.remote) stream.state = 'idle';
      return;
    }
    if (stream.linger) return;
    stream.linger = this.opts.clock.setTimeout(() => {
      stream.linger = undefined;
      if (stream.channel.clientCount === 0 && !stream.wanted) this.unsubscribe(stream);
    }, this.opts.lingerMs);
    stream.linger.unref();
  }

  /** Every subscription of a link that closed is gone on the agent's side too. */
  private watch(conn: BoardLink): void {
    if (this.watched.has(conn)) return;
    this.watched.add(conn);
    void conn.closed.then(() => {
      for (const stream of this.streams.values()) {
        if (stream.sub?.conn !== conn) continue;
        this.forgetSubscription(stream);
        if (stream.channel.clientCount > 0 || stream.wanted) this.setState(stream, 'down', 'the link to the board dropped');
        else stream.state = 'idle';
        // Wanted by another replica: whichever replica the board links to next takes it over.
        stream.wanted = false;
      }
    });
  }

  private setState(stream: ScriptStream, state: 'up' | 'down', message?: string): void {
    if (stream.state === state) return;
    stream.state = state;
    // Not kept for resumption: a client joining gets the current state anyway.
    const frame = upstreamEvent(state, message);
    stream.channel.publish(frame, { remember: false });
    if (stream.wanted) this.sharing?.share(this.targetOf(stream), frame, stream.lastId, state);
  }
}

/** The relay's own `upstream` event: the script's stream dropped (`down`) or is back (`up`). No id: it is not the script's. */
function upstreamEvent(state: 'up' | 'down', message?: string): Buffer {
  return formatEvent({ event: 'upstream', data: JSON.stringify(message ? { state, message } : { state }) });
}

function streamKey(boardId: string, scriptId: string): string {
  return `${boardId}/${scriptId}`;
}
