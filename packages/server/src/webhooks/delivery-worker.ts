import type { Clock, TimerHandle } from '@mm/protocol';
import type { WebhookSettings } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { AddressPolicy } from './address-policy.ts';
import { nextState, type AttemptOutcome } from './backoff.ts';
import type { WebhookEvent } from './event-types.ts';
import { sendWebhook } from './http-sender.ts';
import { slackBody, standardBody } from './payloads.ts';
import type { SecretBox } from './secret-box.ts';
import { webhookHeaders } from './signature.ts';
import { claimDue, disableSubscription, finishAttempt, nextDueAt, type ClaimedDelivery } from './webhook-store.ts';

export interface DeliveryWorkerDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  replicaId: string;
  settings: WebhookSettings;
  box: SecretBox;
  /** The receivers allowed and how names resolve (a function: tests swap the resolver). */
  policy: () => AddressPolicy;
  /** Links in Slack messages go here (MM_PUBLIC_URL). */
  dashboardUrl: string;
  userAgent: string;
  random?: () => number;
  /** Deliveries in flight at once on this replica. */
  concurrency?: number;
  /** Looks for due deliveries at least this often (others' events, when the bus note was missed). */
  pollMs?: number;
}

/** The `webhook-id` of an event: the same for every attempt and redelivery, so receivers can drop repeats. */
export const webhookIdOf = (eventId: string) => `msg_${eventId.replace(/-/g, '')}`;

/** The scheme, host and port of a receiver: what logs and the audit name (a URL's path may hold a secret, as Slack's do). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}

/** A stored event as it is sent. */
export function eventOf(row: ClaimedDelivery['event']): WebhookEvent {
  return { id: row.id, type: row.type, timestamp: new Date(row.occurredAt).toISOString(), data: row.data };
}

/**
 * Sends due deliveries (docs/webhooks.md, "Delivery"). Every replica runs one: it claims due
 * rows (SKIP LOCKED, then a lease), sends each at most `concurrency` at a time, records the
 * outcome if its lease still holds, and sleeps until the next delivery falls due (a retry's
 * time or an expired lease), at most `pollMs`; `kick()` wakes it at once (an event stored
 * here or on another replica).
 */
export class DeliveryWorker {
  private inFlight = 0;
  private pumping = false;
  private again = false;
  private stopped = true;
  private timer: TimerHandle | undefined;
  private readonly running = new Set<Promise<void>>();
  /** Cuts the attempts in flight when the worker stops: each is recorded as a failed attempt and retried later. */
  private readonly stopping = new AbortController();
  private readonly concurrency: number;
  private readonly pollMs: number;
  /** The lease outlasts one whole attempt with room to spare: only a replica that died leaves one to expire. */
  readonly leaseMs: number;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.concurrency = deps.concurrency ?? 8;
    this.pollMs = deps.pollMs ?? 5000;
    this.leaseMs = 2 * deps.settings.timeoutMs + 5000;
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Stops claiming; the attempts in flight are cut and recorded (retried later, here or by another replica). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.clock.clearTimeout(this.timer);
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
  }

  kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.again = false;
        while (!this.stopped && this.inFlight < this.concurrency) {
          const claimed = await claimDue(this.deps.db, {
            now: new Date(this.deps.clock.now()),
            leaseMs: this.leaseMs,
            replicaId: this.deps.replicaId,
            limit: this.concurrency - this.inFlight,
          });
          if (claimed.length === 0) break;
          for (const c of claimed) this.track(c);
        }
      } while (this.again && !this.stopped);
      await this.scheduleWake();
    } catch (err) {
      this.deps.log.warn({ err }, 'webhooks: could not claim deliveries');
      this.wakeIn(this.pollMs);
    } finally {
      this.pumping = false;
    }
  }

  private track(c: ClaimedDelivery): void {
    this.inFlight++;
    const p: Promise<void> = this.attempt(c)
      .catch((err: unknown) => this.deps.log.warn({ err, delivery_id: c.delivery.id }, 'webhooks: could not record a delivery attempt'))
      .finally(() => {
        this.inFlight--;
        this.running.delete(p);
        this.kick();
      });
    this.running.add(p);
  }

  private async scheduleWake(): Promise<void> {
    if (this.stopped) return;
    const next = await nextDueAt(this.deps.db);
    const wait = next ? next.getTime() - this.deps.clock.now() : this.pollMs;
    // Not sooner than 100 ms: a row due but locked by another replica's claim is not spun on.
    this.wakeIn(Math.min(this.pollMs, Math.max(100, wait)));
  }

  private wakeIn(ms: number): void {
    if (this.stopped) return;
    this.deps.clock.clearTimeout(this.timer);
    this.timer = this.deps.clock.setTimeout(() => this.kick(), ms);
    this.timer.unref();
  }

  /** One attempt of one claimed delivery, and its outcome recorded. */
  private async attempt(c: ClaimedDelivery): Promise<void> {
    const { delivery, subscription } = c;
    const { clock, settings, log } = this.deps;
    const event = eventOf(c.event);
    let outcome: AttemptOutcome;
    try {
      const secret = this.deps.box.unseal(subscription.secretSealed);
      const body = subscription.format === 'slack' ? slackBody(event, this.deps.dashboardUrl) : standardBody(event);
      outcome = await sendWebhook({
        url: subscription.url,
        body,
        headers: webhookHeaders(secret, webhookIdOf(event.id), Math.floor(clock.now() / 1000), body),
        timeoutMs: settings.timeoutMs,
        policy: this.deps.policy(),
        clock,
        userAgent: this.deps.userAgent,
        signal: this.stopping.signal,
      });
    } catch (err) {
      outcome = { kind: 'failed', statusCode: null, error: (err as Error)?.message ?? String(err) };
    }
    const now = clock.now();
    const next = nextState(outcome, { attempts: delivery.attempts, giveUpAt: new Date(delivery.giveUpAt).getTime() }, now, { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs }, this.deps.random);
    const statusCode = outcome.statusCode;
    const error = outcome.kind === 'failed' ? outcome.error : outcome.kind === 'gone' ? 'the receiver answered 410 Gone: the subscription is turned off' : null;
    const kept = await finishAttempt(this.deps.db, delivery.id, delivery.leaseToken!, {
      status: next.status,
      lastStatusCode: statusCode,
      lastError: next.status === 'failed' && outcome.kind === 'failed' ? `${error} (${next.why})` : error,
      ...(next.status === 'pending' ? { nextAttemptAt: new Date(next.nextAttemptAt) } : {}),
      ...(next.status === 'delivered' ? { deliveredAt: new Date(now) } : {}),
    });
    const fields = { delivery_id: delivery.id, subscription_id: subscription.id, event: event.type, attempt: delivery.attempts, status_code: statusCode };
    if (!kept) {
      log.warn(fields, 'webhooks: an attempt ended without its lease (it expired and another replica took the delivery over, or the subscription was deleted)');
      return;
    }
    if (next.status === 'delivered') log.info(fields, 'webhook delivered');
    else if (next.status === 'pending') log.info({ ...fields, error, next_attempt_at: new Date(next.nextAttemptAt).toISOString() }, 'webhook attempt failed; will retry');
    else log.warn({ ...fields, error, why: next.why }, 'webhook delivery failed');
    if (next.status === 'failed' && next.disableSubscription) {
      await disableSubscription(this.deps.db, subscription.id, 'The receiver answered 410 Gone.', new Date(now));
      log.warn({ subscription_id: subscription.id, receiver: originOf(subscription.url) }, 'webhook subscription turned off: the receiver answered 410 Gone');
    }
  }
}
