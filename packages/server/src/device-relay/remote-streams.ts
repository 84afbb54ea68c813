import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { relayEvents, relaySubscriptions } from '../db/schema.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { StreamRelay, StreamSharing, StreamTarget } from './stream-relay.ts';

/** Rows of relay_subscriptions not refreshed for this long are dropped (their replica died). */
const WANT_STALE_MS = 15_000;
/** Shared events are kept this long for replicas catching up, then pruned. */
const EVENTS_KEPT_MS = 60_000;

const keyOf = (t: { boardId: string; scriptId: string }) => `${t.boardId}/${t.scriptId}`;

/**
 * Device-script streams across replicas (docs/replicas.md): a replica whose clients watch a
 * board linked elsewhere keeps a `relay_subscriptions` row (refreshed every few seconds) and
 * says so (`relay.want`); the replica holding the link keeps ONE upstream subscription while
 * any fresh row (or a client of its own) wants it, and stores what the upstream sends in
 * `relay_events` with a `relay.event` note; the watching replicas read the new rows and
 * write them to their clients.
 */
export class RemoteStreams implements StreamSharing {
  private readonly lastRead = new Map<string, number>();
  /** Streams fed from elsewhere: the replica last seen holding the board's link. */
  private readonly feeders = new Map<string, string>();
  /** Counts holders learnt from the bus: a table read in flight meanwhile may be older than them. */
  private holderNotes = 0;
  private readonly reading = new Map<string, Promise<void>>();
  private writes: Promise<void> = Promise.resolve();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      replicaId: string;
      log: Logger;
      relay: StreamRelay;
      isLocal(boardId: string): boolean;
      /** The live replica other than this one holding the board's link (board_sessions), if any. */
      holderElsewhere(boardId: string): Promise<string | undefined>;
      /** Time for the refresh of what is read from elsewhere. */
      clock?: Clock;
    },
    private readonly intervalMs = 5000,
  ) {
    deps.bus.subscribe('relay.want', undefined, (t) => {
      if (deps.isLocal(t.boardId)) deps.relay.setWanted(t, true);
    });
    deps.bus.subscribe('relay.event', undefined, ({ boardId, scriptId }) => this.readShared(boardId, scriptId));
    // A board that says hello here takes over what other replicas want of it.
    deps.bus.subscribe('board.status', undefined, ({ boardId, status, replicaId }) => {
      if (status !== 'online') return;
      if (deps.isLocal(boardId)) void this.refresh();
      // Linked anew on another replica: the upstream of the one that fed our clients ended.
      else if (replicaId && replicaId !== deps.replicaId) {
        this.holderNotes++;
        this.noteHolder(boardId, replicaId);
      }
    });
  }

  start(): void {
    this.timer = (this.deps.clock ?? systemClock).setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    (this.deps.clock ?? systemClock).clearInterval(this.timer);
    await this.writes;
    await this.deps.db
      .delete(relaySubscriptions)
      .where(eq(relaySubscriptions.replicaId, this.deps.replicaId))
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not remove the relay subscriptions'));
  }

  want(target: StreamTarget): void {
    const { db, bus, replicaId } = this.deps;
    this.write(async () => {
      // Only what arrives from now on: a client resumes from this replica's own ring.
      const [last] = await db
        .select({ id: sql<number>`coalesce(max(${relayEvents.id}), 0)`.mapWith(Number) })
        .from(relayEvents)
        .where(and(eq(relayEvents.boardId, target.boardId), eq(relayEvents.scriptId, target.scriptId)));
      if (!this.lastRead.has(keyOf(target))) this.lastRead.set(keyOf(target), last?.id ?? 0);
      await db
        .insert(relaySubscriptions)
        .values({ ...target, replicaId, heartbeatAt: sql`now()` })
        .onConflictDoUpdate({
          target: [relaySubscriptions.boardId, relaySubscriptions.scriptId, relaySubscriptions.replicaId],
          set: { port: target.port, path: target.path, heartbeatAt: sql`now()` },
        });
      bus.publish('relay.want', target.boardId, target);
      // Whose upstream feeds it: a later change (or its end) is an upstream `down` here.
      const holder = await this.deps.holderElsewhere(target.boardId);
      if (holder !== undefined && !this.feeders.has(keyOf(target))) this.feeders.set(keyOf(target), holder);
    });
  }

  share(target: StreamTarget, frame: Buffer, lastEventId: string | undefined, state: 'up' | 'down' | undefined): void {
    const { db, bus } = this.deps;
    this.write(async () => {
      await db.insert(relayEvents).values({ boardId: target.boardId, scriptId: target.scriptId, frame, lastEventId: lastEventId ?? null, state: state ?? null });
      bus.publish('relay.event', target.boardId, { boardId: target.boardId, scriptId: target.scriptId });
    });
  }

  /** In order, one at a time: events reach other replicas in the order the upstream sent them. */
  private write(task: () => Promise<void>): void {
    this.writes = this.writes.then(task).catch((err: unknown) => this.deps.log.warn({ err }, 'could not share a relayed stream'));
  }

  /**
   * Where the link of a board whose stream is fed from elsewhere lives now (undefined: no live
   * replica holds it, its session row expired). A stream whose feeder is gone, or was another
   * replica, hears `upstream` `down` after what it has read so far; `up` comes from the new
   * holder's rows once it has subscribed (it shares its state at each of its refreshes too).
   */
  private noteHolder(boardId: string, holder: string | undefined): void {
    for (const key of this.lastRead.keys()) {
      if (!key.startsWith(`${boardId}/`)) continue;
      const scriptId = key.slice(boardId.length + 1);
      const before = this.feeders.get(key);
      if (holder === undefined) this.feeders.delete(key);
      else this.feeders.set(key, holder);
      if (holder !== undefined && (before === undefined || before === holder)) continue;
      const message = holder === undefined ? "no replica holds the board's link" : "the board's link moved to another replica";
      this.inOrder(key, async () => this.deps.relay.remoteUpstreamLost(boardId, scriptId, message));
    }
  }

  /** Reads the stream's rows after the last one delivered here and writes them to this replica's clients. */
  private readShared(boardId: string, scriptId: string): void {
    const key = keyOf({ boardId, scriptId });
    if (!this.lastRead.has(key)) return;
    this.inOrder(key, async () => {
      const after = this.lastRead.get(key);
      if (after === undefined) return;
      const rows = await this.deps.db
        .select()
        .from(relayEvents)
        .where(and(eq(relayEvents.boardId, boardId), eq(relayEvents.scriptId, scriptId), gt(relayEvents.id, after)))
        .orderBy(relayEvents.id)
        .limit(1000);
      for (const r of rows) {
        this.lastRead.set(key, r.id);
        this.deps.relay.deliverShared(boardId, scriptId, Buffer.from(r.frame), r.lastEventId, r.state);
      }
    });
  }

  /** One stream's deliveries, one after the other (rows read, upstream lost). */
  private inOrder(key: string, task: () => Promise<void>): void {
    const previous = this.reading.get(key) ?? Promise.resolve();
    const next = previous
      .then(task)
      .catch((err: unknown) => this.deps.log.warn({ err, stream: key }, 'could not read a relayed stream'))
      .finally(() => {
        if (this.reading.get(key) === next) this.reading.delete(key);
      });
    this.reading.set(key, next);
  }

  /**
   * Every few seconds: this replica's wants are refreshed (and dropped for streams without
   * clients), the wants of others for boards linked here are applied, stale rows and old
   * events are pruned, and streams fed from elsewhere catch up (a lost note heals here).
   */
  async refresh(): Promise<void> {
    const { db, replicaId, relay } = this.deps;
    try {
      const mine = relay.remoteStreams();
      const keep = new Set(mine.map(keyOf));
      for (const key of [...this.lastRead.keys()]) {
        if (keep.has(key)) continue;
        this.lastRead.delete(key);
        this.feeders.delete(key);
      }
      for (const t of mine) {
        await db
          .insert(relaySubscriptions)
          .values({ ...t, replicaId, heartbeatAt: sql`now()` })
          .onConflictDoUpdate({
            target: [relaySubscriptions.boardId, relaySubscriptions.scriptId, relaySubscriptions.replicaId],
            set: { heartbeatAt: sql`now()` },
          });
      }
      // This replica's wants whose clients all left.
      const rows = await db
        .select({ boardId: relaySubscriptions.boardId, scriptId: relaySubscriptions.scriptId })
        .from(relaySubscriptions)
        .where(eq(relaySubscriptions.replicaId, replicaId));
      for (const r of rows) {
        if (keep.has(keyOf(r))) continue;
        await db
          .delete(relaySubscriptions)
          .where(and(eq(relaySubscriptions.boardId, r.boardId), eq(relaySubscriptions.scriptId, r.scriptId), eq(relaySubscriptions.replicaId, replicaId)));
      }
      await db.delete(relaySubscriptions).where(lt(relaySubscriptions.heartbeatAt, sql`now() - ${WANT_STALE_MS}::int * interval '1 millisecond'`));
      await db.delete(relayEvents).where(lt(relayEvents.createdAt, sql`now() - ${EVENTS_KEPT_MS}::int * interval '1 millisecond'`));
      const wanted = await db.select().from(relaySubscriptions).where(sql`${relaySubscriptions.replicaId} <> ${replicaId}`);
      const wantedHere = new Set<string>();
      for (const w of wanted) {
        if (w.replicaId === replicaId || !this.deps.isLocal(w.boardId)) continue;
        wantedHere.add(keyOf(w));
        relay.setWanted({ boardId: w.boardId, scriptId: w.scriptId, port: w.port, path: w.path }, true);
      }
      for (const t of relay.wantedStreams()) if (!wantedHere.has(keyOf(t))) relay.setWanted(t, false);
      for (const t of mine) this.readShared(t.boardId, t.scriptId);
      // A holder that died without a word: its session row expires (board-sessions.ts).
      for (const boardId of new Set(mine.map((t) => t.boardId))) {
        if (this.deps.isLocal(boardId)) continue;
        const notesBefore = this.holderNotes;
        const holder = await this.deps.holderElsewhere(boardId);
        if (this.holderNotes === notesBefore) this.noteHolder(boardId, holder);
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'could not refresh the relayed streams');
    }
  }
}
