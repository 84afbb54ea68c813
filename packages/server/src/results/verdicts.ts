/**
 * Verdict rules of a comparison (docs/results.md, "Verdicts"). Pure.
 */
import { shift, summarize, type Summary } from './stats.ts';

export type Better = 'higher' | 'lower';
export type Verdict = 'regressed' | 'improved' | 'unchanged' | 'inconclusive';

export const DEFAULT_THRESHOLD_PERCENT = 3;

/**
 * Which way is better for a metric, from its name: `*_fps` (and `fps`) higher; `latency*`,
 * `*_ms`, `energy*`, `*power*`, `*temperature*` lower; undefined for others (the caller must
 * say, `directions`).
 */
export function metricDirection(name: string): Better | undefined {
  if (name === 'fps' || name.endsWith('_fps')) return 'higher';
  if (name.startsWith('latency') || name.endsWith('_ms') || name.startsWith('energy') || name.includes('power') || name.includes('temperature')) return 'lower';
  return undefined;
}

export interface BoardComparison {
  baseline: { median: number; ci95: [number, number] };
  current: { median: number; ci95: [number, number] };
  /** The shift (Hodges–Lehmann) in percent of the baseline's median; null when that median is 0. */
  change_pct: number | null;
  /** Its 95 % interval in percent; null when the sample sizes allow none (fewer than 4 + 4 runs, …). */
  ci95_pct: [number, number] | null;
  verdict: Verdict;
  n: { baseline: number; current: number };
}

const round = (x: number, digits = 4) => Number(x.toFixed(digits));

/**
 * One metric on one board. With the interval [lo, hi] of the change turned so that positive
 * is better, and the threshold t (percent):
 * - `regressed`: hi < 0 (significantly worse) and lo < −t (it may be worse by more than t);
 * - `improved`: lo > 0 and hi > t;
 * - `unchanged`: −t ≤ lo and hi ≤ t (any change is within the threshold);
 * - `inconclusive`: otherwise, or when no 95 % interval exists (too few runs) or the
 *   baseline's median is 0.
 */
export function compareSamples(baseline: readonly number[], current: readonly number[], better: Better, thresholdPct: number): BoardComparison {
  const b: Summary = summarize(baseline);
  const c: Summary = summarize(current);
  const s = shift(baseline, current);
  const base = {
    baseline: { median: b.median, ci95: b.ci95 },
    current: { median: c.median, ci95: c.ci95 },
    n: { baseline: b.n, current: c.n },
  };
  if (b.median === 0) return { ...base, change_pct: null, ci95_pct: null, verdict: 'inconclusive' };
  const pct = (x: number) => (x / Math.abs(b.median)) * 100;
  const change_pct = round(pct(s.estimate));
  if (!s.ci95) return { ...base, change_pct, ci95_pct: null, verdict: 'inconclusive' };
  const ci95_pct: [number, number] = [round(pct(s.ci95[0])), round(pct(s.ci95[1]))];
  return { ...base, change_pct, ci95_pct, verdict: verdictOf(ci95_pct, better, thresholdPct) };
}

/** The verdict of a change interval (percent) for a metric whose `better` side is known. */
export function verdictOf(ci95Pct: readonly [number, number], better: Better, thresholdPct: number): Verdict {
  const [lo, hi] = better === 'higher' ? [ci95Pct[0], ci95Pct[1]] : [-ci95Pct[1], -ci95Pct[0]];
  const t = Math.abs(thresholdPct);
  if (hi < 0 && lo < -t) return 'regressed';
  if (lo > 0 && hi > t) return 'improved';
  if (lo >= -t && hi <= t) return 'unchanged';
  return 'inconclusive';
}

/**
 * A metric across boards: `regressed` when it regressed on at least two boards, or on the only
 * board; `improved` likewise (and nowhere regressed); `unchanged` when unchanged on every board;
 * else `inconclusive` (a regression on one board of several is shown on that board but does not
 * make the metric regressed).
 */
export function metricVerdict(boards: readonly Verdict[]): Verdict {
  if (boards.length === 0) return 'inconclusive';
  const count = (v: Verdict) => boards.filter((b) => b === v).length;
  const enough = (k: number) => k >= 2 || (boards.length === 1 && k === 1);
  if (enough(count('regressed'))) return 'regressed';
  if (count('regressed') === 0 && enough(count('improved'))) return 'improved';
  if (count('unchanged') === boards.length) return 'unchanged';
  return 'inconclusive';
}

/** The comparison's verdict: `regressed` if a metric regressed; else `improved` if one improved; `unchanged` if all are; else `inconclusive`. */
export function overallVerdict(metrics: readonly Verdict[]): Verdict {
  if (metrics.length === 0) return 'inconclusive';
  if (metrics.includes('regressed')) return 'regressed';
  if (metrics.includes('improved')) return 'improved';
  if (metrics.every((v) => v === 'unchanged')) return 'unchanged';
  return 'inconclusive';
}
