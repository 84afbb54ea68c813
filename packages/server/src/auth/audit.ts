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
  ) {}

  /**
   * Records an event. A failed write is logged (with the whole event, so it is not lost)
   * but does not undo or fail the change it describes, which has already happened.
   */
  async record(e: AuditEntry): Promise<void> {
    try {
      if (COALESCED_ACTIONS.has(e.action) && (await this.extendBurst(e))) return;
      await this.db.insert(auditEvents).values({
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
    const now = new Date();
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
