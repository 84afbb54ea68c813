import type { Clock, TimerHandle } from '@mm/protocol';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import { CANCEL_UNCONFIRMED_MESSAGE } from '../operations/operations.ts';
import { toIncidentObject } from './incident-object.ts';
import { POWER_KINDS } from './power-kinds.ts';
import {
  advanceIncident,
  boardHealthOf,
  boardPowerOf,
  closeIncident,
  cyclesSince,
  noteLastActionOutcome,
  openIncident,
  openIncidents,
  operationStates,
  runsPastBound,
  setLastActionOperations,
  silentBoards,
  type IncidentRow,
} from './power-store.ts';

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

export interface RecoveryDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  settings: Config['power'];
  /** A board session older than this is a board gone (BoardSessions.staleMs). */
  sessionStaleMs: number;
  agents: { statusAnywhere(boardId: string): Promise<'online' | 'offline' | 'rebooting'> };
  operations: {
    cancel(id: number): Promise<OperationObject>;
    runNow(input: { kind: string; boardId: string; params?: Record<string, unknown> }): Promise<OperationObject>;
  };
  /** Queues a run of each health check the board matches, ahead of its other work (FleetScheduler). */
  healthChecks: { runHealthChecksNow(boardId: string): Promise<OperationObject[]> };
  /** `board.recovered` (webhooks). */
  emit(type: 'board.recovered', data: Record<string, unknown>, opts: { key: string }): Promise<unknown>;
  /** mm_board_recovery_seconds. */
  observeRecovery(seconds: number): void;
}

/**
 * Hang detection and recovery (docs/power.md). A sweep, every few seconds:
 *
 * - a board unheard of for MM_HANG_DETECT_S whose link was lost (not closed by its agent),
 *   not switched off on purpose, gets an incident and shows `unresponsive`;
 * - a run past MM_RUN_BOUND_S is cancelled; if its board does not confirm (MM_CANCEL_GRACE_S)
 *   the board gets an incident too;
 * - each open incident moves on: `detected` → a power cycle (MM_AUTO_RECOVER, power
 *   configured, fewer than MM_RECOVER_MAX in MM_RECOVER_WINDOW_S, else the board is `bad`)
 *   → `booting` (a new link within MM_HANG_DETECT_S, else `detected` again) → `checking`
 *   (its health checks) → `recovered` when they pass, else `bad`.
 *
 * Every step is a conditional UPDATE of the incident's phase: of several replicas looking,
 * one acts.
 */
export class Recovery {
  private timer: TimerHandle | undefined;
  private sweeping: Promise<void> | undefined;
  /** Runs past their bound this replica asked to cancel: id → board and when the hang began. */
  private readonly cancelAsked = new Map<number, { boardId: string; startedAt: Date }>();
  readonly sweepMs: number;

  constructor(private readonly deps: RecoveryDeps) {
    this.sweepMs = Math.max(100, Math.min(5000, Math.round(deps.settings.hangDetectMs / 4)));
  }

