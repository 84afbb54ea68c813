import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from '../src/link/backoff.ts';

describe('fullJitterDelay', () => {
  it('draws from [0, min(cap, base·2^attempt)]', () => {
    expect(fullJitterDelay(0, 500, 30_000, () => 0.999)).toBe(499);
    expect(fullJitterDelay(3, 500, 30_000, () => 0.5)).toBe(2000);
    expect(fullJitterDelay(3, 500, 30_000, () => 0)).toBe(0);
    // Capped, however many attempts.
    expect(fullJitterDelay(10, 500, 30_000, () => 0.999)).toBe(29_970);
    expect(fullJitterDelay(5000, 500, 30_000, () => 0.999)).toBe(29_970);
  });

  it('spreads delays over the whole range (jitter, not a fixed ladder)', () => {
    const delays = Array.from({ length: 2000 }, () => fullJitterDelay(6, 500, 30_000));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(30_000);
    expect(delays.filter((d) => d < 10_000).length).toBeGreaterThan(300);
    expect(delays.filter((d) => d > 20_000).length).toBeGreaterThan(300);
  });
});
