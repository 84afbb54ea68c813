import postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { InProcessEventBus, type BusMessages, type BusScope, type BusTopic, type EventBus, type ReplayedTopic } from './event-bus.ts';

/** The one LISTEN/NOTIFY channel every replica of a database shares. */
export const BUS_CHANNEL = 'mm_bus';
/** PostgreSQL caps a NOTIFY payload at 8000 bytes: notes are packed into payloads below this. */
const MAX_PAYLOAD_BYTES = 7000;
const EVENT_PAGE = 500;

/**
 * The `application_name` of a replica's listening connection: a replica is alive while its
 * connection is (a killed process's connection closes with it; replicas/board-sessions.ts
 * looks for it). 63 bytes at most.
 */
export function replicaAppName(replicaId: string): string {
  return Buffer.from(`mm:${replicaId}`).subarray(0, 63).toString();
}

/**
 * What travels in a NOTIFY: small notes, never the data itself when a row holds it. The
 * messages of the replayed topic are named by scope and seq range (the rows are read back);
 * the other topics' messages are a few ids and are carried whole.
 */
type RangeNote = { t: BusTopic; s: number; f: number; l: number };
type Note = RangeNote | { t: 'ping'; n: number } | { t: BusTopic; s: string | number; m: unknown };

interface Envelope {
  /** The replica that published (it ignores its own notes: it delivered them at once). */
  o: string;
  n: Note[];
}

export interface PgEventBusOptions {
  databaseUrl: string;
  db: Db;
  replicaId: string;
  log: Logger;
  /**
   * The topic whose messages are stored rows (operation events): sent as seq ranges and read
   * back by the other replicas, so a dropped notification is healed by the next.
   */
  replayed?: ReplayedTopic | undefined;
  clock?: Clock;
  /** The watchdog sends itself a ping this often… */
  pingIntervalMs?: number;
  /** …and reconnects the listener when none came back for this long. */
  silentAfterMs?: number;
}

/**
 * The event bus of several replicas on one PostgreSQL. `publish` delivers to this
 * replica's subscribers at once (the same order as the in-process bus) and queues a note;
 * the notes of one tick go out together as one NOTIFY (outside any transaction, on the
 * pool), so a burst of log events costs one notification. One dedicated connection per
 * replica LISTENs; another replica's notes are delivered to subscribers here: whole
 * messages as they are, those of the replayed topic (operation events) read back after the
 * last seq delivered here for that scope (so a dropped notification is healed by the next).
 *
 * Replayed messages of other replicas go to the subscribers of that scope only, not to
 * those of every scope (the metrics count what happened on their own replica).
 *
 * A watchdog notifies itself every few seconds; when its pings stop coming back the
 * listening connection is replaced, and what this replica's subscribers care about is read
 * again (`resync`: the scopes they watch; the hooks of onResync, e.g. kicking queues).
 */
export class PgEventBus implements EventBus {
  private readonly local: InProcessEventBus;
  private outbox: Note[] = [];
  private readonly pendingRanges = new Map<number, RangeNote>();
  private flushScheduled = false;
  private sending: Promise<void> = Promise.resolve();
  private listener: postgres.Sql | undefined;
  /** Subscribers per scope of the replayed topic, and the last seq delivered here of each. */
  private readonly watched = new Map<number, number>();
  private readonly delivered = new Map<number, number>();
  private readonly reading = new Map<number, Promise<void>>();
  private readonly resyncHooks: Array<() => void> = [];
  private pings = 0;
  private readonly clock: Clock;
  private lastPingHeardAt: number;
  private watchdog: TimerHandle | undefined;
  private reconnecting = false;
  private closed = false;
  private readonly pingIntervalMs: number;
  private readonly silentAfterMs: number;

