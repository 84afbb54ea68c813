import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { webhookDeliveries, webhookEvents, webhookSubscriptions } from '../db/schema.ts';
import type { DeliveryStatus, WebhookFormat } from './event-types.ts';

/** All of the webhooks' SQL (docs/webhooks.md): subscriptions, events and their fan-out, the workers' claims. */

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type EventRow = typeof webhookEvents.$inferSelect;
/** The database, or a transaction of it (an event stored in the transaction of what caused it). */
export type DbOrTx = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

// ── subscriptions ─────────────────────────────────────────────────────────────────

export interface NewSubscription {
  url: string;
  events: string[];
  format: WebhookFormat;
  enabled: boolean;
  secretSealed: string;
  createdBy: string | null;
  now: Date;
}

export async function insertSubscription(db: Db, s: NewSubscription): Promise<SubscriptionRow> {
  const [row] = await db
    .insert(webhookSubscriptions)
    .values({ url: s.url, events: s.events, format: s.format, enabled: s.enabled, secretSealed: s.secretSealed, createdBy: s.createdBy, createdAt: s.now, updatedAt: s.now })
    .returning();
  return row!;
}

export async function listSubscriptions(db: Db): Promise<SubscriptionRow[]> {
  return db.select().from(webhookSubscriptions).orderBy(asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id));
}

export async function findSubscription(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
  return row;
}

export interface SubscriptionPatch {
  url?: string | undefined;
  events?: string[] | undefined;
  format?: WebhookFormat | undefined;
  enabled?: boolean | undefined;
}

export async function updateSubscription(db: Db, id: string, patch: SubscriptionPatch, now: Date): Promise<SubscriptionRow | undefined> {
  const [row] = await db
    .update(webhookSubscriptions)
    .set({
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: patch.events } : {}),
      ...(patch.format !== undefined ? { format: patch.format } : {}),
      // Turned on (again) by a person: the server's reason for turning it off goes.
      ...(patch.enabled !== undefined ? { enabled: patch.enabled, disabledReason: null } : {}),
      updatedAt: now,
    })
    .where(eq(webhookSubscriptions.id, id))
    .returning();
  return row;
}

export async function deleteSubscription(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)).returning({ id: webhookSubscriptions.id });
  return rows.length > 0;
}

/** The receiver said 410 Gone: the subscription is turned off, with the reason. */
export async function disableSubscription(db: Db, id: string, reason: string, now: Date): Promise<void> {
  await db.update(webhookSubscriptions).set({ enabled: false, disabledReason: reason, updatedAt: now }).where(eq(webhookSubscriptions.id, id));
}

/** The event types some enabled subscription wants (the sources skip the others' work). */
export async function wantedEventTypes(db: Db): Promise<Set<string>> {
  const rows = await db.select({ events: webhookSubscriptions.events }).from(webhookSubscriptions).where(eq(webhookSubscriptions.enabled, true));
  return new Set(rows.flatMap((r) => r.events));
}

// ── events ────────────────────────────────────────────────────────────────────────

export interface StoreEventOptions {
  /** What caused it, once (`operation.finished:42`): a second store of the same key stores nothing. */
  key?: string | undefined;
  /** When it happened (the body's `timestamp`); default `now`. */
  occurredAt?: Date | undefined;
  /** Only subscriptions that existed by then get it (an event found late by a sweep). */
  notBefore?: Date | undefined;
}

/**
 * Stores an event and one pending delivery per enabled subscription that wants it, in one
 * transaction (a savepoint when `db` is a transaction already). Nothing is stored when no
 * subscription wants it, or when its key was stored before. Returns the event's id and the
 * number of deliveries, or undefined.
 */
