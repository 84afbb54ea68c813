import WebSocket from 'ws';
import {
  catalog,
  CloseCode,
  decodeFrame,
  type ByteSink,
  type ErrorInfo,
  type LinkOutput,
  MAX_FRAME_BYTES,
  type MessageOf,
  type MessageType,
  parseServerMessage,
  type ServerMessage,
  StreamError,
  StreamReceiver,
  StreamSender,
  type StreamSource,
} from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { startHeartbeat } from './heartbeat.ts';

export type HelloMessage = MessageOf<'hello'>;
export type WelcomeMessage = MessageOf<'welcome'>;
/** Server messages the connection does not settle itself (operations, RPC, pulls of produced content). */
export type DispatchedMessage = Exclude<ServerMessage, { type: 'welcome' | 'error' | 'stream.end' | 'stream.credit' | 'stream.abort' }>;
/** Any message the agent may send. */
export type OutgoingMessage = { type: string } & Record<string, unknown>;

export interface SessionHandlers {
  /** Built when the socket opens (it reports the state of that moment). */
  buildHello(): Promise<HelloMessage>;
  /** The server answered `welcome`: the link is up for everything else. */
  onReady(connection: AgentConnection, welcome: WelcomeMessage, hello: HelloMessage): void;
  onMessage(message: DispatchedMessage, connection: AgentConnection): void | Promise<void>;
}

export interface SessionOptions {
  url: string;
  token: string;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  log: Logger;
  handlers: SessionHandlers;
}

export type SessionEnd =
  /** The server refused the upgrade (401 for a bad token…). */
  | { kind: 'rejected'; status: number; detail: string }
  /** No connection could be made (refused, DNS, TLS, handshake timeout). */
  | { kind: 'unreachable'; error: string }
  /** The link was up and closed; `ready` says whether it got as far as `welcome`. */
  | { kind: 'closed'; code: number; reason: string; ready: boolean; heartbeatTimeout: boolean; openMs: number };

/**
 * Pull ids the agent chooses: 1 up to 0x7fffffff. The two directions are separate id
 * spaces, but `stream.abort` travels both ways naming only an id; the server numbers its
 * pulls from 0x80000000 up, so the two never clash.
 */
const FIRST_PULL_ID = 1;
const LAST_PULL_ID = 0x7fff_ffff;

/**
 * One WebSocket connection to the control plane: hello/welcome, message dispatch, the
 * heartbeat, and the file streams open on it. A fresh one for every attempt; it never
 * reconnects itself. When it closes, every stream open on it fails (`link_closed`).
 */
export class AgentConnection implements LinkOutput {
  readonly ended: Promise<SessionEnd>;
  private readonly ws: WebSocket;
  private readonly log: Logger;
  private ready = false;
  private heartbeatTimedOut = false;
  private openedAt = 0;
  private nextPullId = FIRST_PULL_ID;
  private readonly pulls = new Map<number, StreamReceiver>();
  private readonly sends = new Map<number, StreamSender>();
  /** Streams this side serves that the server aborted (they need no abort back). */
  private readonly abortedByPeer = new Set<number>();
  private helloSent: HelloMessage | undefined;
  private stopHeartbeat: (() => void) | undefined;

  constructor(private readonly opts: SessionOptions) {
    this.log = opts.log;
    this.ws = new WebSocket(opts.url, {
      headers: { Authorization: `Bearer ${opts.token}` },
      perMessageDeflate: false,
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: Math.max(5000, opts.heartbeatTimeoutMs),
    });
    this.ended = new Promise((resolve) => this.wire(resolve));
  }

  get isReady(): boolean {
    return this.ready && this.ws.readyState === WebSocket.OPEN;
  }

