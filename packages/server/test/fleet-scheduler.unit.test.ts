import { ManualClock } from '@mm/protocol';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../src/events/event-bus.ts';
import { FleetScheduler } from '../src/fleet/scheduler.ts';
import type { IdleBoard, IdleBoardFilter, SchedulerStore } from '../src/fleet/scheduler-store.ts';
import type { OperationRow } from '../src/operations/operation-object.ts';
import type { SchedulingHooks } from '../src/operations/operations.ts';
import { matchesSelector, type BoardSelector } from '../src/boards/board-selector.ts';

/**
 * The fleet scheduler's decisions, alone: its store is an in-memory fake (what PgSchedulerStore
 * answers from PostgreSQL: test/fleet-scheduler-locks.test.ts and test/e2e/fleet-scheduler.test.ts
 * cover that side), its time a ManualClock.
 */
const log = pino({ level: 'silent' });

interface FakeBoard {
  id: string;
  labels: Record<string, string>;
  idleSince: number;
  linked: boolean;
  health: 'good' | 'bad';
}
interface FakeOp {
  id: number;
  selector: BoardSelector | null;
  priority: number;
  boardId: string | null;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  deadline: number | null;
  healthCheckId: number | null;
}

class FakeStore implements SchedulerStore {
  boards: FakeBoard[] = [];
  ops: FakeOp[] = [];
  calls: Record<string, number> = {};
  /** What refreshBoardHealth answers next. */
  nextHealth: { verdict: { health: 'good' | 'bad'; reason: string }; changed: boolean } | undefined;
  constructor(private readonly clock: ManualClock) {}
  private count(name: string) {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
  }
  board(id: string, labels: Record<string, string>, idleSince = 0): void {
    this.boards.push({ id, labels, idleSince, linked: true, health: 'good' });
  }
  work(selector: BoardSelector, priority = 0, deadline: number | null = null): FakeOp {
    const op: FakeOp = { id: this.ops.length + 1, selector, priority, boardId: null, status: 'queued', deadline, healthCheckId: null };
    this.ops.push(op);
    return op;
  }
  private busy(boardId: string): boolean {
    return this.ops.some((o) => o.boardId === boardId && (o.status === 'queued' || o.status === 'running'));
  }
  private waiting(): FakeOp[] {
    return this.ops.filter((o) => o.status === 'queued' && o.boardId === null && o.selector !== null);
  }
  async waitingSelectors(): Promise<BoardSelector[]> {
    this.count('waitingSelectors');
    return [...new Map(this.waiting().map((o) => [JSON.stringify(o.selector), o.selector!])).values()];
  }
  async idleBoards(only?: IdleBoardFilter): Promise<IdleBoard[]> {
    this.count('idleBoards');
    const found = this.boards
      .filter((b) => b.linked && b.health !== 'bad' && !this.busy(b.id))
      .filter((b) => !only?.boardIds || only.boardIds.includes(b.id))
      .filter((b) => !only?.selectors || only.selectors.some((s) => matchesSelector(b.labels, s)))
      .sort((a, b) => a.idleSince - b.idleSince);
    return found.slice(0, only?.limit ?? found.length).map((b) => ({ id: b.id, labels: b.labels }));
  }
  async assign(board: IdleBoard): Promise<OperationRow | undefined> {
    this.count('assign');
    if (this.busy(board.id)) return undefined;
    const op = this.waiting()
      .filter((o) => matchesSelector(board.labels, o.selector!))
      .sort((a, b) => b.priority - a.priority || a.id - b.id)[0];
    if (!op) return undefined;
    op.boardId = board.id;
    return { id: op.id, boardId: board.id, priority: op.priority } as OperationRow;
  }
  async anyWaitingFor(labels: Record<string, string>): Promise<boolean> {
    this.count('anyWaitingFor');
    return this.waiting().some((o) => matchesSelector(labels, o.selector!));
  }
  async anyBoardMatches(selector: BoardSelector): Promise<boolean> {
    return this.boards.some((b) => matchesSelector(b.labels, selector));
  }
  async releaseStranded(): Promise<number[]> {
    this.count('releaseStranded');
    const out: number[] = [];
    for (const o of this.ops) {
      const b = this.boards.find((x) => x.id === o.boardId);
      if (o.status === 'queued' && o.selector && b && (!b.linked || b.health === 'bad')) {
        o.boardId = null;
        out.push(o.id);
      }
    }
    return out;
  }
  async clearStaleBusy(): Promise<number> {
    this.count('clearStaleBusy');
    return 0;
  }
  async expireQueued(): Promise<number> {
    this.count('expireQueued');
    let n = 0;
    for (const o of this.ops) {
      if (o.status === 'queued' && o.deadline !== null && o.deadline <= this.clock.now()) {
        o.status = 'failed';
        n++;
      }
    }
    return n;
  }
  async createDueCheckRuns(): Promise<number> {
    this.count('createDueCheckRuns');
    return 0;
  }
  async resync(): Promise<void> {
    this.count('resync');
  }
  async markIdleSince(boardId: string): Promise<void> {
    this.count('markIdleSince');
    this.boards.find((b) => b.id === boardId)!.idleSince = this.clock.now();
  }
  async refreshBoardHealth(boardId: string) {
    this.count('refreshBoardHealth');
    const h = this.nextHealth;
    if (h) this.boards.find((b) => b.id === boardId)!.health = h.verdict.health;
    return h as never;
  }
  /** The operation ends on its board (as Operations.finish would store it). */
  end(op: FakeOp): OperationRow {
    op.status = 'succeeded';
    return { id: op.id, boardId: op.boardId, healthCheckId: op.healthCheckId, status: 'succeeded' } as OperationRow;
  }
}