  constructor(private readonly opts: PgEventBusOptions) {
    this.local = new InProcessEventBus((err, topic) => opts.log.error({ err, topic }, 'an event bus listener failed'));
    this.pingIntervalMs = opts.pingIntervalMs ?? 5000;
    this.silentAfterMs = opts.silentAfterMs ?? 3 * this.pingIntervalMs;
    this.clock = opts.clock ?? systemClock;
    this.lastPingHeardAt = this.clock.now();
  }

  /** Opens the listening connection (fails if the database cannot be reached) and starts the watchdog. */
  async start(): Promise<void> {
    await this.listen();
    this.lastPingHeardAt = this.clock.now();
    this.watchdog = this.clock.setInterval(() => void this.checkListener(), this.pingIntervalMs);
    this.watchdog.unref();
  }

  /** Called after the listener was replaced (notes may have been missed meanwhile). */
  onResync(hook: () => void): void {
    this.resyncHooks.push(hook);
  }

  publish<T extends BusTopic>(topic: T, scope: string | number, message: BusMessages[T]): void {
    this.local.publish(topic, scope, message);
    if (this.closed) return;
    const replayed = this.opts.replayed;
    if (topic === replayed?.topic && typeof scope === 'number') {
      const seq = replayed.seqOf(message);
      const pending = this.pendingRanges.get(scope);
      if (pending && pending.l < seq) pending.l = seq;
      else if (!pending) {
        const note: RangeNote = { t: topic, s: scope, f: seq, l: seq };
        this.pendingRanges.set(scope, note);
        this.outbox.push(note);
      }
    } else {
      this.outbox.push({ t: topic, s: scope, m: message });
    }
    this.scheduleFlush();
  }

  subscribe<T extends BusTopic>(topic: T, scope: BusScope, listener: (message: BusMessages[T]) => void): () => void {
    const off = this.local.subscribe(topic, scope, listener);
    if (topic !== this.opts.replayed?.topic || typeof scope !== 'number') return off;
    this.watched.set(scope, (this.watched.get(scope) ?? 0) + 1);
    let done = false;
    return () => {
      off();
      if (done) return;
      done = true;
      const n = (this.watched.get(scope) ?? 1) - 1;
      if (n > 0) this.watched.set(scope, n);
      else {
        this.watched.delete(scope);
        this.delivered.delete(scope);
      }
    };
  }

  /** Subscribers right now (tests: nothing leaks). */
  listenerCount(topic: BusTopic, scope?: BusScope): number {
    return this.local.listenerCount(topic, scope);
  }

  /** Shutdown: what is queued is sent, the listener closes. */
  async close(): Promise<void> {
    this.flush();
    this.closed = true;
    this.clock.clearInterval(this.watchdog);
    await this.sending;
    await Promise.allSettled([...this.reading.values()]);
    await this.listener?.end({ timeout: 2 }).catch(() => {});
    this.listener = undefined;
  }

