/**
 * What a time plot shows on its x axis (seconds since the epoch, as uPlot counts them).
 *
 * - `fit`: the data's own span, a little padded: 15 minutes of samples fill the plot.
 * - `last`: a fixed window ending now (or at the newest point, when the clock lags it).
 * - `zoom`: what a mouse drag chose; double-click or "Reset zoom" goes back to the choice before.
 * - `runs` (metric plots only): one step per run, evenly spaced whatever the time between them.
 */
export type PlotWindow = { kind: 'fit' } | { kind: 'last'; seconds: number } | { kind: 'zoom'; min: number; max: number; before: PlotWindow } | { kind: 'runs' };

/** A range button: its label and the window it chooses. */
export interface RangeChoice {
  label: string;
  window: PlotWindow;
}

export const HOUR = 3600;
export const DAY = 24 * HOUR;

export const FIT: RangeChoice = { label: 'Fit', window: { kind: 'fit' } };
export const LAST_HOUR: RangeChoice = { label: '1 h', window: { kind: 'last', seconds: HOUR } };
export const LAST_DAY: RangeChoice = { label: '24 h', window: { kind: 'last', seconds: DAY } };
export const LAST_WEEK: RangeChoice = { label: '7 d', window: { kind: 'last', seconds: 7 * DAY } };
export const BY_RUN: RangeChoice = { label: 'By run', window: { kind: 'runs' } };

/**
 * The least span `fit` shows: one sample (a fresh board, a single run) is not stretched over
 * years of axis (uPlot's own choice), and two runs seconds apart get readable ticks.
 */
export const MIN_FIT_SPAN_S = 60;

/**
 * The x range of a window over data spanning `min`..`max` (null: no data), `now` in seconds.
 * `fit` pads the data by 3 % a side (a point on the edge stays visible), and centres a span
 * shorter than MIN_FIT_SPAN_S on the data.
 */
export function windowRange(w: PlotWindow, min: number | null, max: number | null, now: number): [number, number] {
  switch (w.kind) {
    case 'zoom':
      return [w.min, w.max];
    case 'last': {
      const end = Math.max(now, max ?? now);
      return [end - w.seconds, end];
    }
    case 'runs':
    case 'fit': {
      if (min === null || max === null) return [now - HOUR, now];
      const span = max - min;
      if (span < MIN_FIT_SPAN_S && w.kind === 'fit') {
        const mid = (min + max) / 2;
        return [mid - MIN_FIT_SPAN_S / 2, mid + MIN_FIT_SPAN_S / 2];
      }
      const pad = Math.max(span * 0.03, w.kind === 'runs' ? 0.5 : 0);
      return [min - pad, max + pad];
    }
  }
}

/** The window a zoom returns to. */
export function unzoomed(w: PlotWindow): PlotWindow {
  return w.kind === 'zoom' ? unzoomed(w.before) : w;
}

/** Whether a range button is the current choice (a zoom counts as the choice it started from). */
export function sameChoice(a: PlotWindow, b: PlotWindow): boolean {
  const x = unzoomed(a);
  const y = unzoomed(b);
  if (x.kind !== y.kind) return false;
  return x.kind !== 'last' || x.seconds === (y as { seconds: number }).seconds;
}
