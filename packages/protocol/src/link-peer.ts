import type { RawData, WebSocket } from 'ws';
import { systemClock, type Clock, type TimerHandle } from './clock.ts';
import { CompressionDecider, LINK_CODEC, type CompressPolicy, measuredDecodeRate, sampleCompression } from './compression.ts';
import { decodeFrame } from './frames.ts';
import { startHeartbeat, type Heartbeat } from './heartbeat.ts';
import { clip, ERROR_REPLY_QUEUE_BYTES, ERROR_TEXT_MAX_CHARS, LinkGuard, SEND_QUEUE_MAX_BYTES } from './link-guard.ts';
import { PUSH_ADOPT_TIMEOUT_MS, PUSH_CREDIT_BYTES } from './limits.ts';
import { PushedStreams, type PendingPush } from './pushed-streams.ts';
import { CloseCode } from './version.ts';
import type { ErrorInfo, LinkMessage, MessageOf, ParseResult, StreamSource } from './messages.ts';
import { PullIdAllocator, type PullIdRange } from './pull-ids.ts';
import { DeferredSink, StreamError, StreamReceiver, StreamSender, WindowBudget, type ByteSink, type ChunkReader, type LinkOutput, type StreamControlMessage } from './streams.ts';
import { LinkFeature } from './version.ts';

/** The log lines a peer writes; the server's pino logger and the agent's logger both fit. */
export interface PeerLog {
  debug(fields: Record<string, unknown>, msg?: string): void;
  info(fields: Record<string, unknown>, msg?: string): void;
  warn(fields: Record<string, unknown>, msg?: string): void;
  error(fields: Record<string, unknown>, msg?: string): void;
}

/** Messages the peer settles itself; every other valid message goes to `handlers.message`. */
type SettledType = 'stream.credit' | 'stream.end' | 'stream.abort' | 'stream.push' | 'error';
export type DispatchedMessage<In extends LinkMessage> = Exclude<In, { type: SettledType }>;

export interface LinkPeerHandlers<In extends LinkMessage> {
  /** Every valid message, before the peer acts on it (test fakes record them all). */
  observe?(message: In): void;
  /**
   * A valid message the peer does not settle itself (`stream.pull` included: answer it with
   * `serve`). A rejection is logged and answered with `error` `internal_error`.
   */
  message(message: DispatchedMessage<In>): void | Promise<void>;
  /** The socket opened (at once for a socket that was open when the peer took it). */
  opened?(): void;
  /** The socket closed; every stream of the link has failed with `link_closed` by then. */
  closed?(code: number, reason: string): void;
}

export interface LinkPeerOptions<In extends LinkMessage> {
  /** The link's socket, open (server side) or still connecting (agent side). */
  socket: WebSocket;
  /** Parses a text message of the other side (`parseAgentMessage` / `parseServerMessage`). */
  parse(text: string): ParseResult<In>;
  /** The ids this side gives its own pulls (AGENT_PULL_IDS / SERVER_PULL_IDS). */
  pullIds: PullIdRange;
  /** The other end, for log lines and errors ("the agent", "the server"). */
  peerName: string;
  log: PeerLog;
  handlers: LinkPeerHandlers<In>;
  /** Pings and the silence timeout; left out, the peer keeps no heartbeat (test fakes). */
  heartbeat?: { intervalMs: number; timeoutMs: number };
  clock?: Clock;
  /** Above this many bytes queued on the socket, a data frame's send waits for the socket to take it. */
  highWaterBytes?: number;
  /** What the adaptive windows of this link's pulls may add up to (default LINK_WINDOW_CAP_BYTES). */
  windowCapBytes?: number;
  /** A budget shared with other links (the server's, for all boards): this link's windows count against it too. */
  sharedWindowBudget?: WindowBudget;
  /**
   * Ping once as soon as the socket opens, to know the round trip before the first stream
   * (the agent does; its pulls tell the server, and the heartbeat's pings refine it).
   */
  pingOnOpen?: boolean;
  /**
   * A file stream of this link ended (finished, failed or cut): `sent` for one this side
   * served, `received` for one it pulled; its file bytes and the payload bytes that crossed
   * the wire for them (fewer when frames went compressed). For byte counters.
   */
  onStreamBytes?: (direction: 'sent' | 'received', bytes: number, wireBytes: number) => void;
  /** How this side compresses what it serves once compression is negotiated (default `auto`). */
  compressPolicy?: CompressPolicy;
}

