import { and, count, desc, eq, gte, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { auditEvents } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import type { Principal } from './principal.ts';

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

  async list(f: { user?: string | undefined; action?: string | undefined; since?: Date | undefined; limit: number; offset: number }) {
    const parts: SQL[] = [];
    if (f.user !== undefined) parts.push(eq(auditEvents.username, f.user));
    if (f.action !== undefined) parts.push(eq(auditEvents.action, f.action));
    if (f.since !== undefined) parts.push(gte(auditEvents.at, f.since));
    const where = parts.length ? and(...parts) : undefined;
    const rows = await this.db.select().from(auditEvents).where(where).orderBy(desc(auditEvents.id)).limit(f.limit).offset(f.offset);
    const [t] = await this.db.select({ n: count() }).from(auditEvents).where(where);
    const events: AuditEventObject[] = rows.map((r) => ({
      id: r.id,
      at: r.at.toISOString(),
      user: r.username,
      user_id: r.userId,
      action: r.action,
      target: r.target,
      ip: r.ip,
      request_id: r.requestId,
      detail: r.detail ?? null,
    }));
    return { events, total: Number(t?.n ?? 0) };
  }
}