export async function storeEvent(
  db: DbOrTx,
  type: string,
  data: Record<string, unknown>,
  at: { now: Date; retryForMs: number },
  opts: StoreEventOptions = {},
): Promise<{ eventId: string; deliveries: number } | undefined> {
  return db.transaction(async (tx) => {
    const subscriptions = await tx
      .select({ id: webhookSubscriptions.id })
      .from(webhookSubscriptions)
      .where(
        and(
          eq(webhookSubscriptions.enabled, true),
          sql`${webhookSubscriptions.events} @> ${JSON.stringify([type])}::jsonb`,
          opts.notBefore ? lte(webhookSubscriptions.createdAt, opts.notBefore) : undefined,
        ),
      );
    if (subscriptions.length === 0) return undefined;
    const [event] = await tx
      .insert(webhookEvents)
      .values({ type, dedupeKey: opts.key ?? null, data, occurredAt: opts.occurredAt ?? at.now, createdAt: at.now })
      .onConflictDoNothing({ target: webhookEvents.dedupeKey })
      .returning({ id: webhookEvents.id });
    if (!event) return undefined;
    await tx.insert(webhookDeliveries).values(
      subscriptions.map((s) => ({
        subscriptionId: s.id,
        eventId: event.id,
        nextAttemptAt: at.now,
        giveUpAt: new Date(at.now.getTime() + at.retryForMs),
        createdAt: at.now,
      })),
    );
    return { eventId: event.id, deliveries: subscriptions.length };
  });
}

/** Whether an event of this key is stored. */
export async function hasEventKey(db: Db, key: string): Promise<boolean> {
  const [row] = await db.select({ id: webhookEvents.id }).from(webhookEvents).where(eq(webhookEvents.dedupeKey, key)).limit(1);
  return row !== undefined;
}

// ── the workers ───────────────────────────────────────────────────────────────────

export interface ClaimedDelivery {
  delivery: DeliveryRow;
  event: EventRow;
  subscription: SubscriptionRow;
}

const dueNow = (now: Date) =>
  and(
    eq(webhookDeliveries.status, 'pending'),
    lte(webhookDeliveries.nextAttemptAt, now),
    or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
    eq(webhookSubscriptions.enabled, true),
  );

/**
 * Takes up to `limit` due deliveries of enabled subscriptions for this replica: the rows are
 * locked with SKIP LOCKED (two replicas claiming at once take different rows) and leased
 * until `now + leaseMs` (no other replica takes them meanwhile; a replica that dies leaves
 * the lease to expire). The attempt is counted here, so one cut short still counts.
 */
export async function claimDue(db: Db, opts: { now: Date; leaseMs: number; replicaId: string; limit: number }): Promise<ClaimedDelivery[]> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
      .where(dueNow(opts.now))
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
      .limit(opts.limit)
      .for('update', { of: webhookDeliveries, skipLocked: true });
    if (due.length === 0) return [];
    const claimed = await tx
      .update(webhookDeliveries)
      .set({
        leaseToken: randomUUID(),
        leasedBy: opts.replicaId,
        leaseUntil: new Date(opts.now.getTime() + opts.leaseMs),
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        lastAttemptAt: opts.now,
      })
      .where(inArray(webhookDeliveries.id, due.map((d) => d.id)))
      .returning();
    const events = await tx.select().from(webhookEvents).where(inArray(webhookEvents.id, [...new Set(claimed.map((d) => d.eventId))]));
    const subscriptions = await tx.select().from(webhookSubscriptions).where(inArray(webhookSubscriptions.id, [...new Set(claimed.map((d) => d.subscriptionId))]));
    const eventById = new Map(events.map((e) => [e.id, e]));
    const subscriptionById = new Map(subscriptions.map((s) => [s.id, s]));
    return claimed.flatMap((delivery) => {
      const event = eventById.get(delivery.eventId);
      const subscription = subscriptionById.get(delivery.subscriptionId);
      return event && subscription ? [{ delivery, event, subscription }] : [];
    });
  });
}

export interface AttemptResult {
  status: DeliveryStatus;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt?: Date | undefined;
  deliveredAt?: Date | undefined;
}

