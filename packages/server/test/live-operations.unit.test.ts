/** The one record per live operation: made on demand, dropped whole, never made again once ended. */
import { describe, expect, it } from 'vitest';
import { LiveOperations } from '../src/operations/live-operations.ts';

describe('LiveOperations', () => {
  it('keeps one record per operation until it is closed, and none after', () => {
    const live = new LiveOperations();
    const a = live.open(1)!;
    a.agentLogEnd = 10;
    expect(live.open(1)).toBe(a);
    expect(live.size).toBe(1);
    expect(live.close(1)).toBe(a);
    expect(live.size).toBe(0);
    // Late messages of an ended operation make no record again (nothing would ever drop it).
    expect(live.open(1)).toBeUndefined();
    expect(live.hasEnded(1)).toBe(true);
    expect(live.close(2)).toBeUndefined();
    expect(live.hasEnded(2)).toBe(true);
  });

  it('finds the agent operation of a board (the newest), and remembers at most 1000 ended ids', () => {
    const live = new LiveOperations();
    live.open(5)!.agent = { boardId: 'b', kind: 'transfer', invocationId: 1, files: [] };
    live.open(7)!.agent = { boardId: 'b', kind: 'execute', invocationId: 1, files: [] };
    live.open(9)!.agent = { boardId: 'c', kind: 'execute', invocationId: 2, files: [] };
    live.open(11);
    expect(live.agentOnBoard('b')?.id).toBe(7);
    expect(live.agentOnBoard('c')?.id).toBe(9);
    expect(live.agentOnBoard('d')).toBeUndefined();
    for (let id = 100; id < 1101; id++) live.close(id);
    expect(live.hasEnded(100)).toBe(false);
    expect(live.hasEnded(101)).toBe(true);
    expect(live.open(100)).toBeDefined();
  });
});
