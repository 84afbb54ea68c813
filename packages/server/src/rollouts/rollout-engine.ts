import type { Clock, TimerHandle } from '@mm/protocol';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import { isFinal } from '../operations/operation-object.ts';
import { isRolloutClosed, isStepActive, isStepEnded, type RolloutBoardRow, type RolloutRow } from './rollout-object.ts';

declare module '../events/event-bus.ts' {
  interface BusMessages {
    /** Something of the rollout changed (a step, its status): its event streams read it again. */
    'rollout.changed': { rolloutId: number };
  }
}

/** How often every replica looks at the open rollouts (a missed end event, a batch interval, a dead replica's claims). */
export const ROLLOUT_SWEEP_MS = 2_000;
/** A step left `starting` this long by a replica that is gone goes back to `pending`. */
const STALE_CLAIM_MS = 15_000;

/** A step with an operation that has not ended, and what its operation says now. */
export interface ActiveStep {
  position: number;
  stepStatus: string;
  operationId: number | null;
  /** Null: the operation is gone (deleted with its board, pruned). */
  opStatus: string | null;
  result: unknown;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * What the engine asks of the rollouts' rows (rollout-store.ts `pgRolloutEngineStore` on
 * PostgreSQL; an in-memory fake in test/rollout-engine.unit.test.ts). Changes that replicas
 * might race on are conditional: they answer whether (or what) they changed.
 */
export interface RolloutEngineStore {
  findRollout(id: number): Promise<RolloutRow | undefined>;
  /** The steps of the rollout, in position order. */
  stepsOf(id: number): Promise<RolloutBoardRow[]>;
  activeSteps(id: number): Promise<ActiveStep[]>;
  updateStep(id: number, position: number, from: string, to: { status: string; runMs?: number | null; metrics?: Record<string, number> | null; finishedAt?: Date | null }): Promise<boolean>;
  staleClaims(id: number, before: Date): Promise<Array<{ position: number; claimedBy: string | null }>>;
  unclaimStep(id: number, position: number, claimedBy: string): Promise<void>;
  changeStatus(id: number, from: string[], to: string): Promise<RolloutRow | undefined>;
  skipPending(id: number, at: Date): Promise<number>;
  markPhaseEnded(id: number, phasesStarted: number, at: Date): Promise<void>;
  claimPhase(id: number, phasesStarted: number): Promise<RolloutRow | undefined>;
  claimStep(id: number, position: number, replicaId: string, at: Date): Promise<boolean>;
  recordStepOperation(id: number, position: number, operationId: number): Promise<void>;
  failStep(id: number, position: number, at: Date): Promise<void>;
  markFinished(id: number, at: Date): Promise<RolloutRow | undefined>;
  rolloutsOfOperation(operationId: number): Promise<number[]>;
  openRolloutIds(): Promise<number[]>;
  /** A pending step whose board someone else holds: `skipped`, never started (docs/reservations.md). */
  skipStep(id: number, position: number, at: Date): Promise<void>;
}

export interface RolloutEngineDeps {
  store: RolloutEngineStore;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  replicaId: string;
  isReplicaAlive(replicaId: string): Promise<boolean>;
  /** Creates the step operation of one board (named to it); throws when it cannot. */
  createStep(rollout: RolloutRow, boardId: string): Promise<OperationObject>;
  /** Whether someone other than `user` holds the board now: its step is skipped (docs/reservations.md). */
  reservedForOthers?(boardId: string, user: string | null): Promise<boolean>;
}

/** What a step's operation measured: `result.metrics` and the run time. */
export function stepMeasures(op: { result: unknown; startedAt: Date | null; finishedAt: Date | null }): { runMs: number | null; metrics: Record<string, number> | null } {
  const result = (op.result ?? {}) as { metrics?: unknown; duration_ms?: unknown };
  let metrics: Record<string, number> | null = null;
  if (result.metrics && typeof result.metrics === 'object') {
    metrics = {};
    for (const [k, v] of Object.entries(result.metrics as Record<string, unknown>)) if (typeof v === 'number' && Number.isFinite(v)) metrics[k] = v;
  }
  const fromMetrics = metrics?.run_ms;
  const runMs =
    fromMetrics ?? (typeof result.duration_ms === 'number' ? result.duration_ms : op.startedAt && op.finishedAt ? op.finishedAt.getTime() - op.startedAt.getTime() : null);
  return { runMs: runMs === null ? null : Math.round(runMs), metrics };
}

