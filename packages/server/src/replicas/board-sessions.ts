import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { and, eq, inArray, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/rows.ts';
import { boardCalls, boardReboots, boardSessions } from '../db/schema.ts';
import { replicaAppName } from '../events/pg-event-bus.ts';
import type { Logger } from '../logger.ts';

/** How often a replica refreshes the heartbeat of its board sessions (one statement for all). */
export const SESSION_HEARTBEAT_MS = 5000;
/** A session not refreshed for this long belongs to a dead replica: the board counts as offline. */
export const SESSION_STALE_MS = 3 * SESSION_HEARTBEAT_MS;

export interface RemotePresence {
  status: 'online' | 'rebooting';
  /** The replica holding the link (online), or watching the reboot. */
  replicaId: string;
  /** The session's last heartbeat: about when the board was last heard of. */
  lastHeardAt?: Date;
}

export interface BoardSessionsOptions {
  heartbeatMs?: number;
  staleMs?: number;
  /** Time for the heartbeat. */
  clock?: Clock;
}

/**
 * The `board_sessions` and `board_reboots` tables: where each board's link lives and which
 * boards are rebooting, as every replica sees it. This replica writes its own rows (claim on a
 * settled hello, release on close, one heartbeat statement for all of them) and removes any
 * replica's stale rows; the rest of the server asks `presence` about boards not linked here.
 */
export class BoardSessions {
  /** This replica's sessions: board id → the connection time its row carries. */
  private readonly mine = new Map<string, { connectedAt: Date; bootId: string | null }>();
  private timer: TimerHandle | undefined;
  private readonly clock: Clock;
  private beating: Promise<void> | undefined;
  private exclusive = true;
  readonly heartbeatMs: number;
  readonly staleMs: number;

  constructor(
    private readonly db: Db,
    readonly replicaId: string,
    private readonly log: Logger,
    opts: BoardSessionsOptions = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? SESSION_HEARTBEAT_MS;
    this.clock = opts.clock ?? systemClock;
    this.staleMs = opts.staleMs ?? 3 * this.heartbeatMs;
  }

  /**
   * Startup: leftovers go. `exclusive` (the embedded database: one process) removes every
   * row; otherwise this replica's own (a restart with the same MM_REPLICA_ID) and stale ones.
   */
  async start(opts: { exclusive: boolean }): Promise<void> {
    this.exclusive = opts.exclusive;
    if (opts.exclusive) {
      await this.db.delete(boardSessions);
      await this.db.delete(boardReboots);
      await this.db.delete(boardCalls);
    } else {
      await this.db.delete(boardSessions).where(or(eq(boardSessions.replicaId, this.replicaId), lt(boardSessions.heartbeatAt, this.staleBefore())));
      await this.db.delete(boardReboots).where(or(eq(boardReboots.replicaId, this.replicaId), lt(boardReboots.expiresAt, sql`now()`)));
    }
    this.timer = this.clock.setInterval(() => void this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Shutdown (after the links closed): no heartbeat; this replica's rows go. */
  async stop(): Promise<void> {
    this.clock.clearInterval(this.timer);
    await this.beating;
    this.mine.clear();
    await this.db
      .delete(boardSessions)
      .where(eq(boardSessions.replicaId, this.replicaId))
      .catch((err: unknown) => this.log.warn({ err }, 'could not remove the board sessions'));
  }

  /** The board's hello is settled here: its row says so (replacing another replica's). */
  async claim(boardId: string, connectedAt: Date, bootId: string | null): Promise<void> {
    this.mine.set(boardId, { connectedAt, bootId });
    await this.db
      .insert(boardSessions)
      .values({ boardId, replicaId: this.replicaId, connectedAt, bootId, heartbeatAt: sql`now()` })
      .onConflictDoUpdate({
        target: boardSessions.boardId,
        set: { replicaId: this.replicaId, connectedAt, bootId, heartbeatAt: sql`now()` },
      });
  }

  /** The board's link here closed: its row goes, unless a newer link (here or elsewhere) owns it now. */
  async release(boardId: string, connectedAt: Date): Promise<void> {
    const mine = this.mine.get(boardId);
    if (mine && mine.connectedAt.getTime() === connectedAt.getTime()) this.mine.delete(boardId);
    await this.db
      .delete(boardSessions)
      .where(and(eq(boardSessions.boardId, boardId), eq(boardSessions.replicaId, this.replicaId), eq(boardSessions.connectedAt, connectedAt)));
  }

  /** The board was deleted here (its rows go with it by cascade). */
  forget(boardId: string): void {
    this.mine.delete(boardId);
  }

  /** Boards linked elsewhere and rebooting ones, from the tables (stale rows are offline: absent here). */
  async presence(boardIds: string[]): Promise<Map<string, RemotePresence>> {
    const found = new Map<string, RemotePresence>();
    if (boardIds.length === 0) return found;
    const [sessions, reboots] = await Promise.all([
      this.db
        .select({ boardId: boardSessions.boardId, replicaId: boardSessions.replicaId, heartbeatAt: boardSessions.heartbeatAt })
        .from(boardSessions)
        .where(and(inArray(boardSessions.boardId, boardIds), sql`${boardSessions.heartbeatAt} >= ${this.staleBefore()}`)),
      this.db
        .select({ boardId: boardReboots.boardId, replicaId: boardReboots.replicaId })
        .from(boardReboots)
        .where(and(inArray(boardReboots.boardId, boardIds), sql`${boardReboots.expiresAt} > now()`)),
    ]);
    for (const s of sessions) {
      if (this.leftover(s)) continue;
      found.set(s.boardId, { status: 'online', replicaId: s.replicaId, lastHeardAt: s.heartbeatAt });
    }
    for (const r of reboots) {
      const s = found.get(r.boardId);
      found.set(r.boardId, { status: 'rebooting', replicaId: r.replicaId, ...(s?.lastHeardAt ? { lastHeardAt: s.lastHeardAt } : {}) });
    }
    return found;
  }

  /** The replica holding the board's link, if a live one does. */
  async holder(boardId: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ boardId: boardSessions.boardId, replicaId: boardSessions.replicaId })
      .from(boardSessions)
      .where(and(eq(boardSessions.boardId, boardId), sql`${boardSessions.heartbeatAt} >= ${this.staleBefore()}`));
    return row && !this.leftover(row) ? row.replicaId : undefined;
  }

  /**
   * A row of this replica's for a link it no longer holds: a claim that landed after its link
   * closed (its release follows, or the next heartbeat removes it). This replica knows its own
   * links, so such a row counts for nothing here: a board that went offline does not come
   * back online for a moment in what this replica answers (an auto key's re-enrolment once
   * found the board "linked" in that moment).
   */
  private leftover(row: { boardId: string; replicaId: string }): boolean {
    return row.replicaId === this.replicaId && !this.mine.has(row.boardId);
  }

  /** Whether the replica that noted itself on a server-side run is alive (its listening connection is open). */
  async isReplicaAlive(replicaId: string): Promise<boolean> {
    if (replicaId === this.replicaId) return true;
    if (this.exclusive) return false;
    const list = await queryRows(this.db, sql`select 1 from pg_stat_activity where datname = current_database() and application_name = ${replicaAppName(replicaId)}`);
    return list.length > 0;
  }

  // ── reboots ──────────────────────────────────────────────────────────────────────

  async rebootStarted(boardId: string, bootId: string | null, timeoutMs: number): Promise<void> {
    // The database's time, as every replica compares it with now().
    const expiresAt = sql`now() + ${Math.round(timeoutMs)}::int * interval '1 millisecond'`;
    await this.db
      .insert(boardReboots)
      .values({ boardId, replicaId: this.replicaId, bootId, expiresAt })
      .onConflictDoUpdate({ target: boardReboots.boardId, set: { replicaId: this.replicaId, bootId, startedAt: sql`now()`, expiresAt } });
  }

  async rebootEnded(boardId: string): Promise<void> {
    await this.db.delete(boardReboots).where(and(eq(boardReboots.boardId, boardId), eq(boardReboots.replicaId, this.replicaId)));
  }

  // ── heartbeat ────────────────────────────────────────────────────────────────────

  /** Refreshes this replica's rows in one statement, puts back any that went missing, removes stale ones. */
  async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = (async () => {
      try {
        const refreshed = await this.db
          .update(boardSessions)
          .set({ heartbeatAt: sql`now()` })
          .where(eq(boardSessions.replicaId, this.replicaId))
          .returning({ boardId: boardSessions.boardId });
        const strays = refreshed.filter((r) => !this.mine.has(r.boardId)).map((r) => r.boardId);
        // A claim that landed after its link closed: not ours any more.
        if (strays.length) {
          await this.db.delete(boardSessions).where(and(eq(boardSessions.replicaId, this.replicaId), inArray(boardSessions.boardId, strays)));
        }
        if (refreshed.length - strays.length < this.mine.size) {
          // Removed as stale while this replica was slow (or the database away): claimed again,
          // unless another replica holds the board now.
          const have = new Set(refreshed.map((r) => r.boardId));
          for (const [boardId, s] of this.mine) {
            if (have.has(boardId)) continue;
            await this.db
              .insert(boardSessions)
              .values({ boardId, replicaId: this.replicaId, connectedAt: s.connectedAt, bootId: s.bootId, heartbeatAt: sql`now()` })
              .onConflictDoNothing();
          }
        }
        await this.db.delete(boardSessions).where(lt(boardSessions.heartbeatAt, this.staleBefore()));
        await this.db.delete(boardReboots).where(lt(boardReboots.expiresAt, sql`now()`));
        await this.db.delete(boardCalls).where(lt(boardCalls.expiresAt, sql`now()`));
      } catch (err) {
        this.log.warn({ err }, 'could not refresh the board sessions');
      } finally {
        this.beating = undefined;
      }
    })();
    await this.beating;
  }

  /** Heartbeats older than this are stale (computed by the database: replicas' clocks may differ). */
  private staleBefore() {
    return sql`now() - ${Math.round(this.staleMs)}::int * interval '1 millisecond'`;
  }
}
