/**
 * The statistics of repeated runs (docs/results.md). Pure: no I/O, no clock, no randomness,
 * so a verdict is the same every time it is computed from the same runs.
 *
 * - A sample's summary: median, quartiles (linear interpolation between order statistics,
 *   numpy's default "type 7"), and a 95 % confidence interval of the median from order
 *   statistics (exact, distribution-free: the binomial interval, e.g. Conover, *Practical
 *   Nonparametric Statistics*, 3rd ed., §3.2).
 * - Two samples: the shift between them by Hodges–Lehmann (the median of all pairwise
 *   differences) with its exact 95 % confidence interval from the Mann–Whitney distribution
 *   (Bauer 1972; what R's `wilcox.test(conf.int = TRUE)` computes for small samples).
 */

export interface Summary {
  n: number;
  median: number;
  q1: number;
  q3: number;
  /** 95 % confidence interval of the median; with n < 6 no interval reaches 95 %: the range. */
  ci95: [number, number];
}

const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/** The p-quantile of sorted values, linear between order statistics (numpy's default). */
export function quantileSorted(s: readonly number[], p: number): number {
  if (s.length === 0) throw new RangeError('quantile of no values');
  const h = (s.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo]! + (h - lo) * (s[hi]! - s[lo]!);
}

export function median(xs: readonly number[]): number {
  return quantileSorted(sorted(xs), 0.5);
}

/** P(B ≤ k) for B ~ Binomial(n, 1/2). */
function binomHalfCdf(n: number, k: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  // log-space sum: exact enough for n ≤ a few thousand.
  let term = Math.pow(0.5, n); // C(n,0) / 2^n
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term *= (n - i + 1) / i;
    sum += term;
  }
  return Math.min(1, sum);
}

/**
 * The 1-based ranks (j, n + 1 − j) of the order statistics bounding a confidence interval of
 * the median with at least `level` coverage: the largest j with P(B ≤ j − 1) ≤ (1 − level)/2,
 * B ~ Binomial(n, ½). Undefined when even (1, n) covers less than `level` (n < 6 at 95 %).
 */
export function medianCiRanks(n: number, level = 0.95): [number, number] | undefined {
  const tail = (1 - level) / 2;
  let j = 0;
  while (j + 1 <= n && binomHalfCdf(n, j) <= tail + 1e-12) j++;
  // j is now the largest rank with P(B ≤ j − 1) ≤ tail.
  if (j < 1) return undefined;
  return [j, n + 1 - j];
}

/** median, quartiles and the 95 % interval of the median of one metric's runs. */
export function summarize(xs: readonly number[]): Summary {
  const s = sorted(xs);
  const n = s.length;
  if (n === 0) throw new RangeError('summary of no values');
  const ranks = medianCiRanks(n);
  const ci95: [number, number] = ranks ? [s[ranks[0] - 1]!, s[ranks[1] - 1]!] : [s[0]!, s[n - 1]!];
  return { n, median: quantileSorted(s, 0.5), q1: quantileSorted(s, 0.25), q3: quantileSorted(s, 0.75), ci95 };
}

/**
 * The exact null distribution of the Mann–Whitney U for sample sizes m, n (no ties):
 * `cdf[u]` = P(U ≤ u), u = 0…mn. Built by the recurrence
 * p(i, j, u) = i/(i+j)·p(i−1, j, u−j) + j/(i+j)·p(i, j−1, u), O(m²n²/4) (2.5·10⁷ steps at 100×100).
 */
export function mannWhitneyCdf(m: number, n: number): Float64Array {
  // prev[j] = distribution for (i−1, j); cur[j] = for (i, j).
  let prev: Float64Array[] = [];
  for (let j = 0; j <= n; j++) prev.push(Float64Array.of(1)); // i = 0: U = 0 surely
  for (let i = 1; i <= m; i++) {
    const cur: Float64Array[] = [Float64Array.of(1)]; // j = 0
    for (let j = 1; j <= n; j++) {
      const size = i * j + 1;
      const d = new Float64Array(size);
      const a = prev[j]!; // (i−1, j): shifted by j
      const b = cur[j - 1]!; // (i, j−1)
      const pa = i / (i + j);
      const pb = j / (i + j);
      for (let u = 0; u < a.length; u++) d[u + j]! += pa * a[u]!;
      for (let u = 0; u < b.length; u++) d[u]! += pb * b[u]!;
      cur.push(d);
    }
    prev = cur;
  }
  const pdf = prev[n]!;
  const cdf = new Float64Array(pdf.length);
  let acc = 0;
  for (let u = 0; u < pdf.length; u++) cdf[u] = acc += pdf[u]!;
  return cdf;
}

export interface Shift {
  /** Hodges–Lehmann estimate of current − baseline: the median of all pairwise differences. */
  estimate: number;
  /** 95 % confidence interval of the shift; undefined when the sizes allow none (e.g. 3 and 3). */
  ci95: [number, number] | undefined;
}

const cdfCache = new Map<string, Float64Array>();
/** Up to this many pairs (m·n) the exact distribution is used; beyond, the normal approximation. */
export const EXACT_MAX_PAIRS = 2500;

/**
 * The shift of `current` against `baseline` (Hodges–Lehmann) and its exact 95 % interval:
 * with the m·n differences current[j] − baseline[i] sorted as D(1…mn), the interval is
 * [D(k), D(mn + 1 − k)] where k − 1 is the largest u with P(U ≤ u) ≤ 2.5 %.
 */
export function shift(baseline: readonly number[], current: readonly number[]): Shift {
  const m = baseline.length;
  const n = current.length;
  if (m === 0 || n === 0) throw new RangeError('shift of an empty sample');
  const d: number[] = [];
  for (const y of current) for (const x of baseline) d.push(y - x);
  d.sort((a, b) => a - b);
  const estimate = quantileSorted(d, 0.5);
  const key = m <= n ? `${m}x${n}` : `${n}x${m}`;
  if (m * n > EXACT_MAX_PAIRS) {
    // Large samples: the normal approximation of U (mean mn/2, variance mn(m+n+1)/12).
    const k = Math.max(1, Math.floor((m * n) / 2 - 1.959964 * Math.sqrt((m * n * (m + n + 1)) / 12)));
    return { estimate, ci95: [d[k - 1]!, d[m * n - k]!] };
  }
  let cdf = cdfCache.get(key);
  if (!cdf) {
    cdf = mannWhitneyCdf(Math.min(m, n), Math.max(m, n));
    if (cdfCache.size > 256) cdfCache.clear();
    cdfCache.set(key, cdf);
  }
  let k = 0; // number of differences cut from each end
  while (k < cdf.length && cdf[k]! <= 0.025 + 1e-12) k++;
  if (k < 1) return { estimate, ci95: undefined };
  return { estimate, ci95: [d[k - 1]!, d[m * n - k]!] };
}
