import WebSocket from 'ws';
import {
  AGENT_PULL_IDS,
  CloseCode,
  isCompatibleProtocol,
  LinkPeer,
  MAX_FRAME_BYTES,
  parseServerMessage,
  PROTOCOL_VERSION,
  systemClock,
  type AgentMessage,
  type ByteSink,
  type Clock,
  type DispatchedMessage as PeerDispatched,
  type MessageOf,
  type ServedSource,
  type ServerMessage,
  type StreamReceiver,
  type StreamSource,
  type CompressPolicy,
} from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { parseRetryAfterMs } from './backoff.ts';

export type HelloMessage = MessageOf<'hello'>;
export type WelcomeMessage = MessageOf<'welcome'>;
/** Server messages the link does not settle itself (operations, RPC, relay, pulls of our content). */
export type DispatchedMessage = Exclude<PeerDispatched<ServerMessage>, { type: 'welcome' }>;

export interface SessionHandlers {
  /** Built when the socket opens (it reports the state of that moment). */
  buildHello(): Promise<HelloMessage>;
  /** The server answered `welcome`: the link is up for everything else. */
  onReady(link: ControlPlaneLink, welcome: WelcomeMessage, hello: HelloMessage): void;
  onMessage(message: DispatchedMessage, link: ControlPlaneLink): void | Promise<void>;
}

export interface SessionOptions {
  url: string;
  token: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  log: Logger;
  handlers: SessionHandlers;
  clock?: Clock;
  /** MM_LINK_COMPRESSION=always: what this agent serves goes compressed whenever it shrinks. */
  compressPolicy?: CompressPolicy;
}

export type SessionEnd =
  /**
   * The server refused the upgrade (401 for a bad token, 503 `server_busy`…); `retryAfterMs`
   * is its `Retry-After` when it sent one.
   */
  | { kind: 'rejected'; status: number; detail: string; retryAfterMs?: number }
  /** No connection could be made (refused, DNS, TLS, handshake timeout). */
  | { kind: 'unreachable'; error: string }
  /** The link was up and closed; `ready` says whether it got as far as `welcome`. */
  | { kind: 'closed'; code: number; reason: string; ready: boolean; heartbeatTimeout: boolean; openMs: number };

/**
 * The agent's end of one connection to the control plane: the shared LinkPeer (socket,
 * streams, heartbeat) with the agent's handlers on it: hello when the socket opens,
 * `welcome` (of our protocol major version) makes it ready, everything else goes to
 * `onMessage`. A fresh one for every attempt; it never reconnects itself (ServerLink does).
 */
export class ControlPlaneLink {
  readonly ended: Promise<SessionEnd>;
  private readonly peer: LinkPeer<ServerMessage, AgentMessage>;
  private readonly clock: Clock;
  private ready = false;
  private helloSent: HelloMessage | undefined;
  /** The server's welcome, once this connection is ready (its `features` say what it takes). */
  welcome: WelcomeMessage | undefined;