/**
 * What `serve` sends: bytes from the pull's offset, and the total size if known up front.
 * A `reader` (a file) is read straight into pooled frame buffers; a `source` is any stream.
 */
export type ServedSource =
  | {
      source: AsyncIterable<Uint8Array> & { destroy?(): void };
      /** Left out for a source whose size is known only at its end (a relayed HTTP body). */
      size?: number;
    }
  | { reader: ChunkReader; size?: number };

/** Default high-water mark of the socket's send queue (see `sendFrame`). */
export const SOCKET_HIGH_WATER_BYTES = 4 * 1024 * 1024;
/** Round trips measured right after opening (pingOnOpen), OPEN_PING_GAP_MS apart; the smallest counts. */
const OPEN_PINGS = 5;
const OPEN_PING_GAP_MS = 50;
/** How long a closing socket may take to finish the close handshake before it is cut. */
const CLOSE_GRACE_MS = 2000;
const OPEN = 1;
const CONNECTING = 0;

/**
 * One end of the agent link, the same on both sides and in the test fakes: owns the
 * WebSocket, decodes frames, parses messages with the side's schema (answering what it
 * cannot understand with `error`), runs the streams of both directions (`pull`, `serve`,
 * credit, end, abort) and the heartbeat. What a message means is the caller's: the
 * server's BoardLink and the agent's ControlPlaneLink give it their handlers.
 *
 * `In` is what the other side sends, `Out` what this side sends.
 */
export class LinkPeer<In extends LinkMessage, Out extends LinkMessage> implements LinkOutput {
  readonly socket: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  /** When something (a message, a frame, a ping or a pong) last arrived; not all of it counts as life (see `onData`). */
  lastHeardAt: number;
  /** When the socket opened (undefined while connecting). */
  openedAt: number | undefined;
  /** The heartbeat gave up on a silent link (the socket was terminated). */
  heartbeatTimedOut = false;
  /** The smallest ping → pong round trip seen on this link (ms), if any. */
  rttMs: number | undefined;
  /** The features this side named in its hello / welcome, and those the other side named. */
  private ownFeatures: readonly string[] = [];
  private peerFeatures: readonly string[] = [];
  /** The link rate this side last measured as a sender (wire bytes/s), for the next stream it serves. */
  private learnedSendBps: number | undefined;
  private pingSentAt: number | undefined;
  /** Pings still to send after the first one at open (pingOnOpen). */
  private openPings = 0;
  private openPingTimer: TimerHandle | undefined;
  private readonly clock: Clock;
  private readonly log: PeerLog;
  private readonly pullIds: PullIdAllocator;
  private readonly receivers = new Map<number, StreamReceiver>();
  private readonly senders = new Map<number, { sender: StreamSender; peerAborted: boolean }>();
  /** Pushed streams not adopted yet, and the sources this side pulls. */
  private readonly pushes: PushedStreams;
  /** What the other side's hello said it decodes (`hello.compression`), for the streams this side pushes. */
  private peerDecodes: MessageOf<'hello'>['compression'];
  /** The memory cap shared by the adaptive windows of this link's pulls. */
  private readonly windowBudget: WindowBudget;
  private heartbeat: Heartbeat | undefined;
  /** Bounds on a misbehaving peer: invalid messages, warn lines, the send queue. */
  private readonly guard: LinkGuard;
  private closeTimer: TimerHandle | undefined;
  private isClosed = false;
  private markClosed!: (end: { code: number; reason: string }) => void;

