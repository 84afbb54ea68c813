import fsp from 'node:fs/promises';
import { HandshakeGate } from './handshake-gate.ts';
import type WebSocket from 'ws';
import {
  CloseCode,
  isCompatibleProtocol,
  LinkFeature,
  openFileReader,
  PROTOCOL_VERSION,
  StreamError,
  systemClock,
  WindowBudget,
  type Clock,
  type StreamSource,
} from '@mm/protocol';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../storage/blob-store.ts';
import { SERVER_VERSION } from '../version.ts';
import type { BoardLinks } from './board-links.ts';
import { recordFacts, recordHello, recordLastSeen } from '../boards/board-store.ts';
import type { BoardWork } from './board-work.ts';
import { BoardLink, type RelayMessage, type BoardLinkHandlers, type HelloMessage, type OpenedSource, type PullMessage } from './board-link.ts';
import type { UploadRegistry, UploadSource } from './uploads.ts';
import { withAccelerator } from '../boards/accelerator-labels.ts';

/** Opens a source kind the hub does not know itself (see registerSource). */
export type SourceOpener = (conn: BoardLink, pull: PullMessage) => Promise<OpenedSource>;
export type MessageHandler = (conn: BoardLink, message: RelayMessage) => void;
/** Told each board's hello once it is welcomed, before the hello is settled; awaited. */
export type HelloHandler = (conn: BoardLink, hello: HelloMessage) => Promise<void>;

export interface AgentHubDeps {
  config: Pick<Config, 'heartbeatIntervalMs' | 'heartbeatTimeoutMs' | 'agentHandshakesMax' | 'receiveWindowsCapBytes' | 'linkCompression'>;
  log: Logger;
  db: Db;
  links: BoardLinks;
  /** The operations service: operation messages, hello settling, pull statistics. */
  work: BoardWork;
  /** Content the boards pull (`content` sources). */
  blobs: BlobStore;
  /** Files offered for one RPC (`upload` sources). */
  uploads: UploadRegistry;
  /** Board deletions reach every replica's links through it. */
  bus: EventBus;
  /** Time for the links' heartbeats and RPC timeouts, the handshake hold and the shutdown wait. */
  clock?: Clock;
}

/**
 * Every agent link of the server: accepts connections, answers and settles hello (then the
 * board's link is live in `links`), serves pulls, routes the agent's messages (operation
 * messages to `work`, others to the modules that claimed them) and closes links on shutdown.
 */
export class AgentHub {
  /** Every open connection, greeted or not (to close them all at shutdown or on revoke). */
  private readonly open = new Set<BoardLink>();
  private stopping = false;
  private readonly extraSources = new Map<string, SourceOpener>();
  private readonly extraMessages = new Map<string, MessageHandler>();
  private readonly helloHandlers: HelloHandler[] = [];
  /** Handshakes in progress (MM_AGENT_HANDSHAKES_MAX): the connect route enters, the settled hello leaves. */
  readonly handshakes: HandshakeGate;
  /** Each greeting connection's place in `handshakes`. */
  private readonly handshakeOf = new WeakMap<BoardLink, () => void>();
  /** The growth of every link's receive windows together (MM_RECEIVE_WINDOWS_MB). */
  readonly receiveWindows: WindowBudget;

  private readonly clock: Clock;
  /** Told the file and wire bytes of every file stream of every link when it ends (the Prometheus counters). */
  countStreamBytes: ((direction: 'sent' | 'received', bytes: number, wireBytes: number) => void) | undefined;

  constructor(private readonly deps: AgentHubDeps) {
    this.clock = deps.clock ?? systemClock;
    this.handshakes = new HandshakeGate(deps.config.agentHandshakesMax, undefined, this.clock);
    this.receiveWindows = new WindowBudget(deps.config.receiveWindowsCapBytes);
    deps.bus.subscribe('board.revoked', undefined, ({ boardId }) => this.closeLinksOf(boardId));
    this.handleMessages(['board.facts'], (conn, message) => {
      if (message.type !== 'board.facts') return;
      recordFacts(deps.db, conn.boardId, withAccelerator(message.facts, message.accelerator)).then(
        () => conn.log.info({ active_pac: message.facts.active_pac, agent_version: message.facts.agent_version }, 'board facts changed'),
        (err: unknown) => conn.log.warn({ err }, 'could not store the board facts'),
      );
    });
  }