/**
 * Records an attempt's result and lets the lease go, if the lease is still this attempt's
 * (false when it expired and another replica took the delivery: its result is the one kept).
 */
export async function finishAttempt(db: Db, id: number, leaseToken: string, r: AttemptResult): Promise<boolean> {
  const rows = await db
    .update(webhookDeliveries)
    .set({
      status: r.status,
      lastStatusCode: r.lastStatusCode,
      lastError: r.lastError,
      ...(r.nextAttemptAt ? { nextAttemptAt: r.nextAttemptAt } : {}),
      ...(r.deliveredAt ? { deliveredAt: r.deliveredAt } : {}),
      leaseToken: null,
      leasedBy: null,
      leaseUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.leaseToken, leaseToken)))
    .returning({ id: webhookDeliveries.id });
  return rows.length > 0;
}

/** When the next delivery of an enabled subscription falls due (its attempt time, or its lease's end), if any. */
export async function nextDueAt(db: Db): Promise<Date | undefined> {
  const [row] = await db
    .select({
      at: sql<Date | string | null>`min(greatest(${webhookDeliveries.nextAttemptAt}, coalesce(${webhookDeliveries.leaseUntil}, ${webhookDeliveries.nextAttemptAt})))`,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
    .where(and(eq(webhookDeliveries.status, 'pending'), eq(webhookSubscriptions.enabled, true)));
  return row?.at ? new Date(row.at) : undefined;
}

// ── the delivery log ──────────────────────────────────────────────────────────────

export interface DeliveryWithEvent extends DeliveryRow {
  eventType: string;
}

export async function listDeliveries(db: Db, subscriptionId: string, page: { limit: number; offset: number; status?: DeliveryStatus | undefined }): Promise<{ rows: DeliveryWithEvent[]; total: number }> {
  const where = and(eq(webhookDeliveries.subscriptionId, subscriptionId), page.status ? eq(webhookDeliveries.status, page.status) : undefined);
  const [rows, [count]] = await Promise.all([
    db
      .select({ d: webhookDeliveries, eventType: webhookEvents.type })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(desc(webhookDeliveries.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(webhookDeliveries).where(where),
  ]);
  return { rows: rows.map((r) => ({ ...r.d, eventType: r.eventType })), total: count?.n ?? 0 };
}

export async function findDelivery(db: Db, subscriptionId: string, id: number): Promise<DeliveryWithEvent | undefined> {
  const [row] = await db
    .select({ d: webhookDeliveries, eventType: webhookEvents.type })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.id, id)));
  return row ? { ...row.d, eventType: row.eventType } : undefined;
}

/**
 * Sends the delivery again, now, with a fresh retry window: pending again whatever it was.
 * One being sent right now keeps its lease (no second replica sends it at the same time).
 */
export async function redeliver(db: Db, subscriptionId: string, id: number, at: { now: Date; retryForMs: number }): Promise<boolean> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: at.now, giveUpAt: new Date(at.now.getTime() + at.retryForMs), deliveredAt: null })
    .where(and(eq(webhookDeliveries.subscriptionId, subscriptionId), eq(webhookDeliveries.id, id)))
    .returning({ id: webhookDeliveries.id });
  return rows.length > 0;
}

/** Events older than `cutoff` with nothing left to send go, with their deliveries (a batch). */
export async function pruneEvents(db: Db, cutoff: Date, limit = 500): Promise<number> {
  const old = db
    .select({ id: webhookEvents.id })
    .from(webhookEvents)
    .where(
      and(
        lt(webhookEvents.createdAt, cutoff),
        sql`not exists (select 1 from ${webhookDeliveries} where ${webhookDeliveries.eventId} = ${webhookEvents.id} and ${webhookDeliveries.status} = 'pending')`,
      ),
    )
    .limit(limit);
  const rows = await db.delete(webhookEvents).where(inArray(webhookEvents.id, old)).returning({ id: webhookEvents.id });
  return rows.length;
}