  constructor(private readonly opts: LinkPeerOptions<In>) {
    this.socket = opts.socket;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
    this.lastHeardAt = this.clock.now();
    this.guard = new LinkGuard(this.clock);
    this.pullIds = new PullIdAllocator(opts.pullIds);
    this.pushes = new PushedStreams(this.clock);
    this.windowBudget = new WindowBudget(opts.windowCapBytes, opts.sharedWindowBudget);
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    const socket = opts.socket;
    socket.on('message', (data, isBinary) => this.onData(data, isBinary));
    socket.on('ping', () => this.heard());
    socket.on('pong', () => {
      this.heard();
      if (this.pingSentAt === undefined) return;
      const rtt = this.clock.now() - this.pingSentAt;
      this.pingSentAt = undefined;
      this.rttMs = this.rttMs === undefined ? rtt : Math.min(this.rttMs, rtt);
      // A few round trips right after opening: the smallest, as a busy machine delays some.
      if (this.openPings > 0) {
        this.openPings--;
        this.openPingTimer = this.clock.setTimeout(() => this.ping(), OPEN_PING_GAP_MS);
        this.openPingTimer.unref();
      }
    });
    socket.on('error', (err) => {
      // Before 'open' the owner of the socket reports the failed attempt; after it, 'close' follows.
      if (this.openedAt !== undefined) this.log.warn({ err }, 'link error');
    });
    socket.on('close', (code, reason) => this.onClose(code, reason.toString('utf8')));
    if (socket.readyState === OPEN) this.onOpen();
    else socket.once('open', () => this.onOpen());
  }

  get isOpen(): boolean {
    return !this.isClosed && this.socket.readyState === OPEN;
  }

  // ── sending ──────────────────────────────────────────────────────────────────────

  /** Sends one message of this side; false (and nothing sent) when the socket is not open. */
  send(message: Out): boolean {
    if (message.type === 'hello' || message.type === 'welcome') this.ownFeatures = message.features ?? [];
    return this.sendAny(message);
  }

  /**
   * Both sides named `stream.compress` (hello and welcome): this side's pulls offer
   * compression and it compresses what it serves to a pull that offered it.
   */
  get compressionNegotiated(): boolean {
    const feature = LinkFeature.streamCompression;
    return this.ownFeatures.includes(feature) && this.peerFeatures.includes(feature);
  }

  /** Both sides named `stream.push`: the server may push files, the agent adopts them. */
  get pushNegotiated(): boolean {
    const feature = LinkFeature.streamPush;
    return this.ownFeatures.includes(feature) && this.peerFeatures.includes(feature);
  }

  /** Pings the other side to measure the round trip (the heartbeat's pings measure it too). */
  private ping(): void {
    if (this.socket.readyState !== OPEN) return;
    this.pingSentAt ??= this.clock.now();
    this.socket.ping();
  }

  /** LinkOutput: the stream classes' credit, end and abort. */
  sendMessage(message: StreamControlMessage): void {
    this.sendAny(message);
  }

  /**
   * Sends one binary message: `frame`, or a data frame's header and payload as two
   * fragments of one message (queued in the same tick, so nothing comes between them).
   * Resolves at once while the socket's queue is short, otherwise once the socket has
   * taken it: a fast sender never piles up memory behind a slow link. `onSent` runs when
   * the socket has written the buffers (or failed to).
   */
  sendFrame(frame: Buffer, payload?: Uint8Array, onSent?: (err: Error | undefined) => void): Promise<void> {
    if (!this.isOpen) return Promise.reject(this.linkClosedError());
    const highWater = this.opts.highWaterBytes ?? SOCKET_HIGH_WATER_BYTES;
    return new Promise((resolve, reject) => {
      let settled = false;
      if (payload) this.socket.send(frame, { binary: true, fin: false });
      this.socket.send(payload ?? frame, { binary: true, fin: true }, (err) => {
        onSent?.(err ?? undefined);
        if (settled) return;
        settled = true;
        if (err) reject(new StreamError({ code: 'link_closed', message: err.message }));
        else resolve();
      });
      if (!settled && this.socket.bufferedAmount < highWater) {
        settled = true;
        resolve();
      }
    });
  }

