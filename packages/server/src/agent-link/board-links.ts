import { CloseCode, rpcMethods, systemClock, type Clock, type RpcMethod, type RpcParams, type RpcResult, type TimerHandle } from '@mm/protocol';
import { BadGatewayError, boardOffline, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import type { BusMessages, EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { BoardCalls, LocalBoardCaller } from '../replicas/board-calls.ts';
import type { BoardSessions } from '../replicas/board-sessions.ts';
import type { BoardStatus, Presence } from '../boards/board-store.ts';
import type { BoardLink } from './board-link.ts';

export const DEFAULT_RPC_TIMEOUT_MS = 30_000;

interface RebootWatch {
  /** The boot id before the reboot; a hello with another one means the board is back. */
  bootId: string | null;
  timer: TimerHandle;
  waiters: Array<{ resolve(v: { bootId: string }): void; reject(e: Error): void }>;
}

/**
 * The live link of each board, as the rest of the server sees it: presence (one greeted
 * connection per board; the newest wins), reboot watches, and the RPC client
 * (`links.call`). The hub (hub.ts) accepts and greets connections and hands them here;
 * changes of presence go out on the event bus as `board.status`.
 *
 * With several replicas, the links of this one are written to `board_sessions` (and reboot
 * watches to `board_reboots`), so `presenceOf` answers for boards linked elsewhere too, and
 * `call` reaches a board linked elsewhere through `board_calls`. A board that said hello
 * to another replica after its link here was opened closes its link here (a leftover).
 */
export class BoardLinks implements LocalBoardCaller {
  /** The connection that represents each board (after its hello). */
  private readonly live = new Map<string, BoardLink>();
  private readonly reboots = new Map<string, RebootWatch>();
  private remoteCalls: BoardCalls | undefined;
  /** board_reboots writes, one after the other (a watch may end before its row is in). */
  private rebootRows: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: EventBus,
    private readonly defaultRebootTimeoutMs: number,
    private readonly sessions: BoardSessions,
    private readonly log: Logger,
    /** Time for the reboot watches. */
    private readonly clock: Clock = systemClock,
  ) {
    bus.subscribe('board.status', undefined, (m) => this.onStatusElsewhere(m));
  }

  /** Calls to boards linked on other replicas go through these (services.ts wires them). */
  useRemoteCalls(calls: BoardCalls): void {
    this.remoteCalls = calls;
  }

  get replicaId(): string {
    return this.sessions.replicaId;
  }

  /** Another replica greeted the board: a link here opened before that is a leftover; a reboot watched here may be over. */
  private onStatusElsewhere(m: BusMessages['board.status']): void {
    if (m.status !== 'online' || !m.replicaId || m.replicaId === this.replicaId) return;
    const conn = this.live.get(m.boardId);
    if (conn && m.connectedAt && conn.connectedAt.getTime() < Date.parse(m.connectedAt)) {
      conn.log.info({ by_replica: m.replicaId }, 'replaced by a newer connection on another replica');
      conn.close(CloseCode.replaced, 'replaced by a newer connection');
    }
    const watch = this.reboots.get(m.boardId);
    if (watch && m.bootId && watch.bootId !== m.bootId) this.endRebootWatch(m.boardId, watch, { bootId: m.bootId });
  }

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

  /** Presence of boards wherever they are linked: here (as `presence`), else from the session tables. */
  async presenceOf(boardIds: string[]): Promise<Map<string, Presence>> {
    const out = new Map<string, Presence>();
    const elsewhere: string[] = [];
    for (const id of boardIds) {
      const p = this.presence(id);
      out.set(id, p);
      if (p.status === 'offline') elsewhere.push(id);
    }
    if (elsewhere.length) {
      for (const [id, r] of await this.sessions.presence(elsewhere)) {
        out.set(id, { status: r.status, ...(r.lastHeardAt ? { lastHeardAt: r.lastHeardAt } : {}) });
      }
    }
    return out;
  }

  /** `status` wherever the board is linked. */
  async statusAnywhere(boardId: string): Promise<BoardStatus> {
    return (await this.presenceOf([boardId])).get(boardId)?.status ?? 'offline';
  }

  /** Whether a replica is alive (a server-side run it noted on an operation is still its own). */
  isReplicaAlive(replicaId: string): Promise<boolean> {
    return this.sessions.isReplicaAlive(replicaId);
  }

  /** The replica holding the board's link, if it is another live one. */
  async holderElsewhere(boardId: string): Promise<string | undefined> {
    const holder = await this.sessions.holder(boardId);
    return holder === this.replicaId ? undefined : holder;
  }

  isLocal(boardId: string): boolean {
    return this.connection(boardId) !== undefined;
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
    this.sessions.release(conn.boardId, conn.connectedAt).catch((err: unknown) => conn.log.warn({ err }, 'could not remove the board session'));
    this.bus.publish('board.status', conn.boardId, { boardId: conn.boardId, status: 'offline' });
    return true;
  }

  /** The hello of the board's live connection is settled: it takes work (its session row says where). */
  async announceOnline(conn: BoardLink): Promise<void> {
    const { boardId } = conn;
    const bootId = conn.hello?.boot_id ?? null;
    // Closed already (drop() ran and said offline): no row, and no late "online" after that.
    if (this.live.get(boardId) !== conn) return;
    try {
      await this.sessions.claim(boardId, conn.connectedAt, bootId);
      // Closed meanwhile: drop() may have run before the row was in.
      if (this.live.get(boardId) !== conn) {
        await this.sessions.release(boardId, conn.connectedAt);
        return;
      }
    } catch (err) {
      // The heartbeat writes it again; meanwhile other replicas see the board offline.
      conn.log.warn({ err }, 'could not record the board session');
    }
    this.bus.publish('board.status', boardId, {
      boardId,
      status: 'online',
      ...(bootId ? { bootId } : {}),
      replicaId: this.replicaId,
      connectedAt: conn.connectedAt.toISOString(),
    });
  }

  /** The board was deleted: its presence and reboot watch go (the hub closes its connections). */
  forget(boardId: string): void {
    this.live.delete(boardId);
    this.sessions.forget(boardId);
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
        timer: this.clock.setTimeout(
          () => this.endRebootWatch(boardId, w, new GatewayTimeoutError('reboot_timeout', `The board did not come back within ${Math.round(timeoutMs / 1000)} s of its reboot.`)),
          timeoutMs,
        ),
      };
      w.timer.unref();
      this.reboots.set(boardId, w);
      watch = w;
      this.writeRebootRow(() => this.sessions.rebootStarted(boardId, w.bootId, timeoutMs));
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
    this.clock.clearTimeout(watch.timer);
    this.reboots.delete(boardId);
    this.writeRebootRow(() => this.sessions.rebootEnded(boardId));
    for (const w of watch.waiters) {
      if (outcome instanceof Error) w.reject(outcome);
      else w.resolve(outcome);
    }
    this.bus.publish('board.status', boardId, { boardId, status: 'ready' });
  }

  private writeRebootRow(write: () => Promise<void>): void {
    this.rebootRows = this.rebootRows.then(write).catch((err: unknown) => this.log.warn({ err }, 'could not record a reboot watch'));
  }

  /** Shutdown: no reboot timer keeps running. */
  stop(): void {
    for (const w of this.reboots.values()) this.clock.clearTimeout(w.timer);
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
    const timeoutMs = opts.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    const raw = conn
      ? await conn.request(method, checkedParams, timeoutMs, opts.signal)
      : await this.callElsewhere(boardId, method, checkedParams, timeoutMs, opts.signal);
    const parsed = spec.result.safeParse(raw);
    if (!parsed.success) {
      (conn?.log ?? this.log).warn({ board_id: boardId, method, issues: parsed.error.issues }, 'agent answered an rpc with an invalid result');
      throw new BadGatewayError('bad_agent_response', `The board's answer to ${method} does not match its schema.`);
    }
    return parsed.data as RpcResult<M>;
  }

  /** The RPC for a board whose link lives on another replica (board_calls); 503 if none holds it. */
  private async callElsewhere(boardId: string, method: string, params: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const holder = this.remoteCalls ? await this.sessions.holder(boardId) : undefined;
    if (!this.remoteCalls || !holder || holder === this.replicaId) throw boardOffline(boardId);
    return this.remoteCalls.call(boardId, method, params, timeoutMs, signal);
  }

  /** A call another replica asked for (board_calls): only on the link here, never forwarded again. */
  async callLocal(boardId: string, method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (!(method in rpcMethods)) throw new BadGatewayError('unknown_method', `No RPC method ${method}.`);
    if (!this.connection(boardId)) throw boardOffline(boardId);
    return this.call(boardId, method as RpcMethod, params as RpcParams<RpcMethod>, { timeoutMs });
  }
}
