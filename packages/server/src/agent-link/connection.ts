import type { Readable } from 'node:stream';
import WebSocket from 'ws';
import type { z } from 'zod';
import {
  CloseCode,
  decodeFrame,
  parseAgentMessage,
  StreamError,
  StreamReceiver,
  StreamSender,
  type AgentMessage,
  type ByteSink,
  type ErrorInfo,
  type Hello,
  type LinkOutput,
  type OpLog,
  type OpProgress,
  type OpResult,
  type StreamPull,
  type StreamSource,
} from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { RpcClient } from './rpc-client.ts';

export type HelloMessage = z.infer<typeof Hello>;
export type OperationMessage = z.infer<typeof OpProgress> | z.infer<typeof OpLog> | z.infer<typeof OpResult>;
export type PullMessage = z.infer<typeof StreamPull>;
/** Messages the connection handles itself; every other agent message goes to the hub's extensions. */
type CoreMessage = Extract<AgentMessage, { type: 'hello' | 'error' | `op.${string}` | `stream.${string}` | 'rpc.response' }>;
/** Agent messages of other modules (the device-script relay's `http.*`, `sse.*`): see AgentHub.handleMessages. */
export type RelayMessage = Exclude<AgentMessage, CoreMessage>;

/**
 * A source the connection can send on a stream: its bytes from the pull's offset, and its
 * total size (left out when only known at the end, e.g. a relayed HTTP body).
 */
export interface OpenedSource {
  stream: Readable;
  size?: number;
}

/** What a connection asks of the rest of the server (the hub implements it). */
export interface ConnectionHandlers {
  hello(conn: AgentConnection, hello: HelloMessage): Promise<void>;
  operationMessage(conn: AgentConnection, message: OperationMessage): Promise<void>;
  /** Opens a pulled source from the pull's offset; throws a StreamError (e.g. `not_found`) if it cannot. */
  openSource(conn: AgentConnection, pull: PullMessage): Promise<OpenedSource>;
  /** A pull of ours (the agent's side) finished sending: for transfer statistics. */
  served(conn: AgentConnection, pull: PullMessage, bytes: number, ok: boolean): void;
  closed(conn: AgentConnection, code: number, reason: string): void;
  /** A valid message of a type the connection does not handle itself (see AgentHub.handleMessages). */
  other(conn: AgentConnection, message: RelayMessage): void;
}

export interface HeartbeatSettings {
  intervalMs: number;
  timeoutMs: number;
}

/** Above this many bytes queued on the socket, sending a frame waits for the socket to take it. */
const SOCKET_HIGH_WATER_BYTES = 4 * 1024 * 1024;
/**
 * Our pulls take stream ids from the top half of the id space. The two directions are
 * separate id spaces, but `stream.abort` names only an id; agents number their pulls from
 * 1 up, so keeping ours apart makes an abort from the agent unambiguous in practice.
 */
const FIRST_PULL_ID = 0x8000_0000;

let connectionSerial = 0;

/**
 * One agent's WebSocket: parses and dispatches its messages, sends ours, carries the
 * streams in both directions and the RPC calls, and keeps the heartbeat. Presence and
 * operations live above it (hub.ts, operations/).
 */
export class AgentConnection implements LinkOutput {
  readonly serial = ++connectionSerial;
  readonly log: Logger;
  hello: HelloMessage | undefined;
  lastHeardAt = Date.now();
  readonly connectedAt = new Date();
  private state: 'greeting' | 'ready' | 'closed' = 'greeting';
  private readonly rpc: RpcClient;
  private readonly senders = new Map<number, { sender: StreamSender; peerAborted: boolean }>();
  private readonly receivers = new Map<number, StreamReceiver>();
  private nextPullId = FIRST_PULL_ID;
  /** Operation messages are handled one after the other, and only after hello is settled. */
  private operationChain: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly closedPromise: Promise<void>;
  private markClosed!: () => void;