  private wire(resolve: (end: SessionEnd) => void): void {
    const ws = this.ws;
    let settled = false;
    const finish = (end: SessionEnd) => {
      if (settled) return;
      settled = true;
      this.stopHeartbeat?.();
      this.failStreams({ code: 'link_closed', message: 'the link to the server closed' });
      resolve(end);
    };

    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.length < 16 && chunks.push(c));
      res.on('end', () => {
        finish({ kind: 'rejected', status: res.statusCode ?? 0, detail: describeProblem(Buffer.concat(chunks).toString('utf8')) });
        ws.terminate();
      });
      res.on('error', () => finish({ kind: 'rejected', status: res.statusCode ?? 0, detail: '' }));
    });
    ws.on('error', (err) => {
      // Before 'open' this is a failed attempt; after it, 'close' follows and says how.
      if (!this.openedAt) finish({ kind: 'unreachable', error: err.message });
      else this.log.warn({ err }, 'link error');
    });
    ws.on('open', () => {
      this.openedAt = Date.now();
      this.stopHeartbeat = startHeartbeat(ws, {
        intervalMs: this.opts.heartbeatIntervalMs,
        timeoutMs: this.opts.heartbeatTimeoutMs,
        onTimeout: (silentMs) => {
          this.heartbeatTimedOut = true;
          this.log.warn({ silent_ms: silentMs }, 'nothing heard from the server: closing the dead link');
        },
      });
      void this.sayHello();
    });
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) this.handleFrame(buf);
      else void this.handleText(buf.toString('utf8'));
    });
    ws.on('close', (code, reason) => {
      finish({
        kind: 'closed',
        code,
        reason: reason.toString('utf8'),
        ready: this.ready,
        heartbeatTimeout: this.heartbeatTimedOut,
        openMs: this.openedAt ? Date.now() - this.openedAt : 0,
      });
    });
  }

  private async sayHello(): Promise<void> {
    try {
      const hello = await this.opts.handlers.buildHello();
      this.helloSent = hello;
      this.sendMessage(hello);
    } catch (err) {
      this.log.error({ err }, 'could not build hello');
      this.close(1011, 'agent error');
    }
  }

  // ── LinkOutput ───────────────────────────────────────────────────────────────────

  /** Sends one message; false (and nothing sent) when the socket is no longer open. */
  sendMessage(message: OutgoingMessage): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  sendFrame(frame: Buffer, payload?: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState !== WebSocket.OPEN) return reject(new StreamError({ code: 'link_closed', message: 'the link to the server closed' }));
      // Header and payload as two fragments of one message, queued in this same tick.
      if (payload) this.ws.send(frame, { binary: true, fin: false });
      this.ws.send(payload ?? frame, { binary: true, fin: true }, (err) => (err ? reject(err) : resolve()));
    });
  }

  close(code: number = CloseCode.normal, reason = ''): void {
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(code, reason);
    // A peer that does not answer the close handshake must not hold the session open.
    setTimeout(() => this.ws.terminate(), 2000).unref();
  }

  // ── streams ──────────────────────────────────────────────────────────────────────

  /** Pulls `source` from `offset` into `sink`; the receiver's `done` settles when it ends or fails. */
  pull(source: StreamSource, offset: number, sink: ByteSink, opts: { onBytes?: (bytes: number) => void; window?: number } = {}): StreamReceiver {
    const id = this.allocatePullId();
    const receiver = new StreamReceiver(this, id, sink, opts);
    this.pulls.set(id, receiver);
    const forget = () => this.pulls.delete(id);
    receiver.done.then(forget, forget);
    if (!this.sendMessage({ type: 'stream.pull', stream_id: id, source, offset, credit: receiver.window })) {
      receiver.fail({ code: 'link_closed', message: 'the link to the server closed' });
    }
    return receiver;
  }

  /**
   * Answers the server's `stream.pull` with `open()`'s bytes. `open` may throw a StreamError
   * (unknown source, bad offset): the pull is then aborted with its code. A source of
   * unknown size (a relayed response body) leaves `size` out.
   */
  async serve(pull: MessageOf<'stream.pull'>, open: () => Promise<{ source: AsyncIterable<Uint8Array> & { destroy?: () => void }; size?: number }>): Promise<void> {
    const id = pull.stream_id;
    if (this.sends.has(id)) {
      this.sendMessage({ type: 'stream.abort', stream_id: id, error: { code: 'stream_in_use', message: `stream ${id} is already open` } });
      return;
    }
    const sender = new StreamSender(this, id, pull.credit);
    this.sends.set(id, sender);
    let opened: Awaited<ReturnType<typeof open>> | undefined;
    try {
      opened = await open();
      await sender.pump(opened.source, opened.size);
    } catch (err) {
      const info: ErrorInfo = err instanceof StreamError ? err.info : { code: 'read_failed', message: err instanceof Error ? err.message : String(err) };
      // The puller's own abort and a closed link need no answer.
      if (info.code !== 'link_closed' && !this.abortedByPeer.has(id)) this.sendMessage({ type: 'stream.abort', stream_id: id, error: info });
      this.log.info({ stream_id: id, error: info }, 'stream to the server ended early');
    } finally {
      opened?.source.destroy?.();
      this.sends.delete(id);
      this.abortedByPeer.delete(id);
    }
  }

  private allocatePullId(): number {
    for (;;) {
      const id = this.nextPullId;
      this.nextPullId = id >= LAST_PULL_ID ? FIRST_PULL_ID : id + 1;
      if (!this.pulls.has(id)) return id;
    }
  }

  private failStreams(info: ErrorInfo): void {
    for (const r of this.pulls.values()) r.fail(info);
    for (const s of this.sends.values()) s.fail(info);
  }

  // ── receiving ────────────────────────────────────────────────────────────────────

  private handleFrame(frame: Buffer): void {
    const decoded = decodeFrame(frame);
    if (!decoded.ok) {
      this.log.warn({ error: decoded.error }, 'bad binary frame');
      this.sendMessage({ type: 'error', code: 'malformed_frame', message: decoded.error });
      return;
    }
    const receiver = this.pulls.get(decoded.streamId);
    // Data still in flight for a stream this side already gave up is expected; drop it.
    if (receiver) receiver.push(decoded.payload);
    else this.log.debug({ stream_id: decoded.streamId }, 'data frame for no open stream');
  }

  private async handleText(text: string): Promise<void> {
    const parsed = parseServerMessage(text);
    if (!parsed.ok) {
      const detail = parsed.code === 'malformed_message' && parsed.type ? (describeInvalid(text, parsed.type) ?? parsed.error) : parsed.error;
      this.log.warn({ code: parsed.code, error: detail, ref_type: parsed.type }, 'message not understood');
      // An `error` is never answered, even a malformed one: two peers could loop on it.
      if (parsed.type !== 'error') {
        this.sendMessage({ type: 'error', code: parsed.code, message: detail, ...(parsed.type ? { ref_type: parsed.type } : {}) });
      }
      return;
    }
    const msg = parsed.message;
    switch (msg.type) {
      case 'welcome':
        if (this.ready || !this.helloSent) {
          this.log.warn('unexpected welcome');
          return;
        }
        this.ready = true;
        this.log.info({ board_id: msg.board_id, board_name: msg.board_name, server_version: msg.server_version }, 'link up');
        this.opts.handlers.onReady(this, msg, this.helloSent);
        return;
      case 'error':
        this.log.warn({ code: msg.code, error: msg.message, ref_type: msg.ref_type }, 'the server reported an error');
        return;
      case 'stream.end': {
        const r = this.pulls.get(msg.stream_id);
        if (r) r.end(msg.size);
        else this.log.debug({ stream_id: msg.stream_id }, 'stream.end for no open pull');
        return;
      }
      case 'stream.credit':
        this.sends.get(msg.stream_id)?.addCredit(msg.bytes);
        return;
      case 'stream.abort': {
        const r = this.pulls.get(msg.stream_id);
        const s = this.sends.get(msg.stream_id);
        if (r) r.fail(msg.error);
        else if (s) {
          this.abortedByPeer.add(msg.stream_id);
          s.fail(msg.error);
        }
        return;
      }
      default:
        try {
          await this.opts.handlers.onMessage(msg, this);
        } catch (err) {
          this.log.error({ err, type: msg.type }, 'handling a message failed');
          this.sendMessage({ type: 'error', code: 'internal_error', message: err instanceof Error ? err.message : String(err), ref_type: msg.type });
        }
    }
  }
}

/**
 * Which fields of a message of a known type are wrong. The union the catalog parses server
 * messages with reports only "Invalid input"; the type's own schema names the fields.
 */
function describeInvalid(text: string, type: string): string | undefined {
  if (!Object.hasOwn(catalog, type)) return undefined;
  const result = catalog[type as MessageType].safeParse(JSON.parse(text));
  if (result.success) return `${type} is not a message the server sends`;
  return `${type}: ${result.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; ')}`;
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
