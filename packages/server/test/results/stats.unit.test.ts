import { describe, expect, it } from 'vitest';
import { mannWhitneyCdf, median, medianCiRanks, quantileSorted, shift, summarize } from '../../src/results/stats.ts';

// Known answers computed independently on 2026-11-28 with python3 (numpy 2.4.6, scipy 1.17.1):
// numpy.quantile (default linear method) for quartiles, scipy.stats.binom.cdf for the ranks of the
// median's interval, and a brute-force enumeration of all C(m+n, m) rank sets for the Mann–Whitney
// distribution and the Hodges–Lehmann interval (the script is quoted in docs/results.md).

describe('summary of one sample', () => {
  const x = [31.2, 29.8, 30.5, 30.1, 29.9, 30.7, 30.3, 29.6, 30.0, 30.4];

  it('median and quartiles match numpy', () => {
    expect(median(x)).toBeCloseTo(30.2, 10);
    const s = [...x].sort((a, b) => a - b);
    expect(quantileSorted(s, 0.25)).toBeCloseTo(29.925, 10);
    expect(quantileSorted(s, 0.75)).toBeCloseTo(30.475, 10);
  });

  it('ranks of the 95 % interval of the median match the binomial (scipy) and the published table', () => {
    // n = 10 → (2, 9), 97.85 % coverage; n = 20 → (6, 15), 95.86 %; n = 50 → (18, 33), 96.72 %;
    // n = 6 → (1, 6), 96.88 %; n = 5: none reaches 95 % (1 − 2/32 = 93.75 %).
    expect(medianCiRanks(5)).toBeUndefined();
    expect(medianCiRanks(6)).toEqual([1, 6]);
    expect(medianCiRanks(10)).toEqual([2, 9]);
    expect(medianCiRanks(20)).toEqual([6, 15]);
    expect(medianCiRanks(50)).toEqual([18, 33]);
  });

  it('summarize gives the order statistics of those ranks', () => {
    const s = summarize(x);
    expect(s.n).toBe(10);
    // sorted: 29.6 29.8 29.9 30.0 30.1 30.3 30.4 30.5 30.7 31.2 → ranks 2 and 9
    expect(s.ci95).toEqual([29.8, 30.7]);
    expect(summarize([5, 1, 3]).ci95).toEqual([1, 5]);
    expect(summarize([4])).toEqual({ n: 1, median: 4, q1: 4, q3: 4, ci95: [4, 4] });
  });
});

describe('Mann–Whitney distribution and the shift', () => {
  it('the recurrence matches a brute-force enumeration', () => {
    // P(U ≤ 0) at 3×3 = 1/20; the largest u with P(U ≤ u) ≤ 2.5 %: 4×5 → 1 (P = 0.015873),
    // 5×5 → 2 (0.015873), 10×10 → 23 (0.021629; the published two-sided 5 % critical value of U is 23).
    expect(mannWhitneyCdf(3, 3)[0]).toBeCloseTo(0.05, 12);
    const c45 = mannWhitneyCdf(4, 5);
    expect(c45[1]).toBeCloseTo(0.015873015873015872, 12);
    expect(c45[2]).toBeCloseTo(0.031746031746031744, 12);
    const c55 = mannWhitneyCdf(5, 5);
    expect(c55[2]).toBeCloseTo(0.015873015873015872, 12);
    expect(c55[3]).toBeCloseTo(0.027777777777777776, 12);
    const c1010 = mannWhitneyCdf(10, 10);
    expect(c1010[23]).toBeCloseTo(0.02162852627248912, 12);
    expect(c1010[24]).toBeCloseTo(0.026212951135551756, 12);
    expect(c1010[100]).toBeCloseTo(1, 12);
  });

  it('Hodges–Lehmann estimate and its exact interval', () => {
    const b = [30.0, 30.6, 29.4, 30.2, 29.9, 30.8, 29.7, 30.1, 30.3, 29.5];
    const c = [29.1, 29.5, 28.7, 29.6, 29.0, 29.9, 28.8, 29.3, 29.4, 28.6];
    const s = shift(b, c);
    expect(s.estimate).toBeCloseTo(-0.85, 10);
    expect(s.ci95![0]).toBeCloseTo(-1.3, 10);
    expect(s.ci95![1]).toBeCloseTo(-0.4, 10);
  });

  it('no interval from 3 and 3 runs', () => {
    expect(shift([1, 2, 3], [4, 5, 6]).ci95).toBeUndefined();
    expect(shift([1, 2, 3], [4, 5, 6]).estimate).toBe(3);
  });

  it('100 × 100 is computed in reasonable time and is symmetric', () => {
    const c = mannWhitneyCdf(100, 100);
    expect(c.length).toBe(10_001);
    expect(c[5000]! - 0.5).toBeGreaterThan(0);
    expect(c[4999]!).toBeCloseTo(1 - c[5000]!, 10);
  });
});

describe('large samples', () => {
  it('the normal approximation beyond 2500 pairs stays close to the exact interval', () => {
    const b = Array.from({ length: 60 }, (_, i) => 100 + ((i * 37) % 60) / 10);
    const c = b.map((x) => x - 1);
    const s = shift(b, c); // 3600 pairs: approximated
    expect(s.estimate).toBeCloseTo(-1, 10);
    expect(s.ci95![0]).toBeLessThan(-1);
    expect(s.ci95![1]).toBeGreaterThan(-1);
    // exact k at 50×50 (2500 pairs) vs the approximation's: within one rank of each other
    const cdf = mannWhitneyCdf(50, 50);
    let k = 0;
    while (cdf[k]! <= 0.025) k++;
    const approx = Math.floor(1250 - 1.959964 * Math.sqrt((2500 * 101) / 12));
    expect(Math.abs(k - approx)).toBeLessThanOrEqual(1);
  });
});