  constructor(
    readonly socket: WebSocket,
    readonly boardId: string,
    readonly boardName: string,
    private readonly handlers: ConnectionHandlers,
    log: Logger,
    heartbeat: HeartbeatSettings,
  ) {
    this.log = log.child({ board_id: boardId, conn: this.serial });
    this.rpc = new RpcClient((m) => this.sendMessage(m));
    this.closedPromise = new Promise((resolve) => (this.markClosed = resolve));

    socket.on('message', (data, isBinary) => {
      this.lastHeardAt = Date.now();
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (isBinary) this.onFrame(buf);
      else this.onText(buf.toString('utf8'));
    });
    socket.on('pong', () => (this.lastHeardAt = Date.now()));
    socket.on('ping', () => (this.lastHeardAt = Date.now()));
    socket.on('error', (err) => this.log.warn({ err }, 'agent link error'));
    socket.on('close', (code, reason) => this.onClose(code, reason.toString('utf8')));

    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeardAt > heartbeat.timeoutMs) {
        this.log.warn({ silent_ms: Date.now() - this.lastHeardAt }, 'agent link silent too long, terminating');
        socket.terminate();
        return;
      }
      if (socket.readyState === WebSocket.OPEN) socket.ping();
    }, heartbeat.intervalMs);
    this.heartbeat.unref();
  }

  get isOpen(): boolean {
    return this.state !== 'closed' && this.socket.readyState === WebSocket.OPEN;
  }

  get isReady(): boolean {
    return this.state === 'ready' && this.isOpen;
  }

  /** Resolves once the socket has closed. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  // ── sending ──────────────────────────────────────────────────────────────────────

  sendMessage(message: { type: string } & Record<string, unknown>): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify(message));
  }

  /**
   * Sends one binary frame. Resolves at once while the socket's queue is short, otherwise
   * once the socket has taken this frame: a fast sender never piles up memory behind a slow link.
   */
  sendFrame(frame: Buffer, payload?: Uint8Array): Promise<void> {
    if (this.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new StreamError({ code: 'link_closed', message: 'the agent link closed' }));
    }
    return new Promise((resolve, reject) => {
      let settled = false;
      // Both fragments are queued in this same tick: nothing can come between them.
      if (payload) this.socket.send(frame, { binary: true, fin: false });
      this.socket.send(payload ?? frame, { binary: true, fin: true }, (err) => {
        if (settled) return;
        settled = true;
        if (err) reject(new StreamError({ code: 'link_closed', message: err.message }));
        else resolve();
      });
      if (!settled && this.socket.bufferedAmount < SOCKET_HIGH_WATER_BYTES) {
        settled = true;
        resolve();
      }
    });
  }

  close(code: number, reason: string): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(code, reason);
  }

  /** Calls an agent RPC method (no schema checks here; see hub.call). */
  request(method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    return this.rpc.request(method, params, timeoutMs, signal);
  }

  /**
   * Pulls `source` from the agent into `sink` (from byte 0); resolves when the sender said
   * `stream.end` and everything is written, rejects with a StreamError otherwise.
   */
  pull(source: StreamSource, sink: ByteSink, opts: { onBytes?: (n: number) => void } = {}): Promise<{ bytes: number; size: number }> {
    if (!this.isOpen) {
      sink.destroy(new Error('link closed'));
      return Promise.reject(new StreamError({ code: 'link_closed', message: 'the agent link closed' }));
    }
    const id = this.nextPullId;
    this.nextPullId = this.nextPullId >= 0xffff_ffff ? FIRST_PULL_ID : this.nextPullId + 1;
    const receiver = new StreamReceiver(this, id, sink, opts.onBytes ? { onBytes: opts.onBytes } : {});
    this.receivers.set(id, receiver);
    receiver.done.then(
      () => this.receivers.delete(id),
      () => this.receivers.delete(id),
    );
    this.sendMessage({ type: 'stream.pull', stream_id: id, source, offset: 0, credit: receiver.window });
    return receiver.done;
  }

  // ── receiving ────────────────────────────────────────────────────────────────────

  private reply(code: string, message: string, refType?: string): void {
    this.sendMessage({ type: 'error', code, message, ...(refType ? { ref_type: refType } : {}) });
  }

  private onText(text: string): void {
    const parsed = parseAgentMessage(text);
    if (!parsed.ok) {
      this.log.warn({ code: parsed.code, error: parsed.error }, 'bad message from agent');
      this.reply(parsed.code, parsed.error, parsed.type);
      return;
    }
    const m = parsed.message;
    switch (m.type) {
      case 'hello':
        if (this.state !== 'greeting') {
          this.reply('unexpected_message', 'hello was already received on this connection', 'hello');
          return;
        }
        this.state = 'ready';
        this.operationChain = this.handlers.hello(this, m).catch((err: unknown) => {
          this.log.error({ err }, 'could not settle the agent hello');
          this.close(1011, 'hello failed');
        });
        return;
      case 'op.progress':
      case 'op.log':
      case 'op.result':
        if (this.state === 'greeting') {
          this.reply('hello_required', 'the first message must be hello', m.type);
          return;
        }
        this.operationChain = this.operationChain
          .then(() => this.handlers.operationMessage(this, m))
          .catch((err: unknown) => this.log.error({ err, type: m.type }, 'could not handle an operation message'));
        return;
      case 'stream.pull':
        void this.servePull(m);
        return;
      case 'stream.credit':
        this.senders.get(m.stream_id)?.sender.addCredit(m.bytes);
        return;
      case 'stream.end':
        this.receivers.get(m.stream_id)?.end(m.size);
        return;
      case 'stream.abort': {
        // Ids of the two directions do not collide (FIRST_PULL_ID), so at most one matches.
        this.receivers.get(m.stream_id)?.fail(m.error);
        const out = this.senders.get(m.stream_id);
        if (out) {
          out.peerAborted = true;
          out.sender.fail(m.error);
        }
        return;
      }
      case 'rpc.response':
        if (!this.rpc.settle(m)) this.log.debug({ id: m.id }, 'rpc.response for no waiting call');
        return;
      case 'error':
        this.log.warn({ code: m.code, message: m.message, ref_type: m.ref_type }, 'agent reported an error');
        return;
      default:
        if (this.state === 'greeting') {
          this.reply('hello_required', 'the first message must be hello', m.type);
          return;
        }
        this.handlers.other(this, m);
    }
  }

  private onFrame(frame: Buffer): void {
    const decoded = decodeFrame(frame);
    if (!decoded.ok) {
      this.log.warn({ error: decoded.error }, 'bad binary frame from agent');
      this.reply('malformed_frame', decoded.error);
      return;
    }
    // Frames of a stream we gave up may still be in flight: they are dropped.
    this.receivers.get(decoded.streamId)?.push(decoded.payload);
  }

  private async servePull(pull: PullMessage): Promise<void> {
    const id = pull.stream_id;
    if (this.senders.has(id)) {
      this.sendMessage({ type: 'stream.abort', stream_id: id, error: { code: 'stream_in_use', message: `stream ${id} is already open` } });
      return;
    }
    const entry = { sender: new StreamSender(this, id, pull.credit), peerAborted: false };
    this.senders.set(id, entry);
    let bytes = 0;
    let ok = false;
    let opened: OpenedSource | undefined;
    try {
      opened = await this.handlers.openSource(this, pull);
      const source = opened.stream;
      // Counted as read, so a stream cut by a dropped link still reports what it moved.
      const counted = (async function* () {
        for await (const chunk of source as AsyncIterable<Buffer>) {
          bytes += chunk.byteLength;
          yield chunk;
        }
      })();
      await entry.sender.pump(counted, opened.size);
      ok = true;
    } catch (err) {
      opened?.stream.destroy();
      const info: ErrorInfo =
        err instanceof StreamError ? err.info : { code: 'read_failed', message: err instanceof Error ? err.message : String(err) };
      if (!entry.peerAborted && this.isOpen) this.sendMessage({ type: 'stream.abort', stream_id: id, error: info });
      if (info.code !== 'link_closed' && !entry.peerAborted) this.log.warn({ stream_id: id, source: pull.source, error: info }, 'stream to agent failed');
    } finally {
      this.senders.delete(id);
      this.handlers.served(this, pull, bytes, ok);
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearInterval(this.heartbeat);
    const info = { code: 'link_closed', message: `the agent link closed (${code}${reason ? ` ${reason}` : ''})` };
    for (const { sender } of this.senders.values()) sender.fail(info);
    for (const r of [...this.receivers.values()]) r.fail(info);
    this.rpc.close();
    this.markClosed();
    this.handlers.closed(this, code, reason);
  }
}

export { CloseCode };
