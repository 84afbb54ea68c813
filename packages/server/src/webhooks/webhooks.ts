import os from 'node:os';
import type { Clock, TimerHandle } from '@mm/protocol';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import { checkWebhookUrl, systemResolver, WebhookUrlRefused, type AddressPolicy, type Resolver } from './address-policy.ts';
import { DeliveryWorker } from './delivery-worker.ts';
import { WebhookSources } from './event-sources.ts';
import type { DeliveryStatus, WebhookEventType, WebhookFormat } from './event-types.ts';
import { SecretBox } from './secret-box.ts';
import { newWebhookSecret } from './signature.ts';
import {
  deleteSubscription,
  findDelivery,
  findSubscription,
  insertSubscription,
  listDeliveries,
  listSubscriptions,
  pruneEvents,
  redeliver,
  storeEvent,
  updateSubscription,
  wantedEventTypes,
  type DbOrTx,
  type DeliveryWithEvent,
  type StoreEventOptions,
  type SubscriptionPatch,
  type SubscriptionRow,
} from './webhook-store.ts';

declare module '../events/event-bus.ts' {
  interface BusMessages {
    /** An event was stored: every replica's delivery worker looks for due deliveries. */
    'webhook.due': { eventId: string };
    /** A subscription was created, changed or deleted: every replica reads the wanted event types again. */
    'webhook.subscriptions': { subscriptionId: string };
  }
}

/** The subscription as the API shows it (docs/api.md, "Webhooks"). */
export interface WebhookObject {
  id: string;
  url: string;
  events: string[];
  format: WebhookFormat;
  enabled: boolean;
  /** Why the server turned it off (the receiver answered 410 Gone), or null. */
  disabled_reason: string | null;
  created_at: string;
}

export interface DeliveryObject {
  id: number;
  event: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function toWebhookObject(row: SubscriptionRow): WebhookObject {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    format: row.format,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    created_at: new Date(row.createdAt).toISOString(),
  };
}

export function toDeliveryObject(row: DeliveryWithEvent): DeliveryObject {
  return {
    id: row.id,
    event: row.eventType,
    event_id: row.eventId,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    last_attempt_at: iso(row.lastAttemptAt),
    // Only a pending delivery has a next attempt.
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    delivered_at: iso(row.deliveredAt),
    created_at: new Date(row.createdAt).toISOString(),
  };
}

export interface WebhooksDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  config: Config;
  version: string;
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  random?: () => number;
}

export interface EmitOptions extends StoreEventOptions {
  /** Store it in this transaction (with what caused it); the workers look once it is committed. */
  tx?: DbOrTx | undefined;
}

/**
 * Webhooks (docs/webhooks.md): subscriptions, the events stored for them, and this replica's
 * delivery worker and event sources. `emit` is the one way to tell subscribers something.
 */
export class Webhooks {
  private resolver: Resolver = systemResolver;
  private wanted = new Set<string>();
  private readonly offs: Array<() => void> = [];
  private pruneTimer: TimerHandle | undefined;
  readonly worker: DeliveryWorker;
  readonly sources: WebhookSources;

  private constructor(
    private readonly deps: WebhooksDeps,
    private readonly box: SecretBox,
  ) {
    const settings = deps.config.webhooks;
    this.worker = new DeliveryWorker({
      db: deps.db,
      clock: deps.clock,
      log: deps.log,
      replicaId: deps.config.replicaName,
      settings,
      box,
      policy: () => this.policy(),
      dashboardUrl: this.dashboardUrl(),
      userAgent: `ModelManager-Webhooks/${deps.version}`,
      ...(deps.random ? { random: deps.random } : {}),
    });
    this.sources = new WebhookSources({
      db: deps.db,
      bus: deps.bus,
      clock: deps.clock,
      log: deps.log,
      emit: (db, type, data, opts) => this.emit(type, data, db === deps.db ? opts : { ...opts, tx: db }),
      wanted: () => this.wanted,
      refreshWanted: () => this.refreshWanted(),
      sessionStaleMs: deps.sessionStaleMs,
      offlineGraceMs: settings.offlineGraceMs,
    });
  }

  static async create(deps: WebhooksDeps): Promise<Webhooks> {
    const box = await SecretBox.open({ secretKey: deps.config.webhooks.secretKey, dataDir: deps.config.dataDir });
    return new Webhooks(deps, box);
  }

  /** Starts this replica's delivery worker and event sources. */
  async start(): Promise<void> {
    await this.refreshWanted();
    this.offs.push(
      this.deps.bus.subscribe('webhook.due', undefined, () => this.worker.kick()),
      this.deps.bus.subscribe('webhook.subscriptions', undefined, () => void this.refreshWanted().catch(() => {})),
    );
    this.worker.start();
    this.sources.start();
    // Old events with nothing left to send go with the operations' retention (MM_RETENTION_DAYS).
    if (this.deps.config.retentionMs > 0) {
      this.pruneTimer = this.deps.clock.setInterval(() => {
        pruneEvents(this.deps.db, new Date(this.deps.clock.now() - this.deps.config.retentionMs)).catch((err: unknown) =>
          this.deps.log.warn({ err }, 'webhooks: could not prune old events'),
        );
      }, 3_600_000);
      this.pruneTimer.unref();
    }
  }

  async stop(): Promise<void> {
    for (const off of this.offs.splice(0)) off();
    this.deps.clock.clearInterval(this.pruneTimer);
    await this.sources.stop();
    await this.worker.stop();
  }

