import { describe, expect, it } from 'vitest';
import { compareSamples, metricDirection, metricVerdict, overallVerdict, verdictOf } from '../../src/results/verdicts.ts';

describe('metric direction', () => {
  it('follows the contract', () => {
    expect(metricDirection('fps')).toBe('higher');
    expect(metricDirection('e2e_fps')).toBe('higher');
    expect(metricDirection('dpu_fps')).toBe('higher');
    expect(metricDirection('latency_ms_p95')).toBe('lower');
    expect(metricDirection('latency')).toBe('lower');
    expect(metricDirection('run_ms')).toBe('lower');
    expect(metricDirection('energy_mj_per_frame')).toBe('lower');
    expect(metricDirection('mean_power_w')).toBe('lower');
    expect(metricDirection('max_temperature_c')).toBe('lower');
    expect(metricDirection('frames')).toBeUndefined();
    expect(metricDirection('accuracy')).toBeUndefined();
  });
});

describe('verdict of an interval', () => {
  it('higher is better', () => {
    expect(verdictOf([-5, -1], 'higher', 3)).toBe('regressed');
    expect(verdictOf([-2.5, -0.5], 'higher', 3)).toBe('unchanged'); // significant but within 3 %
    expect(verdictOf([-1, 1], 'higher', 3)).toBe('unchanged');
    expect(verdictOf([-4, 1], 'higher', 3)).toBe('inconclusive');
    expect(verdictOf([1, 4], 'higher', 3)).toBe('improved');
    expect(verdictOf([0.5, 2], 'higher', 3)).toBe('unchanged');
    expect(verdictOf([-3, 3], 'higher', 3)).toBe('unchanged');
  });
  it('lower is better turns the interval round', () => {
    expect(verdictOf([1, 5], 'lower', 3)).toBe('regressed');
    expect(verdictOf([-5, -1], 'lower', 3)).toBe('improved');
    expect(verdictOf([-1, 1], 'lower', 3)).toBe('unchanged');
    expect(verdictOf([-1, 6], 'lower', 3)).toBe('inconclusive');
  });
  it('the threshold moves the line', () => {
    expect(verdictOf([-5, -1], 'higher', 10)).toBe('unchanged');
    expect(verdictOf([-0.9, -0.1], 'higher', 0.5)).toBe('regressed');
  });
});

describe('compareSamples', () => {
  const b = [30.0, 30.6, 29.4, 30.2, 29.9, 30.8, 29.7, 30.1, 30.3, 29.5];
  it('a 3 % drop of fps is a regression', () => {
    const c = b.map((x) => x * 0.97);
    const r = compareSamples(b, c, 'higher', 3);
    expect(r.verdict).toBe('regressed');
    expect(r.change_pct!).toBeLessThan(-2.5);
    expect(r.ci95_pct![1]).toBeLessThan(0);
  });
  it('the same runs are unchanged', () => {
    expect(compareSamples(b, b, 'higher', 3).verdict).toBe('unchanged');
  });
  it('latency up is a regression', () => {
    const lat = b.map((x) => 1000 / x);
    expect(compareSamples(lat, lat.map((x) => x * 1.05), 'lower', 3).verdict).toBe('regressed');
    expect(compareSamples(lat, lat.map((x) => x * 0.95), 'lower', 3).verdict).toBe('improved');
  });
  it('one run each is inconclusive: no interval', () => {
    const r = compareSamples([30], [20], 'higher', 3);
    expect(r.verdict).toBe('inconclusive');
    expect(r.ci95_pct).toBeNull();
    expect(r.change_pct).toBeCloseTo(-33.3333, 3);
  });
  it('a baseline median of 0 is inconclusive', () => {
    expect(compareSamples([0, 0, 0, 0, 0], [1, 1, 1, 1, 1], 'lower', 3).verdict).toBe('inconclusive');
  });
});

describe('across boards', () => {
  it('regressed needs two boards, or the only one', () => {
    expect(metricVerdict(['regressed'])).toBe('regressed');
    expect(metricVerdict(['regressed', 'unchanged'])).toBe('inconclusive');
    expect(metricVerdict(['regressed', 'unchanged', 'unchanged'])).toBe('inconclusive');
    expect(metricVerdict(['regressed', 'regressed', 'unchanged'])).toBe('regressed');
    expect(metricVerdict(['regressed', 'improved', 'improved'])).toBe('inconclusive');
    expect(metricVerdict(['improved', 'improved', 'unchanged'])).toBe('improved');
    expect(metricVerdict(['unchanged', 'unchanged'])).toBe('unchanged');
    expect(metricVerdict(['unchanged', 'inconclusive'])).toBe('inconclusive');
    expect(metricVerdict([])).toBe('inconclusive');
  });
  it('overall', () => {
    expect(overallVerdict(['unchanged', 'regressed', 'improved'])).toBe('regressed');
    expect(overallVerdict(['unchanged', 'improved', 'inconclusive'])).toBe('improved');
    expect(overallVerdict(['unchanged', 'unchanged'])).toBe('unchanged');
    expect(overallVerdict(['unchanged', 'inconclusive'])).toBe('inconclusive');
    expect(overallVerdict([])).toBe('inconclusive');
  });
});
