import { describe, expect, it } from 'vitest';
import { DAY, HOUR, MIN_FIT_SPAN_S, sameChoice, unzoomed, windowRange, type PlotWindow } from '../src/lib/plot-range.ts';

describe('the x range of a time plot (lib/plot-range.ts)', () => {
  const now = 1_800_000_000;

  it('fits 15 minutes of samples to the plot, padded 3 % a side', () => {
    const [lo, hi] = windowRange({ kind: 'fit' }, now - 900, now, now);
    expect(lo).toBeCloseTo(now - 900 - 27);
    expect(hi).toBeCloseTo(now + 27);
    expect(900 / (hi - lo)).toBeGreaterThan(0.9);
  });

  it('centres one sample (or a short span) on a window of MIN_FIT_SPAN_S, not years of axis', () => {
    expect(windowRange({ kind: 'fit' }, now, now, now)).toEqual([now - MIN_FIT_SPAN_S / 2, now + MIN_FIT_SPAN_S / 2]);
    expect(windowRange({ kind: 'fit' }, null, null, now)).toEqual([now - HOUR, now]);
  });

  it('shows the last hour, day or week up to now, or up to the newest point when the clock lags it', () => {
    expect(windowRange({ kind: 'last', seconds: DAY }, now - 900, now - 60, now)).toEqual([now - DAY, now]);
    expect(windowRange({ kind: 'last', seconds: HOUR }, now - 900, now + 30, now)).toEqual([now + 30 - HOUR, now + 30]);
  });

  it('keeps a zoom as dragged, and goes back to the choice it started from', () => {
    const zoom: PlotWindow = { kind: 'zoom', min: now - 600, max: now - 300, before: { kind: 'last', seconds: HOUR } };
    expect(windowRange(zoom, now - 900, now, now)).toEqual([now - 600, now - 300]);
    const deeper: PlotWindow = { kind: 'zoom', min: now - 500, max: now - 400, before: zoom };
    expect(unzoomed(deeper)).toEqual({ kind: 'last', seconds: HOUR });
    expect(sameChoice(deeper, { kind: 'last', seconds: HOUR })).toBe(true);
    expect(sameChoice(deeper, { kind: 'last', seconds: DAY })).toBe(false);
    expect(sameChoice({ kind: 'fit' }, { kind: 'runs' })).toBe(false);
  });

  it('spaces runs one step apart with half a step either side', () => {
    expect(windowRange({ kind: 'runs' }, 1, 1, now)).toEqual([0.5, 1.5]);
    expect(windowRange({ kind: 'runs' }, 1, 5, now)).toEqual([0.5, 5.5]);
  });
});