  constructor(private readonly opts: SessionOptions) {
    this.clock = opts.clock ?? systemClock;
    const ws = new WebSocket(opts.url, {
      headers: { Authorization: `Bearer ${opts.token}` },
      perMessageDeflate: false,
      maxPayload: MAX_FRAME_BYTES,
      // An all-zero mask: ws then neither copies nor XORs what the agent sends, and the
      // server has nothing to unmask. Valid WebSocket (RFC 6455 requires a mask, not a
      // random one); the randomness protects browsers' intermediaries, not a Node agent.
      generateMask: (mask: Buffer) => void mask.fill(0),
      handshakeTimeout: Math.max(5000, opts.heartbeatTimeoutMs),
    });
    let finish!: (end: SessionEnd) => void;
    this.ended = new Promise((resolve) => {
      let settled = false;
      finish = (end) => {
        if (settled) return;
        settled = true;
        resolve(end);
      };
    });
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      const status = res.statusCode ?? 0;
      const retryAfterMs = parseRetryAfterMs(res.headers['retry-after'], this.clock.now());
      const retry = retryAfterMs === undefined ? {} : { retryAfterMs };
      res.on('data', (c: Buffer) => chunks.length < 16 && chunks.push(c));
      res.on('end', () => {
        finish({ kind: 'rejected', status, detail: describeProblem(Buffer.concat(chunks).toString('utf8')), ...retry });
        ws.terminate();
      });
      res.on('error', () => finish({ kind: 'rejected', status, detail: '', ...retry }));
    });
    ws.on('error', (err) => {
      // Before 'open' this is a failed attempt; after it the peer logs it and 'close' follows.
      if (this.peer.openedAt === undefined) finish({ kind: 'unreachable', error: err.message });
    });
    this.peer = new LinkPeer<ServerMessage, AgentMessage>({
      socket: ws,
      parse: parseServerMessage,
      pullIds: AGENT_PULL_IDS,
      peerName: 'the server',
      log: opts.log,
      clock: this.clock,
      heartbeat: { intervalMs: opts.heartbeatIntervalMs, timeoutMs: opts.heartbeatTimeoutMs },
      pingOnOpen: true,
      ...(opts.compressPolicy ? { compressPolicy: opts.compressPolicy } : {}),
      handlers: {
        opened: () => void this.sayHello(),
        message: (m) => this.onMessage(m),
        closed: (code, reason) => {
          const openedAt = this.peer.openedAt;
          finish({
            kind: 'closed',
            code,
            reason,
            ready: this.ready,
            heartbeatTimeout: this.peer.heartbeatTimedOut,
            openMs: openedAt === undefined ? 0 : this.clock.now() - openedAt,
          });
        },
      },
    });
  }

  get isReady(): boolean {
    return this.ready && this.peer.isOpen;
  }

  /** Sends one message; false (and nothing sent) when the socket is no longer open. */
  sendMessage(message: AgentMessage): boolean {
    return this.peer.send(message);
  }

  close(code: number = CloseCode.normal, reason = ''): void {
    this.peer.close(code, reason);
  }

  /** Pulls `source` from `offset` into `sink`; the receiver's `done` settles when it ends or fails. */
  pull(source: StreamSource, offset: number, sink: ByteSink, opts: { onBytes?: (bytes: number) => void; window?: number } = {}): StreamReceiver {
    return this.peer.pull(source, offset, sink, opts);
  }

  /** The stream the server pushed of `source`, adopted as this side's pull from `offset` (LinkPeer.adoptPush). */
  adoptPush(source: StreamSource, offset: number, sink: ByteSink, opts: { onBytes?: (bytes: number) => void } = {}): StreamReceiver | undefined {
    return this.peer.adoptPush(source, offset, sink, opts);
  }

  /** Declines the stream the server pushed of `source`, if one waits. */
  declinePush(source: StreamSource, why: string): void {
    this.peer.declinePush(source, why);
  }

  /**
   * Answers the server's `stream.pull` with `open()`'s bytes. `open` may throw a StreamError
   * (unknown source, bad offset): the pull is then aborted with its code. A source of
   * unknown size (a relayed response body) leaves `size` out.
   */
  async serve(pull: MessageOf<'stream.pull'>, open: () => Promise<ServedSource>): Promise<void> {
    await this.peer.serve(pull, open);
  }

  private async sayHello(): Promise<void> {
    try {
      const hello = await this.opts.handlers.buildHello();
      this.helloSent = hello;
      this.peer.send(hello);
    } catch (err) {
      this.opts.log.error({ err }, 'could not build hello');
      this.close(1011, 'agent error');
    }
  }

  private onMessage(message: PeerDispatched<ServerMessage>): void | Promise<void> {
    if (message.type !== 'welcome') return this.opts.handlers.onMessage(message, this);
    if (this.ready || !this.helloSent) {
      this.opts.log.warn({}, 'unexpected welcome');
      return;
    }
    if (!isCompatibleProtocol(message.protocol_version)) {
      this.opts.log.error({ theirs: message.protocol_version, ours: PROTOCOL_VERSION }, 'the server speaks another protocol version');
      this.close(CloseCode.protocolMismatch, 'protocol version mismatch');
      return;
    }
    this.ready = true;
    this.welcome = message;
    this.opts.log.info({ board_id: message.board_id, board_name: message.board_name, server_version: message.server_version }, 'link up');
    this.opts.handlers.onReady(this, message, this.helloSent);
  }
}

/** The `detail` (or `title`) of an RFC 9457 problem body, else the body's start. */
function describeProblem(body: string): string {
  try {
    const p = JSON.parse(body) as { detail?: unknown; title?: unknown; code?: unknown };
    const text = [p.code, p.detail ?? p.title].filter((x) => typeof x === 'string').join(': ');
    if (text) return text;
  } catch {
    // not JSON
  }
  return body.slice(0, 200);
}