  /**
   * Takes over an upgraded socket of an authenticated board; `endHandshake` (its place in
   * `handshakes`) is called once its hello is settled or it closes.
   */
  accept(socket: WebSocket, board: { id: string; name: string }, endHandshake: () => void = () => {}): void {
    if (this.stopping) {
      endHandshake();
      socket.close(1001, 'server shutting down');
      return;
    }
    const { config, log } = this.deps;
    const conn = new BoardLink(socket, board.id, board.name, this.handlers, log.child({ component: 'agent-link' }), {
      intervalMs: config.heartbeatIntervalMs,
      timeoutMs: config.heartbeatTimeoutMs,
    }, {
      sharedWindowBudget: this.receiveWindows,
      clock: this.clock,
      onStreamBytes: (direction, bytes, wireBytes) => this.countStreamBytes?.(direction, bytes, wireBytes),
      ...(config.linkCompression !== 'off' ? { compressPolicy: config.linkCompression } : {}),
    });
    this.open.add(conn);
    this.handshakeOf.set(conn, endHandshake);
    conn.log.info('agent connected');
  }

  /** The board was deleted: its connections close with 4003 and its presence goes, on every replica. */
  revoke(boardId: string): void {
    this.deps.bus.publish('board.revoked', boardId, { boardId });
  }

  private closeLinksOf(boardId: string): void {
    for (const c of this.open) if (c.boardId === boardId) c.close(CloseCode.revoked, 'board deleted');
    this.deps.links.forget(boardId);
  }

  // ── extensions (device-script relay, …) ──────────────────────────────────────────

  /**
   * Routes agent messages of these types (added to the catalog by another module, e.g.
   * `http.response`, `sse.event`) to `handler`. Each arrives parsed and schema-checked,
   * only after the connection's hello; `conn.boardId` says whose it is. Unclaimed types
   * are answered with an `unexpected_message` error.
   */
  handleMessages(types: readonly string[], handler: MessageHandler): void {
    for (const t of types) this.extraMessages.set(t, handler);
  }

  /**
   * Hands every welcomed hello to `handler` (e.g. the device scripts the board runs), in the
   * order registered; the hello is settled after they are done.
   */
  handleHellos(handler: HelloHandler): void {
    this.helloHandlers.push(handler);
  }

  /**
   * Serves `stream.pull` of another source kind (e.g. `http.request_body`): `open` answers
   * the bytes from the pull's offset and the total size, or throws a StreamError.
   */
  registerSource(kind: string, open: SourceOpener): void {
    this.extraSources.set(kind, open);
  }

  // ── streams ──────────────────────────────────────────────────────────────────────

  private async openSource(conn: BoardLink, pull: PullMessage): Promise<OpenedSource> {
    const { source, offset } = pull;
    const extra = this.extraSources.get(source.kind);
    if (extra) return extra(conn, pull);
    const notFound = () => new StreamError({ code: 'not_found', message: `the server holds no ${source.kind} ${describeSource(source)}` });
    let offered: UploadSource | undefined;
    // Content by hash only for the files of the board's running operation, not anything the store holds.
    if (source.kind === 'content') offered = this.deps.work.mayPullContent(conn.boardId, source.sha256) ? { blob: source.sha256 } : undefined;
    else if (source.kind === 'upload') offered = this.deps.uploads.resolve(source.upload_id, conn.boardId);
    if (!offered) throw notFound();
    const size = await this.sizeOf(offered);
    if (size === undefined) throw notFound();
    if (offset > size) throw new StreamError({ code: 'bad_offset', message: `offset ${offset} is past the end (${size} bytes)` });
    let opened: OpenedSource;
    try {
      // Files on this server's disk are read straight into the link's frame buffers.
      if ('blob' in offered) {
        const blobs = this.deps.blobs;
        opened = blobs.openReader ? { reader: await blobs.openReader(offered.blob, offset) } : { stream: await blobs.open(offered.blob, { start: offset }) };
      } else opened = { reader: await openFileReader(offered.file, offset) };
    } catch {
      throw notFound();
    }
    conn.log.debug({ source, offset, size }, 'serving a pull');
    this.deps.work.onServing(conn.boardId, pull, size);
    return { ...opened, size };
  }

  private async sizeOf(source: UploadSource): Promise<number | undefined> {
    if ('blob' in source) return (await this.deps.blobs.stat(source.blob))?.size;
    try {
      return (await fsp.stat(source.file)).size;
    } catch {
      return undefined;
    }
  }

