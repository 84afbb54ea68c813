import { systemClock, type Clock } from '@mm/protocol';
import { and, asc, count, desc, eq, gte, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { auditEvents } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import { namesFor } from './audit-names.ts';
import type { Principal } from './principal.ts';

/**
 * Actions whose bursts are one entry: a servo drag or a held motor button sends many
 * identical proxied requests. Consecutive ones by the same user on the same target, each
 * within this time of the one before, raise the entry's `count` instead of adding entries.
 */
export const COALESCED_ACTIONS: ReadonlySet<string> = new Set(['device_script.proxy']);
export const COALESCE_WINDOW_MS = 5_000;

/**
 * Unauthenticated calls folded per address (issue 46): the latest entry of the same action
 * from the same address (and on the same target), if its last call was within the window and
 * `same` says the two are alike, counts one more (its `detail` is the first call's). A flood
 * of guessed keys is one entry, not one each; so is an agent asking every 5 s whether its
 * board was approved.
 */
export interface AddressFold {
  windowMs: number;
  /** Only entries this says are foldable, into one whose detail it says the same of. */
  same?: (detail: Record<string, unknown> | null | undefined) => string | undefined;
}
const enrollWait = (d: Record<string, unknown> | null | undefined) => (d?.result === 'pending' || d?.result === 'held' ? String(d.result) : undefined);
export const ADDRESS_COALESCED_ACTIONS: ReadonlyMap<string, AddressFold> = new Map([
  ['board.enroll_refused', { windowMs: 15 * 60_000 }],
  ['board.enroll_throttled', { windowMs: 15 * 60_000 }],
  ['board.enroll', { windowMs: 15 * 60_000, same: enrollWait }],
]);

/**
 * The audit log: append-only. This module is the only code that touches the table and it
 * only inserts and reads.
 */
export interface AuditEntry {
  action: string;
  target?: string | null | undefined;
  /** Who did it; null for an unauthenticated event (a failed sign-in) or auth off. */
  actor: Pick<Principal, 'userId' | 'username'> | null;
  ip: string | null;
  requestId: string | null;
  detail?: Record<string, unknown> | undefined;
}

export interface AuditEventObject {
  id: number;
  at: string;
  user: string | null;
  user_id: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  request_id: string | null;
  detail: Record<string, unknown> | null;
  /** The acting user's name (today's, when the user still exists). */
  user_name: string | null;
  /** The name of what `target` names (board, invocation, device script, user, token) where known. */
  target_name: string | null;
  /** How many identical consecutive actions this entry stands for. */
  count: number;
  /** When the last of them happened (`at` when count is 1). */
  last_at: string;
}

export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    /** When an event happened, and whether it extends a burst. */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Records an event. A failed write is logged (with the whole event, so it is not lost)
   * but does not undo or fail the change it describes, which has already happened.
   */
  async record(e: AuditEntry): Promise<void> {
    try {
      if (COALESCED_ACTIONS.has(e.action) && (await this.extendBurst(e))) return;
      if (ADDRESS_COALESCED_ACTIONS.has(e.action) && (await this.extendAddressBurst(e, ADDRESS_COALESCED_ACTIONS.get(e.action)!))) return;
      await this.db.insert(auditEvents).values({
        at: new Date(this.clock.now()),
        action: e.action,
        target: e.target ?? null,
        userId: e.actor?.userId ?? null,
        username: e.actor?.username ?? null,
        ip: e.ip,
        requestId: e.requestId,
        detail: e.detail ?? null,
      });
    } catch (err) {
      this.log.error({ err, audit: { ...e } }, 'audit event could not be stored');
    }
  }

  /**
   * Counts `e` into the actor's latest entry when that entry is the same action on the same
   * target and its last action was within the window; false when a new entry is needed.
   */
  private async extendBurst(e: AuditEntry): Promise<boolean> {
    const now = new Date(this.clock.now());
    const username = e.actor?.username ?? null;
    const [last] = await this.db
      .select({ id: auditEvents.id, action: auditEvents.action, target: auditEvents.target, at: auditEvents.at, lastAt: auditEvents.lastAt })
      .from(auditEvents)
      .where(username === null ? isNull(auditEvents.username) : eq(auditEvents.username, username))
      .orderBy(desc(auditEvents.id))
      .limit(1);
    if (!last || last.action !== e.action || last.target !== (e.target ?? null)) return false;
    if (now.getTime() - (last.lastAt ?? last.at).getTime() > COALESCE_WINDOW_MS) return false;
    await this.db
      .update(auditEvents)
      .set({ count: sql`${auditEvents.count} + 1`, lastAt: now })
      .where(eq(auditEvents.id, last.id));
    return true;
  }

  /** Counts `e` into the latest entry of its action from its address, if that one's last was within `windowMs`. */
  private async extendAddressBurst(e: AuditEntry, fold: AddressFold): Promise<boolean> {
    if (e.ip === null) return false;
    const kind = fold.same ? fold.same(e.detail) : '';
    if (kind === undefined) return false;
    const now = new Date();
    const target = e.target ?? null;
    const [last] = await this.db
      .select({ id: auditEvents.id, at: auditEvents.at, lastAt: auditEvents.lastAt, detail: auditEvents.detail })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.action, e.action),
          eq(auditEvents.ip, e.ip),
          target === null ? isNull(auditEvents.target) : eq(auditEvents.target, target),
          gte(auditEvents.at, new Date(now.getTime() - 24 * 3_600_000)),
        ),
      )
      .orderBy(desc(auditEvents.id))
      .limit(1);
    if (!last || now.getTime() - (last.lastAt ?? last.at).getTime() > fold.windowMs) return false;
    if (fold.same && fold.same(last.detail) !== kind) return false;
    await this.db
      .update(auditEvents)
      .set({ count: sql`${auditEvents.count} + 1`, lastAt: now })
      .where(eq(auditEvents.id, last.id));
    return true;
  }

  /** The actions that occur in the log, alphabetically (for a filter). */
  async actions(): Promise<string[]> {
    const rows = await this.db.selectDistinct({ action: auditEvents.action }).from(auditEvents).orderBy(asc(auditEvents.action));
    return rows.map((r) => r.action);
  }

  async list(f: { user?: string | undefined; action?: string | undefined; since?: Date | undefined; limit: number; offset: number }) {
    const parts: SQL[] = [];
    if (f.user !== undefined) parts.push(eq(auditEvents.username, f.user));
    if (f.action !== undefined) parts.push(eq(auditEvents.action, f.action));
    if (f.since !== undefined) parts.push(gte(auditEvents.at, f.since));
    const where = parts.length ? and(...parts) : undefined;
    const rows = await this.db.select().from(auditEvents).where(where).orderBy(desc(auditEvents.id)).limit(f.limit).offset(f.offset);
    const [t] = await this.db.select({ n: count() }).from(auditEvents).where(where);
    const names = await namesFor(this.db, rows);
    const events: AuditEventObject[] = rows.map((r, i) => ({
      id: r.id,
      at: r.at.toISOString(),
      user: r.username,
      user_id: r.userId,
      action: r.action,
      target: r.target,
      ip: r.ip,
      request_id: r.requestId,
      detail: r.detail ?? null,
      user_name: names[i]!.user_name,
      target_name: names[i]!.target_name,
      count: r.count,
      last_at: (r.lastAt ?? r.at).toISOString(),
    }));
    return { events, total: Number(t?.n ?? 0) };
  }
}
