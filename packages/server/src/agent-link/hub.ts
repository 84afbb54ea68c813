import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type WebSocket from 'ws';
import {
  CloseCode,
  isCompatibleProtocol,
  PROTOCOL_VERSION,
  rpcMethods,
  StreamError,
  type RpcMethod,
  type RpcParams,
  type RpcResult,
  type StreamSource,
} from '@mm/protocol';
import type { AppContext } from '../app-context.ts';
import { BadGatewayError, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import { READ_CHUNK_BYTES } from '../storage/content-store.ts';
import { SERVER_VERSION } from '../version.ts';
import { recordHello, recordLastSeen, type BoardStatus, type Presence } from './board-store.ts';
import { BoardLink, type RelayMessage, type BoardLinkHandlers, type HelloMessage, type OpenedSource, type OperationMessage, type PullMessage } from './board-link.ts';
import { UploadRegistry } from './uploads.ts';

export const DEFAULT_RPC_TIMEOUT_MS = 30_000;

interface RebootWatch {
  /** The boot id before the reboot; a hello with another one means the board is back. */
  bootId: string | null;
  timer: NodeJS.Timeout;
  waiters: Array<{ resolve(v: { bootId: string }): void; reject(e: Error): void }>;
}

export interface HubEvents {
  /** A board's agent said hello and its hello was settled. */
  online: [boardId: string];
  offline: [boardId: string];
  /** The board may take work again (back from a reboot, or the reboot wait ended). */
  ready: [boardId: string];
  /** The board started pulling a source of `size` bytes from the pull's offset. */
  serving: [boardId: string, pull: PullMessage, size: number];
  /** Bytes of content the board pulled from us (transfer statistics). */
  served: [boardId: string, pull: PullMessage, bytes: number, ok: boolean];
  /** Any connection closed (greeted or not, replaced or not): per-connection state goes. */
  'connection-closed': [conn: BoardLink];
}

/** Opens a source kind the hub does not know itself (see registerSource). */
export type SourceOpener = (conn: BoardLink, pull: PullMessage) => Promise<OpenedSource>;
export type MessageHandler = (conn: BoardLink, message: RelayMessage) => void;

/**
 * Every agent link of the server: accepts connections, keeps presence (one live connection
 * per board; the newest wins), answers hello, serves and makes pulls, and is the RPC client
 * the rest of the server uses (`ctx.agents.call`).
 */
export class AgentHub extends EventEmitter<HubEvents> {
  private ctxRef: AppContext | undefined;
  /** The connection that represents each board (after its hello). */
  private readonly live = new Map<string, BoardLink>();
  /** Every open connection, greeted or not (to close them all at shutdown or on revoke). */
  private readonly open = new Set<BoardLink>();
  private readonly reboots = new Map<string, RebootWatch>();
  private stopping = false;
  private readonly extraSources = new Map<string, SourceOpener>();
  private readonly extraMessages = new Map<string, MessageHandler>();
  readonly uploads = new UploadRegistry();

  constructor() {
    super();
    this.setMaxListeners(0);
  }

  attach(ctx: AppContext): void {
    this.ctxRef = ctx;
  }

  private get ctx(): AppContext {
    if (!this.ctxRef) throw new Error('AgentHub used before attach(ctx)');
    return this.ctxRef;
  }

  // ── presence ─────────────────────────────────────────────────────────────────────

  /** Takes over an upgraded socket of an authenticated board. */
  accept(socket: WebSocket, board: { id: string; name: string }): void {
    if (this.stopping) {
      socket.close(1001, 'server shutting down');
      return;
    }
    const { config, log } = this.ctx;
    const conn = new BoardLink(socket, board.id, board.name, this.handlers, log.child({ component: 'agent-link' }), {
      intervalMs: config.heartbeatIntervalMs,
      timeoutMs: config.heartbeatTimeoutMs,
    });
    this.open.add(conn);
    conn.log.info('agent connected');
  }

  isOnline(boardId: string): boolean {
    return this.live.get(boardId)?.isReady ?? false;
  }

  /** Online and not rebooting: the board may start its next operation. */
  canRun(boardId: string): boolean {
    return this.isOnline(boardId) && !this.reboots.has(boardId);
  }

  presence(boardId: string): Presence {
    const conn = this.live.get(boardId);
    if (this.reboots.has(boardId)) return { status: 'rebooting', ...(conn ? { lastHeardAt: new Date(conn.lastHeardAt) } : {}) };
    if (conn?.isReady) return { status: 'online', lastHeardAt: new Date(conn.lastHeardAt) };
    return { status: 'offline' };
  }

  status(boardId: string): BoardStatus {
    return this.presence(boardId).status;
  }

  onlineCount(): number {
    let n = 0;
    for (const c of this.live.values()) if (c.isReady) n++;
    return n;
  }

  /** The live connection of a board (operations send op.start/op.cancel/acks through it). */
  connection(boardId: string): BoardLink | undefined {
    const c = this.live.get(boardId);
    return c?.isReady ? c : undefined;
  }

  /** The board was deleted: its connections close with 4003 and its presence goes. */
  revoke(boardId: string): void {
    for (const c of this.open) if (c.boardId === boardId) c.close(CloseCode.revoked, 'board deleted');
    this.live.delete(boardId);
    const watch = this.reboots.get(boardId);
    if (watch) this.endRebootWatch(boardId, watch, new ServiceUnavailableError('board_not_found', 'The board was deleted.'));
  }

  // ── reboots (PAC activation) ─────────────────────────────────────────────────────

  /**
   * The board is about to reboot: it shows `rebooting` and takes no new operation until it
   * says hello with another boot id (`back` resolves) or `timeoutMs` passes (`back` rejects
   * with 504 `reboot_timeout`). Call it before sending the reboot command.
   */
  expectReboot(boardId: string, opts: { timeoutMs?: number; currentBootId?: string | null } = {}): { back: Promise<{ bootId: string }> } {
    const timeoutMs = opts.timeoutMs ?? this.ctx.config.rebootTimeoutMs;
    let watch = this.reboots.get(boardId);
    if (!watch) {
      const w: RebootWatch = {
        bootId: opts.currentBootId !== undefined ? opts.currentBootId : (this.live.get(boardId)?.hello?.boot_id ?? null),
        waiters: [],
        timer: setTimeout(
          () => this.endRebootWatch(boardId, w, new GatewayTimeoutError('reboot_timeout', `The board did not come back within ${Math.round(timeoutMs / 1000)} s of its reboot.`)),
          timeoutMs,
        ),
      };
      w.timer.unref();
      this.reboots.set(boardId, w);
      watch = w;
    }
    const back = new Promise<{ bootId: string }>((resolve, reject) => watch.waiters.push({ resolve, reject }));
    back.catch(() => {});
    return { back };
  }

  /**
   * Ends a board's reboot wait early: it takes work again, and `back` rejects with `error`
   * (e.g. it came back with the boot id it had: it did not reboot). False if none was on.
   */
  endRebootWait(boardId: string, error: Error): boolean {
    const watch = this.reboots.get(boardId);
    if (!watch) return false;
    this.endRebootWatch(boardId, watch, error);
    return true;
  }

  private endRebootWatch(boardId: string, watch: RebootWatch, outcome: { bootId: string } | Error): void {
    if (this.reboots.get(boardId) !== watch) return;
    clearTimeout(watch.timer);
    this.reboots.delete(boardId);
    for (const w of watch.waiters) {
      if (outcome instanceof Error) w.reject(outcome);
      else w.resolve(outcome);
    }
    this.emit('ready', boardId);
  }

  // ── RPC ──────────────────────────────────────────────────────────────────────────

  /**
   * Calls `method` on the board's agent; params and result are checked against `rpcMethods`.
   * Offline board → 503 `board_offline`; no answer within `timeoutMs` (default 30 s) → 504
   * `board_timeout`; the agent answers `ok: false` → 502 with the agent's error code; a
   * result that does not match the schema → 502 `bad_agent_response`.
   */
  async call<M extends RpcMethod>(
    boardId: string,
    method: M,
    params: RpcParams<M>,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<RpcResult<M>> {
    const spec = rpcMethods[method];
    const checkedParams = spec.params.parse(params);
    const conn = this.connection(boardId);
    if (!conn) throw new ServiceUnavailableError('board_offline', 'The board is not connected.', { board_id: boardId });
    const raw = await conn.request(method, checkedParams, opts.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS, opts.signal);
    const parsed = spec.result.safeParse(raw);
    if (!parsed.success) {
      conn.log.warn({ method, issues: parsed.error.issues }, 'agent answered an rpc with an invalid result');
      throw new BadGatewayError('bad_agent_response', `The board's answer to ${method} does not match its schema.`);
    }
    return parsed.data as RpcResult<M>;
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
    let file: string | undefined;
    if (source.kind === 'content') {
      if (await this.ctx.files.has(source.sha256)) file = this.ctx.files.pathOf(source.sha256);
    } else if (source.kind === 'upload') {
      file = this.uploads.resolve(source.upload_id, conn.boardId);
    }
    if (!file) throw new StreamError({ code: 'not_found', message: `the server holds no ${source.kind} ${describeSource(source)}` });
    let size: number;
    try {
      size = (await fsp.stat(file)).size;
    } catch {
      throw new StreamError({ code: 'not_found', message: `the server holds no ${source.kind} ${describeSource(source)}` });
    }
    if (offset > size) throw new StreamError({ code: 'bad_offset', message: `offset ${offset} is past the end (${size} bytes)` });
    conn.log.debug({ source, offset, size }, 'serving a pull');
    this.emit('serving', conn.boardId, pull, size);
    return { stream: fs.createReadStream(file, { start: offset, highWaterMark: READ_CHUNK_BYTES }), size };
  }

  // ── connection events ────────────────────────────────────────────────────────────

  private readonly handlers: BoardLinkHandlers = {
    hello: (conn, hello) => this.onHello(conn, hello),
    operationMessage: (conn, m: OperationMessage) => this.ctx.operations.onAgentMessage(conn, m),
    openSource: (conn, pull) => this.openSource(conn, pull),
    served: (conn, pull, bytes, ok) => this.emit('served', conn.boardId, pull, bytes, ok),
    closed: (conn, code, reason) => this.onClosed(conn, code, reason),
    other: (conn, message) => {
      const handler = this.extraMessages.get(message.type);
      if (handler) handler(conn, message);
      else conn.sendMessage({ type: 'error', code: 'unexpected_message', message: `the server does not take ${message.type}`, ref_type: message.type });
    },
  };

  private async onHello(conn: BoardLink, hello: HelloMessage): Promise<void> {
    const { database, log } = this.ctx;
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
    const row = await recordHello(database.db, conn.boardId, hello, conn.connectedAt);
    if (!row) {
      conn.close(CloseCode.revoked, 'board deleted');
      return;
    }
    if (!conn.isOpen) return;
    conn.hello = hello;
    const previous = this.live.get(conn.boardId);
    this.live.set(conn.boardId, conn);
    if (previous && previous !== conn) {
      previous.log.info({ by: conn.serial }, 'replaced by a newer connection');
      previous.close(CloseCode.replaced, 'replaced by a newer connection');
    }
    conn.sendMessage({
      type: 'welcome',
      board_id: conn.boardId,
      board_name: row.name,
      server_version: SERVER_VERSION,
      protocol_version: PROTOCOL_VERSION,
    });
    conn.log.info(
      { agent_version: hello.agent_version, boot_id: hello.boot_id, running: hello.running, finished: hello.finished.map((f) => f.op_id) },
      'agent online',
    );
    const watch = this.reboots.get(conn.boardId);
    const backFromReboot = watch && watch.bootId !== hello.boot_id;
    await this.ctx.operations.settleHello(conn, hello);
    this.emit('online', conn.boardId);
    if (watch && backFromReboot) this.endRebootWatch(conn.boardId, watch, { bootId: hello.boot_id });
    log.debug({ board_id: conn.boardId }, 'hello settled');
  }

  private onClosed(conn: BoardLink, code: number, reason: string): void {
    this.open.delete(conn);
    conn.log.info({ code, reason }, 'agent disconnected');
    this.emit('connection-closed', conn);
    if (this.live.get(conn.boardId) !== conn) return; // replaced (or never greeted): presence unchanged
    this.live.delete(conn.boardId);
    const at = new Date(conn.lastHeardAt);
    recordLastSeen(this.ctx.database.db, conn.boardId, at).catch((err: unknown) =>
      conn.log.warn({ err }, 'could not record when the board was last seen'),
    );
    this.emit('offline', conn.boardId);
  }

  // ── shutdown ─────────────────────────────────────────────────────────────────────

  /** Closes every link with 1001 (going away): agents reconnect once the server is back. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    const all = [...this.open];
    for (const c of all) c.close(1001, 'server shutting down');
    await Promise.race([Promise.all(all.map((c) => c.closed)), new Promise((r) => setTimeout(r, 2000).unref())]);
    for (const w of this.reboots.values()) clearTimeout(w.timer);
  }
}

function describeSource(source: StreamSource): string {
  if ('sha256' in source) return source.sha256;
  if ('upload_id' in source) return source.upload_id;
  return JSON.stringify(source);
}
