import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type WebSocket from 'ws';
import {
  LinkPeer,
  parseAgentMessage,
  SERVER_PULL_IDS,
  systemClock,
  type AgentMessage,
  type ByteSink,
  type ChunkReader,
  type Clock,
  type MessageOf,
  type ServedSource,
  type ServerMessage,
  type StreamDone,
  type StreamSource,
  type WindowBudget,
  type CompressPolicy,
} from '@mm/protocol';
import type { Logger } from '../logger.ts';
import { RpcClient } from './rpc-client.ts';

export type HelloMessage = MessageOf<'hello'>;
export type OperationMessage = MessageOf<'op.progress'> | MessageOf<'op.log'> | MessageOf<'op.output'> | MessageOf<'op.result'>;
export type PullMessage = MessageOf<'stream.pull'>;
/** Messages the link handles itself; every other agent message goes to the hub's extensions. */
type CoreMessage = Extract<AgentMessage, { type: 'hello' | 'error' | `op.${string}` | `stream.${string}` | 'rpc.response' }>;
/** Agent messages of other modules (the device-script relay's `http.*`, `sse.*`): see AgentHub.handleMessages. */
export type RelayMessage = Exclude<AgentMessage, CoreMessage>;

/**
 * A source the link can send on a stream: its bytes from the pull's offset, and its total
 * size (left out when only known at the end, e.g. a relayed HTTP body).
 */
/** Bytes to serve: a stream, or a file read straight into the link's frame buffers. */
export type OpenedSource = { stream: Readable; size?: number } | { reader: ChunkReader; size?: number };

/** An opened source as the link peer serves it. */
function served(opened: OpenedSource): ServedSource {
  const size = opened.size !== undefined ? { size: opened.size } : {};
  return 'reader' in opened ? { reader: opened.reader, ...size } : { source: opened.stream, ...size };
}

/** What a board link asks of the rest of the server (the hub implements it). */
export interface BoardLinkHandlers {
  hello(link: BoardLink, hello: HelloMessage): Promise<void>;
  operationMessage(link: BoardLink, message: OperationMessage): Promise<void>;
  /** Opens a pulled source from the pull's offset; throws a StreamError (e.g. `not_found`) if it cannot. */
  openSource(link: BoardLink, pull: PullMessage): Promise<OpenedSource>;
  /**
   * A pull of the agent's finished, or a stream the server pushed (`pushed`, described as the
   * pull it stands for): for transfer statistics (file bytes read, payload bytes on the wire).
   */
  served(link: BoardLink, pull: PullMessage, bytes: number, ok: boolean, wireBytes: number, pushed?: boolean): void;
  closed(link: BoardLink, code: number, reason: string): void;
  /** A valid message of a type the link does not handle itself (see AgentHub.handleMessages). */
  other(link: BoardLink, message: RelayMessage): void;
}

export interface HeartbeatSettings {
  intervalMs: number;
  timeoutMs: number;
}

/**
 * The server's end of one board's agent link: the shared LinkPeer (socket, streams,
 * heartbeat) with the server's handlers on it. It checks that hello comes first, orders
 * operation messages behind the settled hello, and is the RPC client of the connection.
 * Presence and operations live above it (hub.ts, operations/).
 */