  // ── connection events ────────────────────────────────────────────────────────────

  private readonly handlers: BoardLinkHandlers = {
    hello: (conn, hello) => this.onHello(conn, hello),
    operationMessage: (conn, m) => this.deps.work.onOperationMessage(conn, m),
    openSource: (conn, pull) => this.openSource(conn, pull),
    served: (conn, pull, bytes, ok, wireBytes, pushed) => this.deps.work.onServed(conn.boardId, pull, bytes, ok, wireBytes, pushed),
    closed: (conn, code, reason) => this.onClosed(conn, code, reason),
    other: (conn, message) => {
      const handler = this.extraMessages.get(message.type);
      if (handler) handler(conn, message);
      else conn.sendMessage({ type: 'error', code: 'unexpected_message', message: `the server does not take ${message.type}`, ref_type: message.type });
    },
  };

  private async onHello(conn: BoardLink, hello: HelloMessage): Promise<void> {
    try {
      await this.greet(conn, hello);
    } finally {
      this.handshakeOf.get(conn)?.();
    }
  }

  private async greet(conn: BoardLink, hello: HelloMessage): Promise<void> {
    const { db, log, links, work } = this.deps;
    if (!isCompatibleProtocol(hello.protocol_version)) {
      conn.log.warn({ theirs: hello.protocol_version, ours: PROTOCOL_VERSION }, 'agent speaks another protocol version');
      conn.sendMessage({
        type: 'error',
        code: 'protocol_mismatch',
        message: `the server speaks protocol version ${PROTOCOL_VERSION}, the agent ${hello.protocol_version}`,
        ref_type: 'hello',
      });
      conn.close(CloseCode.protocolMismatch, 'protocol version mismatch');
      return;
    }
    if (!conn.isOpen) return;
    const row = await recordHello(db, conn.boardId, hello, conn.connectedAt);
    if (!row) {
      conn.close(CloseCode.revoked, 'board deleted');
      return;
    }
    if (!conn.isOpen) return;
    conn.hello = hello;
    const previous = links.adopt(conn);
    if (previous) {
      previous.log.info({ by: conn.serial }, 'replaced by a newer connection');
      previous.close(CloseCode.replaced, 'replaced by a newer connection');
    }
    conn.sendMessage({
      type: 'welcome',
      board_id: conn.boardId,
      board_name: row.name,
      server_version: SERVER_VERSION,
      protocol_version: PROTOCOL_VERSION,
      features: [LinkFeature.earlyOutput, LinkFeature.boardTelemetry, LinkFeature.boardFacts, LinkFeature.deviceScripts, LinkFeature.streamPush, ...(this.deps.config.linkCompression !== 'off' ? [LinkFeature.streamCompression] : [])],
    });
    for (const handler of this.helloHandlers) await handler(conn, hello);
    conn.log.info(
      { agent_version: hello.agent_version, boot_id: hello.boot_id, running: hello.running, finished: hello.finished.map((f) => f.op_id) },
      'agent online',
    );
    const endReboot = links.rebootEndedBy(conn.boardId, hello.boot_id);
    await work.settleHello(conn, hello);
    await links.announceOnline(conn);
    endReboot?.();
    log.debug({ board_id: conn.boardId }, 'hello settled');
  }

  private onClosed(conn: BoardLink, code: number, reason: string): void {
    this.open.delete(conn);
    this.handshakeOf.get(conn)?.();
    conn.log.info({ code, reason }, 'agent disconnected');
    if (!this.deps.links.drop(conn)) return; // replaced (or never greeted): presence unchanged
    recordLastSeen(this.deps.db, conn.boardId, new Date(conn.lastHeardAt), code === CloseCode.normal).catch((err: unknown) =>
      conn.log.warn({ err }, 'could not record when the board was last seen'),
    );
  }

  // ── shutdown ─────────────────────────────────────────────────────────────────────

  /** Closes every link with 1001 (going away): agents reconnect once the server is back. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    const all = [...this.open];
    for (const c of all) c.close(1001, 'server shutting down');
    await Promise.race([Promise.all(all.map((c) => c.closed)), new Promise<void>((r) => this.clock.setTimeout(r, 2000).unref())]);
    this.deps.links.stop();
  }
}

function describeSource(source: StreamSource): string {
  if ('sha256' in source) return source.sha256;
  if ('upload_id' in source) return source.upload_id;
  return JSON.stringify(source);
}