const SWEEP_MS = 5_000;
let running: FleetScheduler | undefined;

function setup() {
  const clock = new ManualClock();
  const store = new FakeStore(clock);
  const bus = new InProcessEventBus();
  let hooks: SchedulingHooks | undefined;
  const scheduler = new FleetScheduler({ store, bus, attach: (h) => (hooks = h), log, sweepMs: SWEEP_MS, clock });
  running = scheduler;
  return { clock, store, bus, scheduler, hooks: () => hooks };
}

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe('fleet scheduler (in-memory store, manual clock)', () => {
  it('gives new work the longest-idle matching board, highest priority first, when Operations announces it', async () => {
    const { store, scheduler, hooks } = setup();
    store.board('a1', { pool: 'a' }, 30);
    store.board('a2', { pool: 'a' }, 10);
    store.board('b1', { pool: 'b' }, 0);
    scheduler.start();
    await scheduler.idle();
    expect(hooks()).toBe(scheduler);
    const low = store.work({ pool: 'a' }, 0);
    const high = store.work({ pool: 'a' }, 5);
    hooks()!.workCreated({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(high.boardId).toBe('a2'); // idle longest, takes the highest priority
    expect(low.boardId).toBe('a1');
    // A pass for new work knows its selector: it does not ask which selectors wait.
    expect(store.calls['waitingSelectors']).toBe(1); // the start's full pass only
  });

  it('a pass for N new operations walks N boards at most, and stops walking a selector with nothing left', async () => {
    const { store, scheduler, hooks } = setup();
    for (let i = 0; i < 10; i++) store.board(`a${i}`, { pool: 'a' }, i);
    scheduler.start();
    await scheduler.idle();
    const op = store.work({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(op.boardId).toBe('a0');
    expect(store.calls['assign']).toBe(1);
    // Work another replica already took: the first board that finds nothing ends the walk.
    store.calls = {};
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(store.calls['assign']).toBe(1);
    expect(store.calls['anyWaitingFor']).toBe(1);
  });

  it('one wake-up per operation end: the board is marked idle, then takes the next waiting work', async () => {
    const { store, scheduler, hooks, bus } = setup();
    store.board('a1', { pool: 'a' });
    scheduler.start();
    const first = store.work({ pool: 'a' });
    const second = store.work({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(first.boardId).toBe('a1');
    expect(second.boardId).toBeNull();
    store.calls = {};
    // The bus's end event no longer wakes the scheduler (Operations calls boardFreed once).
    bus.publish('operation.event', first.id, { operationId: first.id, event: { type: 'end', seq: 3, data: {} } as never });
    expect(store.calls).toEqual({});
    hooks()!.boardFreed(store.end(first));
    await new Promise((r) => setTimeout(r, 0));
    await scheduler.idle();
    expect(second.boardId).toBe('a1');
    expect(store.calls['markIdleSince']).toBe(1);
    expect(store.calls['idleBoards']).toBe(1);
    expect(store.calls['refreshBoardHealth']).toBeUndefined(); // not a health-check run
  });

  it('a health-check run that turns its board bad sends the board’s waiting assignment back', async () => {
    const { store, scheduler, hooks } = setup();
    store.board('a1', { pool: 'a' });
    scheduler.start();
    await scheduler.idle();
    const check = store.work({ pool: 'a' });
    check.healthCheckId = 9;
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    store.nextHealth = { verdict: { health: 'bad', reason: 'fps 2 < 10' }, changed: true };
    store.calls = {};
    hooks()!.boardFreed(store.end(check));
    await new Promise((r) => setTimeout(r, 0));
    await scheduler.idle();
    expect(store.calls['refreshBoardHealth']).toBe(1);
    expect(store.calls['releaseStranded']).toBe(1);
    // A bad board takes no selector work.
    const next = store.work({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(next.boardId).toBeNull();
  });

  it('the sweep runs on the injected clock: queue deadlines (that clock’s time), stranded work, due checks, a full pass', async () => {
    const { clock, store, scheduler } = setup();
    store.board('b1', { pool: 'b' });
    scheduler.start();
    await scheduler.idle();
    const op = store.work({ pool: 'nowhere' }, 0, clock.now() + 7_000);
    await clock.advanceAsync(SWEEP_MS);
    await scheduler.sweep(); // the one the timer started, awaited
    expect(op.status).toBe('queued');
    await clock.advanceAsync(SWEEP_MS);
    await scheduler.sweep();
    expect(op.status).toBe('failed');
    expect(store.calls['expireQueued']).toBeGreaterThanOrEqual(2);
    expect(store.calls['createDueCheckRuns']).toBeGreaterThanOrEqual(2);
    expect(store.calls['resync']).toBeGreaterThanOrEqual(2);
  });

  it('a board online again takes waiting work; stop detaches from Operations', async () => {
    const { store, scheduler, hooks, bus } = setup();
    store.board('a1', { pool: 'a' });
    store.boards[0]!.linked = false;
    scheduler.start();
    const op = store.work({ pool: 'a' });
    hooks()!.workCreated({ pool: 'a' });
    await scheduler.idle();
    expect(op.boardId).toBeNull();
    store.boards[0]!.linked = true;
    bus.publish('board.status', 'a1', { boardId: 'a1', status: 'online' });
    await scheduler.idle();
    expect(op.boardId).toBe('a1');
    await scheduler.stop();
    expect(hooks()).toBeUndefined();
  });
});