/**
 * Moves rollouts on (docs/rollouts.md). The state is in PostgreSQL and any replica may
 * advance any rollout: `advance` reads it, brings each step in line with its operation,
 * aborts when the failed share is reached, starts the next phase when the previous one has
 * ended and the interval passed, and closes it when every step has ended. Changes that two
 * replicas might race on are conditional UPDATEs (rollout-store.ts), and one process runs
 * one `advance` of a rollout at a time.
 *
 * It is driven by the operations' `end` events on this replica, by the commands, and by a
 * sweep every ROLLOUT_SWEEP_MS (the injected clock) that covers ends seen by a replica that
 * died, batch intervals, and steps a dead replica claimed but never created.
 */
export class RolloutEngine {
  private readonly running = new Map<number, Promise<void>>();
  private readonly again = new Set<number>();
  private readonly timers = new Map<number, TimerHandle>();
  private sweepTimer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly deps: RolloutEngineDeps) {}

  start(): void {
    this.unsubscribe = this.deps.bus.subscribe('operation.event', undefined, ({ operationId, event }) => {
      if (event.type !== 'end') return;
      this.deps.store.rolloutsOfOperation(operationId).then(
        (ids) => ids.forEach((id) => this.kick(id)),
        (err: unknown) => this.deps.log.warn({ err, op_id: operationId }, 'could not look up the rollout of an operation'),
      );
    });
    this.sweepTimer = this.deps.clock.setInterval(() => this.sweep(), ROLLOUT_SWEEP_MS);
    this.sweepTimer.unref?.();
    this.sweep();
  }

  /** Stops driving; waits for the advances under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.deps.clock.clearInterval(this.sweepTimer);
    for (const t of this.timers.values()) this.deps.clock.clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running.values()]);
  }

  private sweep(): void {
    if (this.stopped) return;
    this.deps.store.openRolloutIds().then(
      (ids) => ids.forEach((id) => this.kick(id)),
      (err: unknown) => this.deps.log.warn({ err }, 'could not look at the open rollouts'),
    );
  }

  /** Advances the rollout soon (once more if it is being advanced right now). */
  kick(id: number): void {
    if (this.stopped) return;
    if (this.running.has(id)) {
      this.again.add(id);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(id);
        try {
          await this.advance(id);
        } catch (err) {
          this.deps.log.warn({ err, rollout_id: id }, 'could not advance a rollout');
        }
      } while (this.again.has(id) && !this.stopped);
    })().finally(() => this.running.delete(id));
    this.running.set(id, run);
  }

  /** Resolves once the advances under way (and asked for) of this rollout are done. */
  async settled(id: number): Promise<void> {
    while (this.running.has(id)) await this.running.get(id);
  }

  private changed(id: number): void {
    this.deps.bus.publish('rollout.changed', id, { rolloutId: id });
  }

  private async advance(id: number): Promise<void> {
    const { store, clock } = this.deps;
    const row = await store.findRollout(id);
    if (!row || row.finishedAt) return;
    let changed = false;
    const now = () => new Date(clock.now());

    // 1. Each step's status as its operation has it.
    for (const s of await store.activeSteps(id)) {
      if (s.opStatus === null) {
        // The operation is gone (deleted with its board, pruned): the step cannot succeed.
        changed = (await store.updateStep(id, s.position, s.stepStatus, { status: 'failed', finishedAt: now() })) || changed;
        continue;
      }
      if (s.opStatus === s.stepStatus) continue;
      const to = isFinal(s.opStatus) ? { status: s.opStatus, ...stepMeasures(s), finishedAt: s.finishedAt ?? now() } : { status: s.opStatus };
      changed = (await store.updateStep(id, s.position, s.stepStatus, to)) || changed;
    }

    // 2. Steps claimed by a replica that died before it created their operation start again.
    for (const c of await store.staleClaims(id, new Date(clock.now() - STALE_CLAIM_MS))) {
      if (!c.claimedBy || c.claimedBy === this.deps.replicaId) continue;
      if (await this.deps.isReplicaAlive(c.claimedBy)) continue;
      await store.unclaimStep(id, c.position, c.claimedBy);
      changed = true;
    }

    let current: RolloutRow = row;
    let steps = await store.stepsOf(id);
    const counts = tally(steps);

    // 3. The automatic abort.
    if (!isRolloutClosed(current.status) && current.abort) {
      const finished = counts.succeeded + counts.failed + counts.cancelled;
      if (finished >= current.abort.min_finished && finished > 0 && counts.failed * 100 >= current.abort.failure_percent * finished) {
        const aborted = await store.changeStatus(id, ['running', 'paused'], 'aborted');
        if (aborted) {
          current = aborted;
          await store.skipPending(id, now());
          this.deps.log.warn({ rollout_id: id, failed: counts.failed, finished }, 'rollout aborted: too many boards failed');
          changed = true;
          steps = await store.stepsOf(id);
        }
      }
    }

    // 4. Phases.
    if (!isRolloutClosed(current.status)) {
      const allEnded = steps.every((s) => isStepEnded(s.status));
      if (allEnded) {
        // Steps skipped while running are boards other people held (docs/reservations.md): not failures.
        const final = steps.every((s) => s.status === 'succeeded' || s.status === 'skipped') && steps.some((s) => s.status === 'succeeded') ? 'succeeded' : 'failed';
        const closed = await store.changeStatus(id, ['running', 'paused'], final);
        if (closed) {
          current = closed;
          changed = true;
        }
      } else if (current.status === 'running') {
        const started = current.phasesStarted;
        const startedEnded = steps.filter((s) => s.phase < started).every((s) => isStepEnded(s.status));
        const hasNext = steps.some((s) => s.phase === started);
        if (startedEnded && hasNext) {
          let due = clock.now();
          if (started > 0 && current.batchIntervalS > 0) {
            if (!current.phaseEndedAt) {
              await store.markPhaseEnded(id, started, now());
              due = clock.now() + current.batchIntervalS * 1000;
            } else due = current.phaseEndedAt.getTime() + current.batchIntervalS * 1000;
          }
          if (due <= clock.now()) {
            if (await this.startPhase(current, started, steps)) changed = true;
          } else this.wakeAt(id, due);
        }
      }
    }

    // 5. Closed, and nothing of it runs any more: finished.
    if (isRolloutClosed(current.status) && !current.finishedAt) {
      const after = changed ? await store.stepsOf(id) : steps;
      if (!after.some((s) => isStepActive(s.status))) {
        if (await store.markFinished(id, now())) changed = true;
      }
    }
    if (changed) this.changed(id);
  }

  /** Claims the phase (once across replicas) and starts each of its steps. */
  private async startPhase(rollout: RolloutRow, phase: number, steps: RolloutBoardRow[]): Promise<boolean> {
    const { store, clock, replicaId } = this.deps;
    const claimed = await store.claimPhase(rollout.id, phase);
    if (!claimed) return false;
    this.deps.log.info({ rollout_id: rollout.id, phase }, 'rollout phase starting');
    for (const step of steps.filter((s) => s.phase === phase && s.status === 'pending')) {
      if (!(await store.claimStep(rollout.id, step.position, replicaId, new Date(clock.now())))) continue;
      try {
        if (!step.boardId) throw new Error('the board was deleted');
        if (await this.deps.reservedForOthers?.(step.boardId, rollout.createdBy)) {
          this.deps.log.info({ rollout_id: rollout.id, board_id: step.boardId }, 'rollout step skipped: someone else holds the board');
          await store.skipStep(rollout.id, step.position, new Date(clock.now()));
          continue;
        }
        const op = await this.deps.createStep(rollout, step.boardId);
        await store.recordStepOperation(rollout.id, step.position, op.id);
      } catch (err) {
        this.deps.log.warn({ err, rollout_id: rollout.id, board_id: step.boardId }, 'could not start a rollout step');
        await store.failStep(rollout.id, step.position, new Date(clock.now()));
      }
    }
    // What just started may already have ended (or failed to start): look again.
    this.again.add(rollout.id);
    return true;
  }

  private wakeAt(id: number, at: number): void {
    if (this.timers.has(id)) return;
    const timer = this.deps.clock.setTimeout(() => {
      this.timers.delete(id);
      this.kick(id);
    }, Math.max(0, at - this.deps.clock.now()));
    timer.unref?.();
    this.timers.set(id, timer);
  }
}

function tally(steps: RolloutBoardRow[]): Record<'succeeded' | 'failed' | 'cancelled', number> {
  const out = { succeeded: 0, failed: 0, cancelled: 0 };
  for (const s of steps) if (s.status === 'succeeded' || s.status === 'failed' || s.status === 'cancelled') out[s.status]++;
  return out;
}
