import type { Clock, TimerHandle } from '@mm/protocol';
import { and, eq, gt, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards, operations, rollouts, webhookEvents } from '../db/schema.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import '../operations/operation-bus-topics.ts';
import { FINAL_STATUSES, toOperationObject, type OperationObject } from '../operations/operation-object.ts';
import '../rollouts/rollout-engine.ts';
import { toRolloutObject } from '../rollouts/rollout-object.ts';
import { boardRowsOf } from '../rollouts/rollout-store.ts';
import { sweepBoards } from './board-sweep.ts';
import type { StoreEventOptions } from './webhook-store.ts';

/**
 * Where the built-in events come from (docs/webhooks.md, "Events"):
 *
 * - `operation.finished`: the operations' `end` events on this replica's bus (each operation
 *   ends on one replica), stored at once; a catch-up pass every minute stores those a replica
 *   ended but died before storing (the event's key makes a second store a no-op).
 *   Health-check runs are left out (they are the fleet's own chatter; their verdicts are
 *   `board.health_changed`).
 * - `rollout.finished`: rollouts whose `finished_at` was set in the last ten minutes and have
 *   no event yet, looked at when a rollout changes (the bus) and every half minute.
 * - `board.enrolled`, `board.health_changed`, `board.offline`: the board sweep (board-sweep.ts),
 *   every 5 s (less often on a fleet so large that a sweep takes more than 1 % of that), and
 *   soon (at most every 2 s) after a board's link opens or closes or an operation ends.
 *
 * Each pass runs only while some enabled subscription wants its events.
 */

export type EmitFn = (db: Db, type: string, data: Record<string, unknown>, opts: StoreEventOptions) => Promise<unknown>;

export interface WebhookSourcesDeps {
  db: Db;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Stores an event (and nudges the workers). */
  emit: EmitFn;
  /** The event types some enabled subscription wants, as last read. */
  wanted: () => Set<string>;
  /** Reads the subscriptions again (before each sweep). */
  refreshWanted: () => Promise<void>;
  sessionStaleMs: number;
  offlineGraceMs: number;
  /** The board sweep's period. */
  boardSweepMs?: number;
}

/** How far back the catch-up passes look. */
const CATCH_UP_WINDOW_MS = 10 * 60_000;
const OPERATION_CATCH_UP_MS = 60_000;
const ROLLOUT_SWEEP_MS = 30_000;
/**
 * The board sweep runs this often by itself, or less often when it is slow: never more than 1 %
 * of the time (an idle sweep reads every board: 50–90 ms at 10,000 boards, so every 5–9 s;
 * bench/webhook-board-sweep.ts)…
 */
const BOARD_SWEEP_MS = 5_000;
const BOARD_SWEEP_DUTY = 100;
/** …and sooner when a link opens or closes or an operation ends, but not more often than this (thousands of boards reconnecting at once). */
const BOARD_SWEEP_SPACING_MS = 2_000;

export class WebhookSources {
  private readonly offs: Array<() => void> = [];
  private boardTimer: TimerHandle | undefined;
  private boardDueAt = Infinity;
  private lastBoardSweepAt = -Infinity;
  private rolloutTimer: TimerHandle | undefined;
  private rolloutDueAt = Infinity;
  private catchUpTimer: TimerHandle | undefined;
  private readonly busy = new Map<string, Promise<void>>();
  private stopped = true;
  private readonly boardSweepMs: number;

  constructor(private readonly deps: WebhookSourcesDeps) {
    this.boardSweepMs = deps.boardSweepMs ?? BOARD_SWEEP_MS;
  }