  /** Closes the link; a peer that does not finish the close handshake is cut after 2 s. */
  close(code: number, reason = ''): void {
    if (this.socket.readyState === CONNECTING) {
      this.socket.terminate();
      return;
    }
    if (this.socket.readyState !== OPEN) return;
    this.socket.close(code, reason);
    this.closeTimer = this.clock.setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS);
    this.closeTimer.unref();
  }

  // ── streams ──────────────────────────────────────────────────────────────────────

  /**
   * Pulls `source` from `offset` into `sink` under a fresh id of this side's range. The
   * receiver's `done` settles when the sender ends or aborts the stream, or the link closes.
   */
  pull(source: StreamSource, offset: number, sink: ByteSink, opts: { onBytes?: (bytes: number) => void; window?: number } = {}): StreamReceiver {
    const id = this.takeStreamId();
    const compress = this.compressionNegotiated;
    const receiver = new StreamReceiver(this, id, sink, { ...opts, budget: this.windowBudget, acceptCompressed: compress });
    this.track(receiver, source, 'pull');
    this.pushes.pullingUntilDone(source, receiver);
    const compression = compress ? { compression: this.compressionOffer() } : {};
    if (!this.sendAny({ type: 'stream.pull', stream_id: id, source, offset, credit: receiver.window, ...compression })) receiver.fail(this.linkClosedError().info);
    return receiver;
  }

  /** A fresh id of this side's range, used by no stream of either direction (pushes take them too). */
  private takeStreamId(): number {
    return this.pullIds.take((candidate) => this.receivers.has(candidate) || this.senders.has(candidate));
  }

  /**
   * Sends `source` (from `offset`) to the other side without waiting for its pull
   * (`stream.push`, when both sides named the feature): the other side adopts it as its pull
   * or declines it. Resolves like `serve` once the stream ended, or undefined at once when
   * pushing is not negotiated (the other side pulls as before). A push is served exactly as
   * a pull carrying PUSH_CREDIT_BYTES of credit and the compression offer of the other
   * side's hello: `open` gets that pull, as a pull's opener would.
   */
  async push(source: StreamSource, open: (pull: MessageOf<'stream.pull'>) => Promise<ServedSource>, offset = 0): Promise<{ bytes: number; wireBytes: number; ok: boolean; pull: MessageOf<'stream.pull'> } | undefined> {
    if (!this.pushNegotiated || !this.isOpen) return undefined;
    const id = this.takeStreamId();
    const decodes = this.peerDecodes;
    const pull: MessageOf<'stream.pull'> = {
      type: 'stream.pull',
      stream_id: id,
      source,
      offset,
      credit: PUSH_CREDIT_BYTES,
      ...(decodes && this.compressionNegotiated ? { compression: { codecs: decodes.codecs, ...(decodes.decode_bps ? { decode_bps: decodes.decode_bps } : {}) } } : {}),
    };
    if (!this.sendAny({ type: 'stream.push', stream_id: id, source, offset, credit: PUSH_CREDIT_BYTES })) return undefined;
    return { ...(await this.serve(pull, () => open(pull))), pull };
  }

  /**
   * Takes the stream the other side pushed of `source`, if one waits, as this side's pull
   * from `offset` into `sink` (it grants the rest of its window now). A push from another
   * offset is declined (undefined: pull instead). Frames that arrived before go to `sink`
   * first, in order.
   */
  adoptPush(source: StreamSource, offset: number, sink: ByteSink, opts: { onBytes?: (bytes: number) => void } = {}): StreamReceiver | undefined {
    const pending = this.pushes.take(source);
    if (!pending) return undefined;
    if (pending.offset !== offset) {
      pending.receiver.fail({ code: 'declined', message: `resuming this file at byte ${offset} instead` }, true);
      return undefined;
    }
    this.pushes.pullingUntilDone(source, pending.receiver);
    pending.onBytes = opts.onBytes;
    pending.sink.attach(sink);
    pending.receiver.adopted();
    return pending.receiver;
  }

  /** Gives up the stream pushed of `source`, if one waits (this side holds the file already). */
  declinePush(source: StreamSource, why: string): void {
    this.pushes.take(source)?.receiver.fail({ code: 'declined', message: why }, true);
  }

  /** The other side pushed a stream: held (its credit's worth of frames queued) until adopted. */
  private onPush(m: MessageOf<'stream.push'>): void {
    const id = m.stream_id;
    const refuse = (code: string, message: string) => this.sendAny({ type: 'stream.abort', stream_id: id, error: { code, message } });
    if (!this.ownFeatures.includes(LinkFeature.streamPush)) return void refuse('declined', 'this side takes no pushed streams');
    // Ids of this side's range are its pulls': a push must come from the other side's.
    if ((id >= this.opts.pullIds.first && id <= this.opts.pullIds.last) || this.receivers.has(id)) return void refuse('stream_in_use', `stream ${id} is not free for a push`);
    if (m.credit > PUSH_CREDIT_BYTES) return void refuse('declined', `a push may hold at most ${PUSH_CREDIT_BYTES} bytes of credit`);
    const refusal = this.pushes.refusal(m.source);
    if (refusal) return void refuse('declined', refusal);
    const sink = new DeferredSink();
    const receiver = new StreamReceiver(this, id, sink, {
      budget: this.windowBudget,
      acceptCompressed: this.compressionNegotiated,
      pushedCredit: m.credit,
      // Counted for whoever adopts it (frames before that wait in the receiver, unwritten).
      onBytes: (n) => pending.onBytes?.(n),
    });
    const pending: PendingPush = { receiver, sink, offset: m.offset, onBytes: undefined };
    this.track(receiver, m.source, 'push');
    this.pushes.hold(m.source, pending, () =>
      receiver.fail({ code: 'declined', message: `nothing took the pushed stream within ${PUSH_ADOPT_TIMEOUT_MS / 1000} s` }, true),
    );
  }

  /**
   * Keeps a stream this side receives (a pull, or a push from the other side) under its id
   * until it settles; then counts its bytes and, when it ran to its end, logs it with the
   * time since now (from the pull sent, or the push arrived).
   */
  private track(receiver: StreamReceiver, source: StreamSource, how: 'pull' | 'push'): void {
    const id = receiver.streamId;
    this.receivers.set(id, receiver);
    const started = performance.now();
    const ended = () => {
      this.receivers.delete(id);
      this.opts.onStreamBytes?.('received', receiver.bytes, receiver.wireBytes);
    };
    receiver.done.then(({ bytes }) => {
      ended();
      const measured = receiver.measured;
      this.log.debug(
        {
          stream_id: id,
          source: source.kind,
          bytes,
          wire_bytes: receiver.wireBytes,
          ms: Math.round(performance.now() - started),
          write_ms: Math.round(receiver.writes.ms),
          writes: receiver.writes.count,
          window: receiver.window,
          rtt_ms: measured?.rttMs,
          rate: measured?.rate,
        },
        `${how} from ${this.opts.peerName} done`,
      );
    }, ended);
  }

  /**
   * Answers the other side's `stream.pull` with `open()`'s bytes, under its credit. `open`
   * may throw a StreamError (unknown source, bad offset): the pull is aborted with its
   * code. Resolves with the bytes read from the source, the payload bytes sent on the wire
   * (fewer when frames went compressed) and whether all of them were sent.
   */
  async serve(pull: MessageOf<'stream.pull'>, open: () => Promise<ServedSource>): Promise<{ bytes: number; wireBytes: number; ok: boolean }> {
    const served = await this.serveStream(pull, open);
    this.opts.onStreamBytes?.('sent', served.bytes, served.wireBytes);
    return served;
  }

  private async serveStream(pull: MessageOf<'stream.pull'>, open: () => Promise<ServedSource>): Promise<{ bytes: number; wireBytes: number; ok: boolean }> {
    const id = pull.stream_id;
    if (this.senders.has(id)) {
      this.sendAny({ type: 'stream.abort', stream_id: id, error: { code: 'stream_in_use', message: `stream ${id} is already open` } });
      return { bytes: 0, wireBytes: 0, ok: false };
    }
    const entry = { sender: new StreamSender(this, id, pull.credit), peerAborted: false };
    this.senders.set(id, entry);
    let bytes = 0;
    let opened: ServedSource | undefined;
    try {
      opened = await open();
      if ('reader' in opened) {
        const started = performance.now();
        const decider = await this.compressionFor(pull, entry.sender, opened);
        const sampledMs = performance.now() - started;
        await entry.sender.pumpReader(opened.reader, opened.size, (n) => (bytes += n), decider);
        if (entry.sender.measuredLinkBps !== undefined) this.learnedSendBps = entry.sender.measuredLinkBps;
        const round = (ms: number) => Math.round(ms);
        const { creditMs, socketMs, readMs, compressMs } = entry.sender.waits;
        this.log.debug(
          {
            stream_id: id,
            source: pull.source.kind,
            bytes,
            wire_bytes: entry.sender.wireBytes,
            ms: round(performance.now() - started),
            sample_ms: round(sampledMs),
            credit_wait_ms: round(creditMs),
            socket_wait_ms: round(socketMs),
            read_ms: round(readMs),
            compress_ms: round(compressMs),
            ...(decider ? { compression: decider.describe() } : {}),
          },
          `stream to ${this.opts.peerName} sent`,
        );
        return { bytes, wireBytes: entry.sender.wireBytes, ok: true };
      }
      const source = opened.source;
      // Counted as read, so a stream cut by a dropped link still reports what it moved.
      const counted = (async function* () {
        for await (const chunk of source) {
          bytes += chunk.byteLength;
          yield chunk;
        }
      })();
      await entry.sender.pump(counted, opened.size);
      return { bytes, wireBytes: bytes, ok: true };
    } catch (err) {
      const info: ErrorInfo = err instanceof StreamError ? err.info : { code: 'read_failed', message: err instanceof Error ? err.message : String(err) };
      // The puller's own abort and a closed link need no answer.
      const quiet = entry.peerAborted || info.code === 'link_closed';
      if (!quiet) {
        this.sendAny({ type: 'stream.abort', stream_id: id, error: info });
        this.log.warn({ stream_id: id, source: pull.source, error: info }, `stream to ${this.opts.peerName} failed`);
      } else this.log.debug({ stream_id: id, error: info }, `stream to ${this.opts.peerName} ended early`);
      return { bytes, wireBytes: entry.sender.wireBytes, ok: false };
    } finally {
      // Not awaited: the caller hears the stream's end at once, as with a stream source (the
      // server records a pull's bytes before the agent's outcome can arrive).
      if (opened && 'reader' in opened) void opened.reader.close().catch(() => {});
      else opened?.source.destroy?.();
      this.senders.delete(id);
    }
  }

  /** What this side's pulls tell the sender: its codec, its decode rate, the link as it measured it. */
  private compressionOffer(): NonNullable<MessageOf<'stream.pull'>['compression']> {
    const learned = this.windowBudget.learnedRate;
    return {
      codecs: [LINK_CODEC],
      decode_bps: measuredDecodeRate(),
      ...(learned ? { link_bps: Math.round(learned) } : {}),
      ...(this.rttMs !== undefined ? { rtt_ms: Math.round(this.rttMs * 10) / 10 } : {}),
    };
  }

  /**
   * The decider for a file served to a pull that offered compression (both sides named the
   * feature), after sampling the file's start and middle; undefined: the file goes raw.
   */
  private async compressionFor(pull: MessageOf<'stream.pull'>, sender: StreamSender, opened: { reader: ChunkReader; size?: number }): Promise<CompressionDecider | undefined> {
    const offer = pull.compression;
    if (!offer || !offer.codecs.includes(LINK_CODEC) || !this.compressionNegotiated) return undefined;
    const decider = new CompressionDecider(
      { decodeBps: offer.decode_bps, linkBps: offer.link_bps },
      () => sender.measuredLinkBps ?? this.learnedSendBps,
      () => (this.rttMs !== undefined && offer.rtt_ms !== undefined ? Math.min(this.rttMs, offer.rtt_ms) : (this.rttMs ?? offer.rtt_ms)),
      this.opts.compressPolicy ?? 'auto',
    );
    if (opened.size !== undefined) await sampleCompression(opened.reader, pull.offset, opened.size, decider);
    return decider;
  }

  // ── receiving ────────────────────────────────────────────────────────────────────

  /** Proof that the peer is alive and reading: a ping, a pong, data of a pull this side asked for. */
  private heard(): void {
    this.lastHeardAt = this.clock.now();
    this.heartbeat?.heard();
  }

  private onOpen(): void {
    this.openedAt = this.clock.now();
    this.heard();
    const hb = this.opts.heartbeat;
    if (hb) {
      this.heartbeat = startHeartbeat({
        clock: this.clock,
        intervalMs: hb.intervalMs,
        timeoutMs: hb.timeoutMs,
        beat: () => this.ping(),
        onSilent: (silentMs) => {
          this.heartbeatTimedOut = true;
          this.log.warn({ silent_ms: silentMs }, `nothing heard from ${this.opts.peerName}: closing the dead link`);
          this.socket.terminate();
        },
      });
    }
    // A first round trip at once: a compressing sender presumes a link from it until it measures the rate.
    if (this.opts.pingOnOpen) {
      this.openPings = OPEN_PINGS - 1;
      this.ping();
    }
    this.opts.handlers.opened?.();
  }

  private onData(data: RawData, isBinary: boolean): void {
    // Seen, but not proof of life: a peer that floods messages and never reads its socket
    // (so never answers a ping) is still cut by the heartbeat.
    this.lastHeardAt = this.clock.now();
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (isBinary) this.onFrame(buf);
    else this.onText(buf.toString('utf8'));
  }

  private onFrame(frame: Buffer): void {
    const decoded = decodeFrame(frame);
    if (!decoded.ok) {
      this.warnOfInput({ error: decoded.error }, `bad binary frame from ${this.opts.peerName}`);
      this.replyError('malformed_frame', decoded.error);
      return;
    }
    const receiver = this.receivers.get(decoded.streamId);
    // Data still in flight for a stream this side already gave up is expected: dropped.
    if (receiver) {
      // Bounded by the credit this side granted, so it cannot be a flood: it counts as life
      // (a peer busy sending a large file may be slow to answer pings behind its frames).
      this.heard();
      receiver.push(decoded.payload, decoded.rawLength);
    }
    else this.log.debug({ stream_id: decoded.streamId }, 'data frame for no open stream');
  }

  private onText(text: string): void {
    const parsed = this.opts.parse(text);
    if (!parsed.ok) {
      this.warnOfInput({ code: parsed.code, error: parsed.error, ref_type: parsed.type }, `message from ${this.opts.peerName} not understood`);
      // An `error` is never answered, even a malformed one: two peers could loop on it.
      if (parsed.type !== 'error') this.replyError(parsed.code, parsed.error, parsed.type);
      else this.countInvalid();
      return;
    }
    this.opts.handlers.observe?.(parsed.message);
    const m: LinkMessage = parsed.message;
    switch (m.type) {
      case 'hello':
        this.peerDecodes = m.compression;
        this.peerFeatures = m.features ?? [];
        this.dispatch(parsed.message as DispatchedMessage<In>);
        return;
      case 'welcome':
        this.peerFeatures = m.features ?? [];
        this.dispatch(parsed.message as DispatchedMessage<In>);
        return;
      case 'stream.push':
        this.onPush(m);
        return;
      case 'stream.credit':
        this.senders.get(m.stream_id)?.sender.addCredit(m.bytes);
        return;
      case 'stream.end': {
        const receiver = this.receivers.get(m.stream_id);
        if (receiver) receiver.end(m.size);
        else this.log.debug({ stream_id: m.stream_id }, 'stream.end for no open pull');
        return;
      }
      case 'stream.abort': {
        // The two sides' ids come from disjoint ranges, so at most one of these matches.
        this.receivers.get(m.stream_id)?.fail(m.error);
        const out = this.senders.get(m.stream_id);
        if (out) {
          out.peerAborted = true;
          out.sender.fail(m.error);
        }
        return;
      }
      case 'error':
        this.warnOfInput({ code: m.code, error: m.message, ref_type: m.ref_type }, `${this.opts.peerName} reported an error`);
        return;
      default:
        this.dispatch(parsed.message as DispatchedMessage<In>);
    }
  }

  private dispatch(message: DispatchedMessage<In>): void {
    const fail = (err: unknown) => {
      this.log.error({ err, type: message.type }, 'handling a message failed');
      this.replyError('internal_error', err instanceof Error ? err.message : String(err), message.type);
    };
    try {
      const done = this.opts.handlers.message(message);
      if (done) done.catch(fail);
    } catch (err) {
      fail(err);
    }
  }

  /**
   * Answers a message this side could not take with `error`. Unless the fault is this
   * side's (`internal_error`), the message counts against the peer's invalid-message
   * budget, and the reply is dropped while the peer leaves our replies unread.
   */
  replyError(code: string, message: string, refType?: string): void {
    if (code !== 'internal_error' && !this.countInvalid()) return;
    if (this.socket.bufferedAmount > ERROR_REPLY_QUEUE_BYTES) return;
    // Clipped: a peer's 64 KiB message type was echoed twice in each reply.
    this.sendAny({ type: 'error', code, message: clip(message, ERROR_TEXT_MAX_CHARS), ...(refType ? { ref_type: clip(refType, ERROR_TEXT_MAX_CHARS) } : {}) });
  }

  /** Counts one invalid message; false (and the link closing) once the peer has spent its budget. */
  private countInvalid(): boolean {
    if (this.guard.invalidArrived()) return true;
    if (this.isOpen) {
      this.log.warn({ close_code: CloseCode.invalidMessages }, `${this.opts.peerName} keeps sending invalid messages: closing the link`);
      this.close(CloseCode.invalidMessages, 'too many invalid messages');
    }
    return false;
  }

  /** A warn line about the peer's input, at most a few a minute per link (the rest are counted). */
  private warnOfInput(fields: Record<string, unknown>, msg: string): void {
    const allowed = this.guard.warnLine();
    if (!allowed) return;
    const clipped = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? clip(v, ERROR_TEXT_MAX_CHARS) : v]));
    this.log.warn(allowed.suppressed > 0 ? { ...clipped, suppressed_lines: allowed.suppressed } : clipped, msg);
  }

  private onClose(code: number, reason: string): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.heartbeat?.stop();
    this.clock.clearTimeout(this.closeTimer);
    this.clock.clearTimeout(this.openPingTimer);
    const info = { code: 'link_closed', message: `the link to ${this.opts.peerName} closed (${code}${reason ? ` ${reason}` : ''})` };
    for (const { sender } of this.senders.values()) sender.fail(info);
    for (const receiver of [...this.receivers.values()]) receiver.fail(info);
    this.markClosed({ code, reason });
    this.opts.handlers.closed?.(code, reason);
  }

  private sendAny(message: LinkMessage): boolean {
    if (!this.isOpen) return false;
    if (this.socket.bufferedAmount > SEND_QUEUE_MAX_BYTES) {
      // Data frames wait for the queue to drain; messages pile up only toward a peer that stopped reading.
      this.log.warn({ queued_bytes: this.socket.bufferedAmount, close_code: CloseCode.notReading }, `${this.opts.peerName} does not read: closing the link`);
      this.close(CloseCode.notReading, 'peer does not read');
      return false;
    }
    this.socket.send(JSON.stringify(message));
    return true;
  }

  private linkClosedError(): StreamError {
    return new StreamError({ code: 'link_closed', message: `the link to ${this.opts.peerName} closed` });
  }
}