export class BoardLink {
  /** Names this connection in logs (random: no counter shared across connections). */
  readonly serial = randomBytes(4).toString('hex');
  readonly log: Logger;
  hello: HelloMessage | undefined;
  /** When the link opened (by the injected clock): of two links of one board, the later one stands. */
  readonly connectedAt: Date;
  private readonly peer: LinkPeer<AgentMessage, ServerMessage>;
  private state: 'greeting' | 'ready' | 'closed' = 'greeting';
  private readonly rpc: RpcClient;
  /** Operation messages are handled one after the other, and only after hello is settled. */
  private operationChain: Promise<void> = Promise.resolve();
  /**
   * Pulls of content are served only after hello is settled too: `welcome` goes out before
   * the settling, and an agent that resumes a pull at once (a board that just moved here from
   * a killed replica, or back to a restarted server) must not be checked against running
   * operations not yet read back from the database. Other pulls (a relayed request's body)
   * do not wait: settling may take as long as pulling a finished run's output video.
   */
  private helloSettled: Promise<void> = Promise.resolve();
  /**
   * Content this board holds, as far as this connection knows: its hello's `cached`, what it
   * has since pulled whole, and the files of the operations it has since run. Such content is
   * not pushed again (a board that evicted it since pulls it, one round trip later). A push
   * sent whole does not count: the agent may have declined it after its last byte.
   */
  private readonly contentOnBoard = new Set<string>();