  start(): void {
    this.stopped = false;
    const { bus } = this.deps;
    this.offs.push(
      bus.subscribe('operation.event', undefined, ({ event }) => {
        if (event.type !== 'end') return;
        const op = event.data as OperationObject;
        if (this.deps.wanted().has('operation.finished')) this.run('operation', () => this.operationEnded(op));
        // A health-check run sets its board's health just after: look soon.
        this.soonBoards(1000);
      }),
      bus.subscribe('board.status', undefined, (m) => {
        this.soonBoards(500);
        if (m.status === 'offline') this.soonBoards(this.deps.offlineGraceMs + 1500);
      }),
      bus.subscribe('rollout.changed', undefined, () => this.soonRollouts(1000)),
    );
    this.soonBoards(0);
    this.soonRollouts(ROLLOUT_SWEEP_MS);
    this.catchUpTimer = this.deps.clock.setInterval(() => this.run('catch-up', () => this.catchUpOperations()), OPERATION_CATCH_UP_MS);
    this.catchUpTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.offs.splice(0)) off();
    this.deps.clock.clearTimeout(this.boardTimer);
    this.deps.clock.clearTimeout(this.rolloutTimer);
    this.deps.clock.clearInterval(this.catchUpTimer);
    await Promise.allSettled([...this.busy.values()]);
  }

  /** Sweeps the boards within `ms` (sooner if one is already due sooner; never within BOARD_SWEEP_SPACING_MS of the last). */
  soonBoards(ms: number): void {
    if (this.stopped) return;
    const at = Math.max(this.deps.clock.now() + ms, this.lastBoardSweepAt + BOARD_SWEEP_SPACING_MS);
    ms = at - this.deps.clock.now();
    if (at >= this.boardDueAt) return;
    this.deps.clock.clearTimeout(this.boardTimer);
    this.boardDueAt = at;
    this.boardTimer = this.deps.clock.setTimeout(() => {
      this.boardDueAt = Infinity;
      this.lastBoardSweepAt = this.deps.clock.now();
      const started = performance.now();
      this.run('boards', () => this.sweepBoardsOnce(), () => this.soonBoards(Math.max(this.boardSweepMs, BOARD_SWEEP_DUTY * (performance.now() - started))));
    }, ms);
    this.boardTimer.unref();
  }

  private soonRollouts(ms: number): void {
    if (this.stopped) return;
    const at = this.deps.clock.now() + ms;
    if (at >= this.rolloutDueAt) return;
    this.deps.clock.clearTimeout(this.rolloutTimer);
    this.rolloutDueAt = at;
    this.rolloutTimer = this.deps.clock.setTimeout(() => {
      this.rolloutDueAt = Infinity;
      this.run('rollouts', () => this.sweepRollouts(), () => this.soonRollouts(ROLLOUT_SWEEP_MS));
    }, ms);
    this.rolloutTimer.unref();
  }

  /** One pass of a kind at a time; a failure is logged, and `then` runs either way. */
  private run(name: string, pass: () => Promise<void>, then?: () => void): void {
    if (this.busy.has(name)) {
      then?.();
      return;
    }
    const p = pass()
      .catch((err: unknown) => this.deps.log.warn({ err, pass: name }, 'webhooks: an event pass failed'))
      .finally(() => {
        this.busy.delete(name);
        then?.();
      });
    this.busy.set(name, p);
  }

  private async sweepBoardsOnce(): Promise<void> {
    await this.deps.refreshWanted();
    const wanted = this.deps.wanted();
    await sweepBoards(
      this.deps.db,
      { sessionStaleMs: this.deps.sessionStaleMs, offlineGraceMs: this.deps.offlineGraceMs, wants: (type) => wanted.has(type) },
      (tx, type, data, key) => this.deps.emit(tx, type, data, { key }),
    );
  }

  /** An operation that ended on this replica. */
  private async operationEnded(op: OperationObject): Promise<void> {
    const [row] = await this.deps.db
      .select({ healthCheckId: operations.healthCheckId, boardName: boards.name })
      .from(operations)
      .leftJoin(boards, eq(boards.id, operations.boardId))
      .where(eq(operations.id, op.id));
    if (!row || row.healthCheckId !== null) return;
    await this.deps.emit(this.deps.db, 'operation.finished', operationData(op, row.boardName), {
      key: `operation.finished:${op.id}`,
      occurredAt: op.finished_at ? new Date(op.finished_at) : undefined,
    });
  }

  /** Operations that ended in the last minutes without their event (their replica died first). */
  private async catchUpOperations(): Promise<void> {
    if (!this.deps.wanted().has('operation.finished')) return;
    const { db } = this.deps;
    const now = this.deps.clock.now();
    const rows = await db
      .select({ op: operations, boardName: boards.name })
      .from(operations)
      .leftJoin(boards, eq(boards.id, operations.boardId))
      .where(
        and(
          // operations_expiry_idx: the few rows of the window, not the table.
          sql`coalesce(${operations.finishedAt}, ${operations.createdAt}) > ${new Date(now - CATCH_UP_WINDOW_MS).toISOString()}::timestamptz`,
          lt(operations.finishedAt, new Date(now - 30_000)),
          inArray(operations.status, [...FINAL_STATUSES]),
          isNull(operations.healthCheckId),
          sql`not exists (select 1 from ${webhookEvents} where ${webhookEvents.dedupeKey} = 'operation.finished:' || ${operations.id})`,
        ),
      )
      .limit(200);
    for (const { op, boardName } of rows) {
      await this.deps.emit(db, 'operation.finished', operationData(toOperationObject(op), boardName), {
        key: `operation.finished:${op.id}`,
        occurredAt: op.finishedAt ?? undefined,
        notBefore: op.finishedAt ?? undefined,
      });
    }
  }

  /** Rollouts finished in the last minutes without their event. */
  private async sweepRollouts(): Promise<void> {
    if (!this.deps.wanted().has('rollout.finished')) return;
    const { db } = this.deps;
    const rows = await db
      .select()
      .from(rollouts)
      .where(
        and(
          isNotNull(rollouts.finishedAt),
          gt(rollouts.finishedAt, new Date(this.deps.clock.now() - CATCH_UP_WINDOW_MS)),
          sql`not exists (select 1 from ${webhookEvents} where ${webhookEvents.dedupeKey} = 'rollout.finished:' || ${rollouts.id})`,
        ),
      )
      .limit(100);
    if (rows.length === 0) return;
    const steps = await boardRowsOf(db, rows.map((r) => r.id));
    for (const row of rows) {
      const { boards: members, ...rollout } = toRolloutObject(row, steps.get(row.id) ?? []);
      const failed = members.filter((b) => b.status === 'failed').map((b) => ({ board_id: b.board_id, board_name: b.board_name, operation_id: b.operation_id }));
      await this.deps.emit(db, 'rollout.finished', { rollout, status: rollout.status, failed_boards: failed.slice(0, 100) }, {
        key: `rollout.finished:${row.id}`,
        occurredAt: row.finishedAt ?? undefined,
        notBefore: row.finishedAt ?? undefined,
      });
    }
  }
}

function operationData(op: OperationObject, boardName: string | null): Record<string, unknown> {
  return { operation: op, board: op.board_id ? { id: op.board_id, name: boardName } : null };
}
