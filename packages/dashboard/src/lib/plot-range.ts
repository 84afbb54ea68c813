import type uPlot from 'uplot';

/**
 * The x range: the samples' own span, but at least the last hour (uPlot stretches a single
 * sample, a fresh board's, over years of axis otherwise).
 */
export function timeRange(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min === null || max === null) return [min, max];
  return max - min < 3600 ? [max - 3600, max + 60] : [min, max];
}