  constructor(
    readonly socket: WebSocket,
    readonly boardId: string,
    readonly boardName: string,
    private readonly handlers: BoardLinkHandlers,
    log: Logger,
    heartbeat: HeartbeatSettings,
    opts: {
      clock?: Clock;
      sharedWindowBudget?: WindowBudget;
      onStreamBytes?: (direction: 'sent' | 'received', bytes: number, wireBytes: number) => void;
      compressPolicy?: CompressPolicy;
    } = {},
  ) {
    this.log = log.child({ board_id: boardId, conn: this.serial });
    this.connectedAt = new Date((opts.clock ?? systemClock).now());
    this.rpc = new RpcClient((m) => this.sendMessage(m), opts.clock);
    this.peer = new LinkPeer<AgentMessage, ServerMessage>({
      socket,
      parse: parseAgentMessage,
      pullIds: SERVER_PULL_IDS,
      peerName: 'the agent',
      log: this.log,
      heartbeat,
      // The round trip known before the first pushed stream (its sender presumes a link from it).
      pingOnOpen: true,
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.sharedWindowBudget ? { sharedWindowBudget: opts.sharedWindowBudget } : {}),
      ...(opts.onStreamBytes ? { onStreamBytes: opts.onStreamBytes } : {}),
      ...(opts.compressPolicy ? { compressPolicy: opts.compressPolicy } : {}),
      handlers: {
        message: (m) => this.onMessage(m),
        closed: (code, reason) => {
          this.state = 'closed';
          this.rpc.close();
          this.handlers.closed(this, code, reason);
        },
      },
    });
  }

  get isOpen(): boolean {
    return this.state !== 'closed' && this.peer.isOpen;
  }

  get isReady(): boolean {
    return this.state === 'ready' && this.isOpen;
  }

  /** When something last arrived from the agent (message, frame, ping or pong). */
  get lastHeardAt(): number {
    return this.peer.lastHeardAt;
  }

  /** Resolves once the socket has closed. */
  get closed(): Promise<void> {
    return this.peer.closed.then(() => undefined);
  }

  sendMessage(message: ServerMessage): void {
    this.peer.send(message);
  }

  close(code: number, reason: string): void {
    this.peer.close(code, reason);
  }

  /** Calls an agent RPC method (no schema checks here; see hub.call). */
  request(method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    return this.rpc.request(method, params, timeoutMs, signal);
  }

  /**
   * Pulls `source` from the agent into `sink` (from byte 0); resolves when the sender said
   * `stream.end` and everything is written, rejects with a StreamError otherwise. Aborting
   * `signal` gives up on it (the agent is told) with the signal's reason. `moved`, when
   * given, is told the file bytes written and the payload bytes that crossed the link once
   * the pull settles, whether it succeeded or not (a cut pull's bytes count too).
   */
  pull(
    source: StreamSource,
    sink: ByteSink,
    opts: { onBytes?: (n: number) => void; signal?: AbortSignal; moved?: (bytes: number, wireBytes: number) => void } = {},
  ): Promise<StreamDone> {
    const receiver = this.peer.pull(source, 0, sink, opts.onBytes ? { onBytes: opts.onBytes } : {});
    if (opts.moved) {
      const moved = opts.moved;
      const tell = () => moved(receiver.bytes, receiver.wireBytes);
      receiver.done.then(tell, tell);
    }
    const signal = opts.signal;
    if (!signal) return receiver.done;
    const onAbort = () => {
      const reason: unknown = signal.reason;
      receiver.fail({ code: 'timeout', message: reason instanceof Error ? reason.message : 'the pull was given up' }, true);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const forget = () => signal.removeEventListener('abort', onAbort);
    receiver.done.then(forget, forget);
    return receiver.done;
  }

  /**
   * Pushes content to the agent right behind the op.start that needs it (`stream.push`),
   * saving the pull's round trip: one file after the other, in the order the agent takes
   * them, each as soon as the one before ended, so the next file's bytes follow the last
   * one's without a gap and no push waits unadopted behind a long one. Skips what the board
   * is known to hold; stops when `wanted()` says the operation no longer runs. Nothing when
   * the feature was not negotiated. Each is served and counted as the agent's pull of it
   * would be.
   */
  pushContent(sha256s: readonly string[], wanted: () => boolean): void {
    if (!this.peer.pushNegotiated) return;
    void (async () => {
      for (const sha256 of sha256s) {
        if (!this.isOpen || !wanted()) return;
        if (this.contentOnBoard.has(sha256)) continue;
        const pushed = await this.peer.push({ kind: 'content', sha256 }, async (pull) => served(await this.handlers.openSource(this, pull)));
        if (!pushed) return;
        this.handlers.served(this, pushed.pull, pushed.bytes, pushed.ok, pushed.wireBytes, true);
      }
    })().catch((err: unknown) => this.log.warn({ err }, 'pushing files to the agent failed'));
  }

  /** The board holds this content now (an operation that needed it succeeded): it is not pushed again. */
  noteContentOnBoard(sha256: string): void {
    this.contentOnBoard.add(sha256);
  }

  private onMessage(m: Exclude<AgentMessage, { type: 'stream.credit' | 'stream.end' | 'stream.abort' | 'error' }>): void {
    switch (m.type) {
      case 'hello':
        if (this.state !== 'greeting') {
          this.peer.replyError('unexpected_message', 'hello was already received on this connection', 'hello');
          return;
        }
        this.state = 'ready';
        for (const sha of m.cached) this.contentOnBoard.add(sha);
        this.operationChain = this.handlers.hello(this, m).catch((err: unknown) => {
          this.log.error({ err }, 'could not settle the agent hello');
          this.close(1011, 'hello failed');
        });
        this.helloSettled = this.operationChain;
        return;
      case 'op.progress':
      case 'op.log':
      case 'op.output':
      case 'op.result':
        if (this.state === 'greeting') {
          this.peer.replyError('hello_required', 'the first message must be hello', m.type);
          return;
        }
        this.operationChain = this.operationChain
          .then(() => this.handlers.operationMessage(this, m))
          .catch((err: unknown) => this.log.error({ err, type: m.type }, 'could not handle an operation message'));
        return;
      case 'stream.pull':
        void this.peer
          .serve(m, async () => {
            if (m.source.kind === 'content') await this.helloSettled;
            return served(await this.handlers.openSource(this, m));
          })
          .then(({ bytes, wireBytes, ok }) => {
            if (ok && m.source.kind === 'content') this.contentOnBoard.add(m.source.sha256);
            this.handlers.served(this, m, bytes, ok, wireBytes);
          });
        return;
      case 'rpc.response':
        if (!this.rpc.settle(m)) this.log.debug({ id: m.id }, 'rpc.response for no waiting call');
        return;
      default:
        if (this.state === 'greeting') {
          this.peer.replyError('hello_required', 'the first message must be hello', m.type);
          return;
        }
        this.handlers.other(this, m);
    }
  }
}
