import { describe, expect, it } from 'vitest';
import { estimates, planGrants, positions, queueKey, type CandidateBoard, type WaitingRequest } from '../src/reservations/reservation-queue.ts';

/** The reservation queue's rules without a database (reservations/reservation-queue.ts). */
const req = (id: number, target: string | Record<string, string>, durationS = 3600): WaitingRequest =>
  typeof target === 'string' ? { id, boardId: target, boardSelector: null, durationS } : { id, boardId: null, boardSelector: target, durationS };
const board = (id: string, labels: Record<string, string>, more: Partial<CandidateBoard> = {}): CandidateBoard => ({ id, labels, idle: true, reserved: false, ...more });

describe('reservation queue', () => {
  it('first come, first served: the oldest request that a free board satisfies takes it', () => {
    const boards = [board('b1', { lab: 'x' })];
    // 3 is older than 5 and 7 although listed last: ids decide, not the order given.
    const grants = planGrants([req(7, 'b1'), req(5, { lab: 'x' }), req(3, { lab: 'x' })], boards);
    expect(grants).toEqual([{ requestId: 3, boardId: 'b1' }]);
  });

  it('a board is given once; each free board goes to the next request in line', () => {
    const boards = [board('b1', { lab: 'x' }), board('b2', { lab: 'x' }), board('b3', { lab: 'y' })];
    expect(planGrants([req(1, { lab: 'x' }), req(2, { lab: 'x' }), req(3, { lab: 'x' }), req(4, { lab: 'y' })], boards)).toEqual([
      { requestId: 1, boardId: 'b1' },
      { requestId: 2, boardId: 'b2' },
      { requestId: 4, boardId: 'b3' },
    ]);
  });

  it('selector requests take only idle, unreserved boards; a named request only needs it unreserved', () => {
    const boards = [board('busy', { lab: 'x' }, { idle: false }), board('held', { lab: 'x' }, { reserved: true })];
    expect(planGrants([req(1, { lab: 'x' })], boards)).toEqual([]);
    expect(planGrants([req(1, 'busy')], boards)).toEqual([{ requestId: 1, boardId: 'busy' }]);
    expect(planGrants([req(1, 'held')], boards)).toEqual([]);
    expect(planGrants([req(1, 'unknown')], boards)).toEqual([]);
  });

  it('a waiting request keeps its line waiting, but not another line', () => {
    const boards = [board('b1', { lab: 'x', cam: 'yes' }, { reserved: true }), board('b2', { lab: 'x' })];
    // 1 wants a camera board (none free): 2 (same line) waits too; 3 (another line) may take b2.
    expect(planGrants([req(1, { cam: 'yes' }), req(2, { cam: 'yes' }), req(3, { lab: 'x' })], boards)).toEqual([{ requestId: 3, boardId: 'b2' }]);
  });

  it('positions count within each line; a selector line is the same whatever the order of its keys', () => {
    expect(queueKey(req(1, { a: '1', b: '2' }))).toBe(queueKey(req(2, { b: '2', a: '1' })));
    const p = positions([req(1, { a: '1', b: '2' }), req(2, 'b1'), req(3, { b: '2', a: '1' }), req(4, 'b1'), req(5, { a: '1' })]);
    expect(Object.fromEntries(p)).toEqual({ 1: 1, 2: 1, 3: 2, 4: 2, 5: 1 });
  });

  it('estimates: each request ahead in its line takes the first board to free and holds it for its duration', () => {
    const now = 1_000_000;
    const leases = [
      { boardId: 'b1', labels: { lab: 'x' }, endsAt: now + 60_000 },
      { boardId: 'b2', labels: { lab: 'x' }, endsAt: now + 600_000 },
    ];
    const e = estimates([req(1, { lab: 'x' }, 100), req(2, { lab: 'x' }, 100), req(3, { lab: 'x' }, 100), req(4, 'b2'), req(5, { lab: 'none' })], leases, now);
    expect(e.get(1)).toBe(now + 60_000);
    // b1 again after request 1's 100 s, before b2 ends.
    expect(e.get(2)).toBe(now + 160_000);
    expect(e.get(3)).toBe(now + 260_000);
    expect(e.get(4)).toBe(now + 600_000);
    expect(e.get(5)).toBeNull();
  });
});
