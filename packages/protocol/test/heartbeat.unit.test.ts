import { describe, expect, it } from 'vitest';
import { ManualClock, startHeartbeat } from '../src/index.ts';

describe('startHeartbeat', () => {
  it('beats every interval and reports silence once, after the timeout', () => {
    const clock = new ManualClock();
    let beats = 0;
    const silences: number[] = [];
    const hb = startHeartbeat({ clock, intervalMs: 1000, timeoutMs: 3000, beat: () => beats++, onSilent: (ms) => silences.push(ms) });
    clock.advance(2500);
    expect(beats).toBe(2);
    hb.heard();
    clock.advance(2900);
    expect(silences).toEqual([]);
    // Silence is checked every min(interval, timeout / 4): noticed within 750 ms of the timeout.
    clock.advance(850);
    expect(silences.length).toBe(1);
    expect(silences[0]).toBeGreaterThanOrEqual(3000);
    const after = beats;
    clock.advance(10_000);
    expect(beats).toBe(after);
    expect(silences.length).toBe(1);
  });

  it('keeps beating without a timeout until stopped', () => {
    const clock = new ManualClock();
    let beats = 0;
    const hb = startHeartbeat({ clock, intervalMs: 100, beat: () => beats++ });
    clock.advance(1000);
    expect(beats).toBe(10);
    hb.stop();
    clock.advance(1000);
    expect(beats).toBe(10);
    expect(clock.pending).toBe(0);
  });

  it('manual clock sleep resolves when time passes and rejects on abort', async () => {
    const clock = new ManualClock();
    const order: string[] = [];
    const p = clock.sleep(50).then(() => order.push('slept'));
    clock.advance(49);
    await Promise.resolve();
    expect(order).toEqual([]);
    clock.advance(1);
    await p;
    expect(order).toEqual(['slept']);
    const ac = new AbortController();
    const q = clock.sleep(50, ac.signal);
    ac.abort(new Error('stop'));
    await expect(q).rejects.toThrow('stop');
  });
});
