import { ManualClock } from '@mm/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../src/events/event-bus.ts';
import '../src/operations/operation-bus-topics.ts';
import { RolloutEngine, ROLLOUT_SWEEP_MS, type ActiveStep, type RolloutEngineStore } from '../src/rollouts/rollout-engine.ts';
import type { RolloutBoardRow, RolloutRow } from '../src/rollouts/rollout-object.ts';
import type { OperationObject } from '../src/operations/operation-object.ts';

/**
 * The rollout engine's decisions, alone: phases in order, the batch interval on the injected
 * clock, the automatic abort, steps that cannot start. Its store is an in-memory fake (the
 * PostgreSQL one, rollout-store.ts, is covered end to end by test/e2e/rollouts*.test.ts).
 */
const log = pino({ level: 'silent' });

interface FakeOp {
  id: number;
  boardId: string;
  status: string;
}

class FakeRolloutStore implements RolloutEngineStore {
  rollout!: RolloutRow;
  steps: RolloutBoardRow[] = [];
  ops = new Map<number, FakeOp>();
  constructor(clock: ManualClock, opts: { boards: number; batchSize: number; batchIntervalS: number; abort?: RolloutRow['abort'] }) {
    this.rollout = {
      id: 1,
      kind: 'execute',
      status: 'running',
      boardSelector: {},
      invocationId: 1,
      params: {},
      batchSize: opts.batchSize,
      batchIntervalS: opts.batchIntervalS,
      abort: opts.abort ?? null,
      phasesStarted: 0,
      phaseEndedAt: null,
      createdBy: null,
      createdAt: new Date(clock.now()),
      finishedAt: null,
      leftOut: [],
    } as RolloutRow;
    for (let i = 0; i < opts.boards; i++) {
      this.steps.push({
        rolloutId: 1,
        position: i,
        boardId: `b${i}`,
        boardName: `b${i}`,
        phase: Math.floor(i / opts.batchSize),
        status: 'pending',
        claimedBy: null,
        claimedAt: null,
        operationId: null,
        runMs: null,
        metrics: null,
        finishedAt: null,
      } as RolloutBoardRow);
    }
  }
  private step(position: number) {
    return this.steps.find((s) => s.position === position)!;
  }
  async findRollout(id: number) {
    return id === 1 ? { ...this.rollout } : undefined;
  }
  async stepsOf() {
    return this.steps.map((s) => ({ ...s }));
  }
  async activeSteps(): Promise<ActiveStep[]> {
    return this.steps
      .filter((s) => (s.status === 'queued' || s.status === 'running') && s.operationId !== null)
      .map((s) => {
        const op = this.ops.get(s.operationId!);
        return { position: s.position, stepStatus: s.status, operationId: s.operationId, opStatus: op?.status ?? null, result: null, startedAt: null, finishedAt: null };
      });
  }
  async updateStep(_id: number, position: number, from: string, to: { status: string; finishedAt?: Date | null }) {
    const s = this.step(position);
    if (s.status !== from) return false;
    Object.assign(s, to);
    return true;
  }
  async staleClaims() {
    return [];
  }
  async unclaimStep() {}
  async changeStatus(_id: number, from: string[], to: string) {
    if (!from.includes(this.rollout.status)) return undefined;
    this.rollout.status = to;
    return { ...this.rollout };
  }
  async skipPending(_id: number, at: Date) {
    let n = 0;
    for (const s of this.steps) {
      if (s.status !== 'pending') continue;
      Object.assign(s, { status: 'skipped', finishedAt: at });
      n++;
    }
    return n;
  }
  async markPhaseEnded(_id: number, phasesStarted: number, at: Date) {
    if (this.rollout.phasesStarted === phasesStarted && !this.rollout.phaseEndedAt) this.rollout.phaseEndedAt = at;
  }
  async claimPhase(_id: number, phasesStarted: number) {
    if (this.rollout.phasesStarted !== phasesStarted || this.rollout.status !== 'running') return undefined;
    this.rollout.phasesStarted = phasesStarted + 1;
    this.rollout.phaseEndedAt = null;
    return { ...this.rollout };
  }
  async claimStep(_id: number, position: number, replicaId: string, at: Date) {
    const s = this.step(position);
    if (s.status !== 'pending' || this.rollout.status !== 'running') return false;
    Object.assign(s, { status: 'starting', claimedBy: replicaId, claimedAt: at });
    return true;
  }
  async recordStepOperation(_id: number, position: number, operationId: number) {
    const s = this.step(position);
    if (s.status === 'starting') Object.assign(s, { operationId, status: 'queued' });
  }
  async failStep(_id: number, position: number, at: Date) {
    const s = this.step(position);
    if (s.status === 'starting' || s.status === 'pending') Object.assign(s, { status: 'failed', finishedAt: at });
  }
  async markFinished(_id: number, at: Date) {
    if (this.rollout.finishedAt || !['succeeded', 'failed', 'aborted', 'cancelled'].includes(this.rollout.status)) return undefined;
    this.rollout.finishedAt = at;
    return { ...this.rollout };
  }
  async rolloutsOfOperation(operationId: number) {
    return this.steps.some((s) => s.operationId === operationId) ? [1] : [];
  }
  async openRolloutIds() {
    return this.rollout.finishedAt ? [] : [1];
  }
  async skipStep(_id: number, position: number, at: Date) {
    const s = this.step(position);
    if (s.status === 'starting' || s.status === 'pending') Object.assign(s, { status: 'skipped', finishedAt: at, claimedBy: null, claimedAt: null });
  }
}