  // ── sending ──────────────────────────────────────────────────────────────────────

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.outbox.length === 0) return;
    const notes = this.outbox;
    this.outbox = [];
    this.pendingRanges.clear();
    const payloads: string[] = [];
    let batch: string[] = [];
    let size = 0;
    const head = `{"o":${JSON.stringify(this.opts.replicaId)},"n":[`;
    for (const note of notes) {
      const json = JSON.stringify(note);
      const bytes = Buffer.byteLength(json) + 1;
      if (batch.length && size + bytes > MAX_PAYLOAD_BYTES) {
        payloads.push(`${head}${batch.join(',')}]}`);
        batch = [];
        size = Buffer.byteLength(head) + 2;
      }
      batch.push(json);
      size += bytes;
    }
    if (batch.length) payloads.push(`${head}${batch.join(',')}]}`);
    // One after the other, so another replica sees them in publish order.
    this.sending = this.sending.then(async () => {
      for (const payload of payloads) {
        try {
          await this.opts.db.execute(sql`select pg_notify(${BUS_CHANNEL}, ${payload})`);
        } catch (err) {
          // The rows are stored; another replica catches up with the next note or its resync.
          this.opts.log.warn({ err }, 'could not notify the other replicas');
        }
      }
    });
  }

  // ── receiving ────────────────────────────────────────────────────────────────────

  private async listen(): Promise<void> {
    const client = postgres(this.opts.databaseUrl, {
      max: 1,
      onnotice: () => {},
      connect_timeout: 10,
      idle_timeout: 0,
      // Other replicas tell this one is alive by this connection (board-sessions.ts).
      connection: { application_name: replicaAppName(this.opts.replicaId) },
    });
    let first = true;
    try {
      await client.listen(
        BUS_CHANNEL,
        (payload) => this.onNotify(payload),
        () => {
          // postgres-js listens again by itself after a dropped connection: notes were missed.
          if (!first) this.resync();
          first = false;
        },
      );
    } catch (err) {
      await client.end({ timeout: 1 }).catch(() => {});
      throw err;
    }
    this.listener = client;
  }

  private onNotify(payload: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (!envelope || !Array.isArray(envelope.n)) return;
    if (envelope.o === this.opts.replicaId) {
      if (envelope.n.some((n) => n.t === 'ping')) this.lastPingHeardAt = this.clock.now();
      return;
    }
    for (const note of envelope.n) {
      if (note.t === 'ping') continue;
      if ('f' in note) this.catchUp(note.s, note.f, note.l);
      else if ('m' in note) this.local.publish(note.t, note.s, note.m as BusMessages[typeof note.t]);
    }
  }

  /**
   * Delivers the stored messages of a scope (an operation's events) another replica wrote,
   * from just after the last one delivered here (or from `from` if none was) up to at least
   * `to`; one read at a time per scope, so they arrive in seq order.
   */
  private catchUp(scope: number, from: number, to: number | undefined): void {
    const replayed = this.opts.replayed;
    if (!replayed || !this.watched.has(scope)) return;
    const previous = this.reading.get(scope) ?? Promise.resolve();
    const next = previous
      .then(async () => {
        let after = this.delivered.get(scope) ?? from - 1;
        while (this.watched.has(scope) && (to === undefined || after < to)) {
          const page = await replayed.read(scope, after, EVENT_PAGE);
          for (const message of page) {
            if (!this.watched.has(scope)) return;
            after = replayed.seqOf(message);
            this.delivered.set(scope, after);
            this.local.deliverScoped(replayed.topic, scope, message);
          }
          if (page.length < EVENT_PAGE) break;
        }
      })
      .catch((err: unknown) => this.opts.log.warn({ err, op_id: scope }, 'could not read the events another replica stored'))
      .finally(() => {
        if (this.reading.get(scope) === next) this.reading.delete(scope);
      });
    this.reading.set(scope, next);
  }

  /** After the listener was replaced: every watched operation is read again, then the hooks run. */
  private resync(): void {
    if (this.closed) return;
    this.opts.log.info({ scopes: this.watched.size }, 'event bus listener reconnected; catching up');
    for (const scope of this.watched.keys()) this.catchUp(scope, 1, undefined);
    for (const hook of this.resyncHooks) {
      try {
        hook();
      } catch (err) {
        this.opts.log.error({ err }, 'an event bus resync hook failed');
      }
    }
  }

  private async checkListener(): Promise<void> {
    if (this.closed || this.reconnecting) return;
    if (this.clock.now() - this.lastPingHeardAt > this.silentAfterMs) {
      this.reconnecting = true;
      this.opts.log.warn({ silent_ms: this.clock.now() - this.lastPingHeardAt }, 'event bus listener went silent; reconnecting');
      const old = this.listener;
      this.listener = undefined;
      void old?.end({ timeout: 1 }).catch(() => {});
      try {
        await this.listen();
        this.lastPingHeardAt = this.clock.now();
        this.resync();
      } catch (err) {
        this.opts.log.warn({ err }, 'event bus listener could not reconnect; retrying');
      } finally {
        this.reconnecting = false;
      }
    }
    this.outbox.push({ t: 'ping', n: ++this.pings });
    this.scheduleFlush();
  }
}
