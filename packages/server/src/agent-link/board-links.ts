import { rpcMethods, type RpcMethod, type RpcParams, type RpcResult } from '@mm/protocol';
import { BadGatewayError, boardOffline, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { BoardStatus, Presence } from './board-store.ts';
import type { BoardLink } from './board-link.ts';

export const DEFAULT_RPC_TIMEOUT_MS = 30_000;

interface RebootWatch {
  /** The boot id before the reboot; a hello with another one means the board is back. */
  bootId: string | null;
  timer: NodeJS.Timeout;
  waiters: Array<{ resolve(v: { bootId: string }): void; reject(e: Error): void }>;
}

/**
 * The live link of each board, as the rest of the server sees it: presence (one greeted
 * connection per board; the newest wins), reboot watches, and the RPC client
 * (`links.call`). The hub (hub.ts) accepts and greets connections and hands them here;
 * changes of presence go out on the event bus as `board.status`.
 */
export class BoardLinks {
  /** The connection that represents each board (after its hello). */
  private readonly live = new Map<string, BoardLink>();
  private readonly reboots = new Map<string, RebootWatch>();

  constructor(
    private readonly bus: EventBus,
    private readonly defaultRebootTimeoutMs: number,
  ) {}

  // ── presence ─────────────────────────────────────────────────────────────────────

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

  /** The boot id the board's live connection said hello with, if it is connected. */
  liveBootId(boardId: string): string | null {
    return this.connection(boardId)?.hello?.boot_id ?? null;
  }

  /** A greeted connection now represents its board; returns the one it replaces, if any. */
  adopt(conn: BoardLink): BoardLink | undefined {
    const previous = this.live.get(conn.boardId);
    this.live.set(conn.boardId, conn);
    return previous !== conn ? previous : undefined;
  }

  /** A connection closed; true if it was its board's live one (the board is offline now). */
  drop(conn: BoardLink): boolean {
    if (this.live.get(conn.boardId) !== conn) return false;
    this.live.delete(conn.boardId);
    this.bus.publish('board.status', conn.boardId, { boardId: conn.boardId, status: 'offline' });
    return true;
  }

  /** The hello of the board's live connection is settled: it takes work. */
  announceOnline(boardId: string): void {
    this.bus.publish('board.status', boardId, { boardId, status: 'online' });
  }

  /** The board was deleted: its presence and reboot watch go (the hub closes its connections). */
  forget(boardId: string): void {
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
    const timeoutMs = opts.timeoutMs ?? this.defaultRebootTimeoutMs;
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

  /**
   * A hello arrived with `bootId`: if it ends the board's reboot watch (another boot id),
   * the function that ends it, to call once the hello is settled.
   */
  rebootEndedBy(boardId: string, bootId: string): (() => void) | undefined {
    const watch = this.reboots.get(boardId);
    if (!watch || watch.bootId === bootId) return undefined;
    return () => this.endRebootWatch(boardId, watch, { bootId });
  }

  private endRebootWatch(boardId: string, watch: RebootWatch, outcome: { bootId: string } | Error): void {
    if (this.reboots.get(boardId) !== watch) return;
    clearTimeout(watch.timer);
    this.reboots.delete(boardId);
    for (const w of watch.waiters) {
      if (outcome instanceof Error) w.reject(outcome);
      else w.resolve(outcome);
    }
    this.bus.publish('board.status', boardId, { boardId, status: 'ready' });
  }

  /** Shutdown: no reboot timer keeps running. */
  stop(): void {
    for (const w of this.reboots.values()) clearTimeout(w.timer);
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
    if (!conn) throw boardOffline(boardId);
    const raw = await conn.request(method, checkedParams, opts.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS, opts.signal);
    const parsed = spec.result.safeParse(raw);
    if (!parsed.success) {
      conn.log.warn({ method, issues: parsed.error.issues }, 'agent answered an rpc with an invalid result');
      throw new BadGatewayError('bad_agent_response', `The board's answer to ${method} does not match its schema.`);
    }
    return parsed.data as RpcResult<M>;
  }
}