  /**
   * Tells the subscribers that want `type` (THE seam for other modules: `regression.detected`,
   * `board.recovered`, …). Stored at once, with a pending delivery per enabled subscription
   * that wants it, in `opts.tx` when given (the event is then committed with what caused it);
   * `opts.key` names the cause so that a second emit of it stores nothing. Nothing is stored
   * when no subscription wants it. Resolves with the event's id, or undefined.
   */
  async emit(type: WebhookEventType | (string & {}), data: Record<string, unknown>, opts: EmitOptions = {}): Promise<string | undefined> {
    const { tx, ...options } = opts;
    const stored = await storeEvent(tx ?? this.deps.db, type, data, { now: new Date(this.deps.clock.now()), retryForMs: this.deps.config.webhooks.retryForMs }, options);
    if (!stored) return undefined;
    this.nudge(stored.eventId, tx !== undefined);
    return stored.eventId;
  }

  /** Wakes the workers of every replica; once more shortly after when the event waits for a transaction to commit. */
  private nudge(eventId: string, afterCommit: boolean): void {
    const tell = () => this.deps.bus.publish('webhook.due', eventId, { eventId });
    if (!afterCommit) return tell();
    queueMicrotask(tell);
    this.deps.clock.setTimeout(tell, 250).unref();
  }

  // ── subscriptions (the routes) ────────────────────────────────────────────────

  /** The receivers allowed (MM_WEBHOOK_ALLOW_PRIVATE) and how names resolve. */
  policy(): AddressPolicy {
    return { allowPrivate: this.deps.config.webhooks.allowPrivate, resolve: this.resolver };
  }

  /** Tests: a resolver whose answers they choose (a name that resolves to a private address, or changes its answer). */
  setResolver(resolver: Resolver): void {
    this.resolver = resolver;
  }

  /** Where Slack messages link to: MM_PUBLIC_URL, else this server's own address. */
  dashboardUrl(): string {
    const { publicUrl, host, port } = this.deps.config;
    if (publicUrl) return publicUrl;
    const name = host === '0.0.0.0' || host === '::' ? os.hostname() : host.includes(':') ? `[${host}]` : host;
    return `http://${name}:${port}`;
  }

  /** Throws WebhookUrlRefused (400 `webhook_url_refused`). */
  async checkUrl(url: string): Promise<void> {
    await checkWebhookUrl(url, this.policy());
  }

  async list(): Promise<WebhookObject[]> {
    return (await listSubscriptions(this.deps.db)).map(toWebhookObject);
  }

  async get(id: string): Promise<WebhookObject | undefined> {
    const row = await findSubscription(this.deps.db, id);
    return row && toWebhookObject(row);
  }

  /** A new subscription and its secret (shown this once; stored sealed). */
  async create(input: { url: string; events: string[]; format: WebhookFormat; enabled: boolean }, createdBy: string | null): Promise<WebhookObject & { secret: string }> {
    await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    const row = await insertSubscription(this.deps.db, {
      ...input,
      events: [...new Set(input.events)],
      secretSealed: this.box.seal(secret),
      createdBy,
      now: new Date(this.deps.clock.now()),
    });
    this.subscriptionsChanged(row.id);
    return { ...toWebhookObject(row), secret };
  }

  async update(id: string, patch: SubscriptionPatch): Promise<WebhookObject | undefined> {
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    const row = await updateSubscription(this.deps.db, id, { ...patch, ...(patch.events ? { events: [...new Set(patch.events)] } : {}) }, new Date(this.deps.clock.now()));
    if (!row) return undefined;
    this.subscriptionsChanged(id);
    // Turned on again: what it has pending may be due.
    if (patch.enabled) this.worker.kick();
    return toWebhookObject(row);
  }

  async remove(id: string): Promise<boolean> {
    const gone = await deleteSubscription(this.deps.db, id);
    if (gone) this.subscriptionsChanged(id);
    return gone;
  }

  async deliveries(id: string, page: { limit: number; offset: number; status?: DeliveryStatus | undefined }): Promise<{ deliveries: DeliveryObject[]; total: number }> {
    const { rows, total } = await listDeliveries(this.deps.db, id, page);
    return { deliveries: rows.map(toDeliveryObject), total };
  }

  /** Sends a delivery again now (a fresh retry window); undefined if there is no such delivery of this subscription. */
  async redeliver(id: string, deliveryId: number): Promise<DeliveryObject | undefined> {
    const now = new Date(this.deps.clock.now());
    if (!(await redeliver(this.deps.db, id, deliveryId, { now, retryForMs: this.deps.config.webhooks.retryForMs }))) return undefined;
    const row = await findDelivery(this.deps.db, id, deliveryId);
    this.deps.bus.publish('webhook.due', row?.eventId ?? String(deliveryId), { eventId: row?.eventId ?? '' });
    return row && toDeliveryObject(row);
  }

  private subscriptionsChanged(id: string): void {
    void this.refreshWanted().catch(() => {});
    this.deps.bus.publish('webhook.subscriptions', id, { subscriptionId: id });
  }

  private async refreshWanted(): Promise<void> {
    this.wanted = await wantedEventTypes(this.deps.db);
  }
}

export { WebhookUrlRefused };

/**
 * `emitWebhookEvent(ctx.webhooks, type, data, opts)`: the same as `webhooks.emit` (the name
 * other modules look for; docs/webhooks.md, "Telling subscribers from another module").
 */
export function emitWebhookEvent(webhooks: Pick<Webhooks, 'emit'>, type: WebhookEventType | (string & {}), data: Record<string, unknown>, opts: EmitOptions = {}): Promise<string | undefined> {
  return webhooks.emit(type, data, opts);
}