let engine: RolloutEngine | undefined;
afterEach(async () => {
  await engine?.stop();
  engine = undefined;
});

function setup(opts: { boards: number; batchSize: number; batchIntervalS: number; abort?: RolloutRow['abort']; refuse?: string[] }) {
  const clock = new ManualClock();
  const store = new FakeRolloutStore(clock, opts);
  const bus = new InProcessEventBus();
  let nextOp = 100;
  const created: string[] = [];
  engine = new RolloutEngine({
    store,
    bus,
    clock,
    log,
    replicaId: 'r1',
    isReplicaAlive: async () => true,
    createStep: async (_rollout, boardId) => {
      if (opts.refuse?.includes(boardId)) throw new Error('board offline');
      const op: FakeOp = { id: nextOp++, boardId, status: 'queued' };
      store.ops.set(op.id, op);
      created.push(boardId);
      return { id: op.id } as OperationObject;
    },
  });
  /** The board's step operation ends, as Operations would announce it. */
  const end = async (boardId: string, status: 'succeeded' | 'failed') => {
    const op = [...store.ops.values()].find((o) => o.boardId === boardId)!;
    op.status = status;
    bus.publish('operation.event', op.id, { operationId: op.id, event: { type: 'end', seq: 9, data: {} } as never });
    await settle();
  };
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      await engine!.settled(1);
    }
  };
  return { clock, store, engine, created, end, settle };
}

describe('rollout engine (in-memory store, manual clock)', () => {
  it('starts the phases in order, the next one batch_interval_s after the previous ended (on the injected clock)', async () => {
    const { clock, store, engine, created, end, settle } = setup({ boards: 4, batchSize: 2, batchIntervalS: 60 });
    engine.start();
    await settle();
    expect(created).toEqual(['b0', 'b1']);
    await end('b0', 'succeeded');
    expect(created).toHaveLength(2);
    await end('b1', 'succeeded');
    // The first phase ended: the second waits its interval.
    expect(store.rollout.phaseEndedAt?.getTime()).toBe(clock.now());
    await clock.advanceAsync(59_000);
    await settle();
    expect(created).toHaveLength(2);
    await clock.advanceAsync(1_000);
    await settle();
    expect(created).toEqual(['b0', 'b1', 'b2', 'b3']);
    await end('b2', 'succeeded');
    await end('b3', 'succeeded');
    expect(store.rollout.status).toBe('succeeded');
    expect(store.rollout.finishedAt).not.toBeNull();
  });

  it('aborts once the failed share is reached, and skips what had not started', async () => {
    const { store, engine, created, end, settle } = setup({ boards: 6, batchSize: 2, batchIntervalS: 0, abort: { failure_percent: 50, min_finished: 2 } });
    engine.start();
    await settle();
    await end('b0', 'failed');
    expect(store.rollout.status).toBe('running'); // 1 finished: below min_finished
    await end('b1', 'succeeded');
    expect(store.rollout.status).toBe('aborted');
    expect(created).toEqual(['b0', 'b1']);
    expect(store.steps.filter((s) => s.status === 'skipped')).toHaveLength(4);
    expect(store.rollout.finishedAt).not.toBeNull();
  });

  it('a step whose operation cannot be created fails at once; the rollout still closes', async () => {
    const { store, engine, created, end, settle } = setup({ boards: 2, batchSize: 2, batchIntervalS: 0, refuse: ['b1'] });
    engine.start();
    await settle();
    expect(created).toEqual(['b0']);
    expect(store.steps[1]!.status).toBe('failed');
    await end('b0', 'succeeded');
    expect(store.rollout.status).toBe('failed');
  });

  it('the sweep (every ROLLOUT_SWEEP_MS of the injected clock) catches an end it did not hear', async () => {
    const { clock, store, engine, settle } = setup({ boards: 1, batchSize: 1, batchIntervalS: 0 });
    engine.start();
    await settle();
    [...store.ops.values()][0]!.status = 'succeeded'; // ended on a replica that died before telling anyone
    await settle();
    expect(store.rollout.status).toBe('running');
    await clock.advanceAsync(ROLLOUT_SWEEP_MS);
    await settle();
    expect(store.rollout.status).toBe('succeeded');
  });
});