  start(): void {
    this.timer = this.deps.clock.setInterval(() => void this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.deps.clock.clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One pass (the timer's; tests may call it). */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        await this.detect();
        for (const incident of await openIncidents(this.deps.db)) {
          await this.advance(incident).catch((err: unknown) => this.deps.log.warn({ err, incident_id: incident.id, board_id: incident.boardId }, 'could not move an incident on'));
        }
      } catch (err) {
        this.deps.log.warn({ err }, 'the hang sweep failed');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  private now(): Date {
    return new Date(this.deps.clock.now());
  }

  private async detect(): Promise<void> {
    const { db, settings, log } = this.deps;
    const now = this.now();
    const silentSince = new Date(now.getTime() - settings.hangDetectMs);
    for (const b of await silentBoards(db, silentSince, new Date(now.getTime() - this.deps.sessionStaleMs), now)) {
      const reason = `no heartbeat since ${b.lastSeenAt.toISOString()} (more than ${settings.hangDetectMs / 1000} s; its link was lost, not closed by its agent)`;
      const incident = await openIncident(db, b.id, b.lastSeenAt, now, reason);
      if (incident) log.warn({ board_id: b.id, incident_id: incident.id, reason }, 'board unresponsive');
    }
    for (const run of await runsPastBound(db, new Date(now.getTime() - settings.runBoundMs))) {
      if (this.cancelAsked.has(run.id)) continue;
      this.cancelAsked.set(run.id, { boardId: run.boardId, startedAt: new Date(run.startedAt.getTime() + settings.runBoundMs) });
      log.warn({ op_id: run.id, board_id: run.boardId }, 'a run passed its bound: cancelling it');
      await this.deps.operations.cancel(run.id).catch(() => {});
    }
    if (this.cancelAsked.size === 0) return;
    const states = await operationStates(db, [...this.cancelAsked.keys()]);
    for (const [id, asked] of this.cancelAsked) {
      const state = states.get(id);
      if (state && !FINAL.has(state.status)) continue;
      this.cancelAsked.delete(id);
      if (state?.status !== 'cancelled' || state.errorMessage !== CANCEL_UNCONFIRMED_MESSAGE) continue;
      const reason = `run ${id} passed its bound (${settings.runBoundMs / 1000} s) and the board did not answer its cancel`;
      const incident = await openIncident(db, asked.boardId, asked.startedAt, now, reason);
      if (incident) log.warn({ board_id: asked.boardId, incident_id: incident.id, reason }, 'board unresponsive');
    }
  }

  private async advance(incident: IncidentRow): Promise<void> {
    const { db, settings } = this.deps;
    const now = this.now();
    const board = await boardPowerOf(db, incident.boardId);
    if (!board) return;
    const presence = await this.deps.agents.statusAnywhere(incident.boardId);
    // Back: linked again since the phase began (a hung link's board reconnects; a hung run's keeps its old link).
    const backSince = (at: Date) => presence === 'online' && board.connectedAt !== null && board.connectedAt > at;
    switch (incident.phase) {
      case 'detected': {
        if (backSince(incident.detectedAt)) return this.startChecks(incident, 'detected', now);
        if (board.powerState === 'off') {
          await closeIncident(db, incident, 'resolved', now);
          return;
        }
        if (!settings.autoRecover || !board.power) return; // a person has to act; it stays unresponsive
        const cycles = await cyclesSince(db, incident.boardId, new Date(now.getTime() - settings.recoverWindowMs));
        if (cycles >= settings.recoverMax) {
          const why = `unresponsive and not recovered: ${cycles} power cycle${cycles === 1 ? '' : 's'} in ${settings.recoverWindowMs / 1000} s did not bring it back (${incident.reason})`;
          if (await closeIncident(db, incident, 'bad', now, why)) this.deps.log.error({ board_id: incident.boardId, incident_id: incident.id }, why);
          return;
        }
        const claimed = await advanceIncident(db, incident.id, 'detected', 'cycling', now, { at: now.toISOString(), action: 'power_cycle', operation_ids: [] });
        if (!claimed) return;
        const op = await this.deps.operations.runNow({ kind: POWER_KINDS.cycle, boardId: incident.boardId, params: { action: 'cycle', incident_id: incident.id } });
        await setLastActionOperations(db, claimed, [op.id]);
        this.deps.log.warn({ board_id: incident.boardId, incident_id: incident.id, op_id: op.id, cycle: cycles + 1 }, 'power-cycling an unresponsive board');
        return;
      }
      case 'cycling': {
        const opId = incident.actions.at(-1)?.operation_ids[0];
        if (opId === undefined) {
          // The replica that claimed it died before starting the cycle.
          if (now.getTime() - incident.phaseAt.getTime() > 60_000) await advanceIncident(db, incident.id, 'cycling', 'detected', now);
          return;
        }
        const state = (await operationStates(db, [opId])).get(opId);
        if (state && !FINAL.has(state.status)) return;
        const outcome = state?.status === 'succeeded' ? 'succeeded' : `${state?.status ?? 'gone'}${state?.errorMessage ? `: ${state.errorMessage}` : ''}`;
        await noteLastActionOutcome(db, incident, outcome);
        // Failed or not, it gets the boot wait: a failing controller is not retried at once.
        await advanceIncident(db, incident.id, 'cycling', 'booting', now);
        return;
      }
      case 'booting': {
        if (backSince(incident.phaseAt)) return this.startChecks(incident, 'booting', now);
        if (now.getTime() - incident.phaseAt.getTime() > settings.hangDetectMs) await advanceIncident(db, incident.id, 'booting', 'detected', now);
        return;
      }
      case 'checking': {
        const ids = incident.actions.at(-1)?.operation_ids ?? [];
        const states = await operationStates(db, ids);
        if (ids.some((id) => !FINAL.has(states.get(id)?.status ?? 'gone'))) return;
        const failed = ids.filter((id) => states.get(id)?.status !== 'succeeded');
        // The scheduler sets the board's health from each run as it ends; read it after.
        const health = await boardHealthOf(db, incident.boardId);
        if (failed.length === 0 && health?.health !== 'bad') return this.recovered(incident, now, 'health checks passed');
        const why = `health checks failed after recovery: ${health?.reason ?? `run${failed.length === 1 ? '' : 's'} ${failed.join(', ')} did not succeed`}`;
        await noteLastActionOutcome(db, incident, 'failed');
        await closeIncident(db, incident, 'bad', now, why);
        this.deps.log.error({ board_id: incident.boardId, incident_id: incident.id }, why);
        return;
      }
      case 'closed':
        return;
    }
  }

  /** The board is back: its health checks run (none match: it is back in service now). */
  private async startChecks(incident: IncidentRow, from: 'detected' | 'booting', now: Date): Promise<void> {
    const claimed = await advanceIncident(this.deps.db, incident.id, from, 'checking', now, { at: now.toISOString(), action: 'health_check', operation_ids: [] });
    if (!claimed) return;
    const runs = await this.deps.healthChecks.runHealthChecksNow(incident.boardId);
    const withRuns = await setLastActionOperations(this.deps.db, claimed, runs.map((r) => r.id));
    if (runs.length === 0) {
      await noteLastActionOutcome(this.deps.db, withRuns, 'no health check matches the board');
      return this.recovered(withRuns, now, 'back online; no health check matches it');
    }
  }

  private async recovered(incident: IncidentRow, now: Date, how: string): Promise<void> {
    const closed = await closeIncident(this.deps.db, incident, 'recovered', now);
    if (!closed) return;
    const seconds = (now.getTime() - closed.startedAt.getTime()) / 1000;
    this.deps.observeRecovery(seconds);
    const cycles = closed.actions.filter((a) => a.action === 'power_cycle').length;
    const summary = `back in service ${seconds.toFixed(1)} s after it hung, ${cycles} power cycle${cycles === 1 ? '' : 's'}; ${how}`;
    this.deps.log.info({ board_id: closed.boardId, incident_id: closed.id, seconds }, 'board recovered');
    const name = (await boardPowerOf(this.deps.db, closed.boardId))?.name;
    await this.deps
      .emit('board.recovered', { board: { id: closed.boardId, name }, incident: toIncidentObject(closed), summary }, { key: `board.recovered:${closed.id}` })
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not tell board.recovered'));
  }
}
