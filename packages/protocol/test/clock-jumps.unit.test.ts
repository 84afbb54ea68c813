import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.ts';

describe('ManualClock jumps', () => {
  it('fires an interval once per long advance when told time jumps, then keeps its period', () => {
    const jumping = new ManualClock(0, { jumps: true });
    const lived = new ManualClock(0);
    let a = 0;
    let b = 0;
    jumping.setInterval(() => a++, 1000);
    lived.setInterval(() => b++, 1000);
    jumping.advance(3_600_000);
    lived.advance(3_600_000);
    expect(a).toBe(1);
    expect(b).toBe(3600);
    jumping.advance(999);
    expect(a).toBe(1);
    jumping.advance(1);
    expect(a).toBe(2);
    jumping.advance(1000);
    expect(a).toBe(3);
  });
});
