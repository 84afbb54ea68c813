import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import { and, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { rolloutBoards, rollouts } from '../db/schema.ts';
import type { Logger } from '../logger.ts';
import { pruneEventsOfEndedBefore, pruneOperationsEndedBefore } from '../operations/store.ts';

/** Rows one statement deletes: small enough that no query waits long behind it (PGlite has one connection). */
export const PRUNE_BATCH_ROWS = 500;
/** Rollouts removed per batch (each with its boards: one row per board it named). */
const ROLLOUTS_PER_BATCH = 20;
/** A pause between batches, so requests get the database in between. */
const PAUSE_BETWEEN_BATCHES_MS = 5;
/** The pruner runs this often, and once shortly after start. */
export const PRUNE_INTERVAL_MS = 60 * 60_000;
const FIRST_RUN_DELAY_MS = 30_000;

export type PrunedKind = 'operations' | 'operation_events' | 'content' | 'board_telemetry' | 'rollouts' | 'rollout_boards' | 'terminal_sessions';
export type PruneCounts = Record<PrunedKind, number>;

export interface RetentionPrunerDeps {
  db: Db;
  log: Logger;
  /** `MM_RETENTION_DAYS` in ms; 0 keeps operations forever. */
  retentionMs: number;
  /** Collects content nothing records (sweepOrphanContent): how many files went. */
  sweepContent: () => Promise<number>;
  /** Counts what went (the `mm_retention_pruned_total` metric). */
  onPruned?: (kind: PrunedKind, n: number) => void;
  /**
   * Deletes at most `limit` board telemetry samples older than `cutoff` (kept 24 h whatever
   * MM_RETENTION_DAYS says); answers how many went. Absent: none are pruned.
   */
  pruneTelemetry?: (cutoff: Date, limit: number) => Promise<number>;
  /** How long telemetry samples are kept (24 h). */
  telemetryKeepMs?: number;
  /**
   * Deletes at most `limit` terminal sessions (with their recordings) that ended before
   * `cutoff`; answers how many went. Kept MM_RETENTION_DAYS like operations. Absent: none go.
   */
  pruneTerminalSessions?: (cutoff: Date, limit: number) => Promise<number>;
  /** The schedule and what "old" means (default: the system clock). */
  clock?: Clock;
}

/**
 * Retention: removes finished operations (succeeded, failed, cancelled) that ended longer
 * than `MM_RETENTION_DAYS` ago, with their events and logs, and collects stored content that
 * nothing records (past the orphan grace period), and finished rollouts older than the same
 * retention with their boards. Queued and running operations are never
 * touched, whatever their age. Works in batches of PRUNE_BATCH_ROWS rows, pausing between
 * them, so a large backlog never holds the database for long. Resumable uploads that expire
 * are removed by their own sweep (MM_UPLOAD_EXPIRY_S), not here.
 *
 * Safe with several replicas: each deletes by id whatever is old at that moment; two
 * replicas pruning at once delete disjoint or already-deleted rows.
 */
export class RetentionPruner {
  private timer: TimerHandle | undefined;
  private running: Promise<PruneCounts> | undefined;
  private stopped = false;
  private readonly clock: Clock;

  constructor(private readonly deps: RetentionPrunerDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Runs once shortly after start, then every PRUNE_INTERVAL_MS, until `stop`. */
  start(): void {
    const schedule = (ms: number) => {
      this.timer = this.clock.setTimeout(() => {
        void this.runOnce()
          .catch((err: unknown) => this.deps.log.warn({ err }, 'retention pruning failed'))
          .finally(() => {
            if (!this.stopped) schedule(PRUNE_INTERVAL_MS);
          });
      }, ms);
      this.timer.unref();
    };
    schedule(FIRST_RUN_DELAY_MS);
  }

  /** Stops the schedule; a run in progress ends after its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    await this.running?.catch(() => {});
  }

  /** One pass (a second call while one runs joins it). Resolves to what it removed. */
  runOnce(now: Date = new Date(this.clock.now())): Promise<PruneCounts> {
    this.running ??= this.prune(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async prune(now: Date): Promise<PruneCounts> {
    const { db, log, retentionMs } = this.deps;
    const counts: PruneCounts = { operations: 0, operation_events: 0, content: 0, board_telemetry: 0, rollouts: 0, rollout_boards: 0, terminal_sessions: 0 };
    if (retentionMs > 0) {
      const cutoff = new Date(now.getTime() - retentionMs);
      // Events first, in small batches (an operation may have tens of thousands of log
      // events: deleting the operation at once would cascade over all of them in one go).
      counts.operation_events = await this.inBatches('operation_events', () => pruneEventsOfEndedBefore(db, cutoff, PRUNE_BATCH_ROWS));
      counts.operations = await this.inBatches('operations', () => pruneOperationsEndedBefore(db, cutoff, PRUNE_BATCH_ROWS));
      // Finished rollouts (finished_at is set only once the status is final and no step
      // runs any more) go with the same retention, a few at a time: their boards first (a
      // rollout has one row per board of the fleet), then the rollouts.
      while (!this.stopped) {
        const ids = (
          await db
            .select({ id: rollouts.id })
            .from(rollouts)
            .where(and(isNotNull(rollouts.finishedAt), lt(rollouts.finishedAt, cutoff)))
            .limit(ROLLOUTS_PER_BATCH)
        ).map((r) => r.id);
        if (!ids.length) break;
        const boards = await db.delete(rolloutBoards).where(inArray(rolloutBoards.rolloutId, ids)).returning({ id: rolloutBoards.rolloutId });
        const gone = await db.delete(rollouts).where(inArray(rollouts.id, ids)).returning({ id: rollouts.id });
        counts.rollout_boards += boards.length;
        counts.rollouts += gone.length;
        if (boards.length) this.deps.onPruned?.('rollout_boards', boards.length);
        if (gone.length) this.deps.onPruned?.('rollouts', gone.length);
        if (ids.length < ROLLOUTS_PER_BATCH) break;
        await sleep(PAUSE_BETWEEN_BATCHES_MS);
      }
      const pruneTerminal = this.deps.pruneTerminalSessions;
      if (pruneTerminal) counts.terminal_sessions = await this.inBatchesOf('terminal_sessions', () => pruneTerminal(cutoff, PRUNE_BATCH_ROWS));
    }
    const { pruneTelemetry, telemetryKeepMs } = this.deps;
    if (pruneTelemetry && telemetryKeepMs !== undefined) {
      const cutoff = new Date(now.getTime() - telemetryKeepMs);
      counts.board_telemetry = await this.inBatchesOf('board_telemetry', () => pruneTelemetry(cutoff, PRUNE_BATCH_ROWS));
    }
    if (!this.stopped) {
      counts.content = await this.deps.sweepContent();
      if (counts.content) this.deps.onPruned?.('content', counts.content);
    }
    if (Object.values(counts).some((n) => n > 0)) log.info({ pruned: counts }, 'retention: pruned old data');
    return counts;
  }

  /** Repeats `batch` until it deletes nothing (or the pruner stops); counts the rows. */
  private inBatches(kind: PrunedKind, batch: () => Promise<unknown[]>): Promise<number> {
    return this.inBatchesOf(kind, async () => (await batch()).length);
  }

  /** Repeats `batch` (answering how many rows it deleted) until it deletes nothing; counts the rows. */
  private async inBatchesOf(kind: PrunedKind, batch: () => Promise<number>): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const n = await batch();
      if (n === 0) break;
      total += n;
      this.deps.onPruned?.(kind, n);
      if (n < PRUNE_BATCH_ROWS) break;
      await sleep(PAUSE_BETWEEN_BATCHES_MS);
    }
    return total;
  }
}
