/**
 * One uPlot chart over time (or over runs), as the telemetry and metric plots draw them:
 * the x range is the window the page chose (fit to the data, the last hour/day/week, a
 * zoom, or one step per run); a drag across the plot zooms (every plot sharing the window
 * follows); a double-click goes back; the legend shows the hovered point, and the latest
 * one when the pointer is elsewhere (never "--"). Baseline bands and per-run intervals are
 * drawn on the canvas, and what was drawn is written into data attributes (tests read them:
 * a canvas has no DOM to query).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useColourScheme } from '../lib/use-colour-scheme.ts';
import { sameChoice, unzoomed, windowRange, type PlotWindow, type RangeChoice } from '../lib/plot-range.ts';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  colour: string;
  /** Dots on each value (sparse series: one run now and then). */
  points?: boolean;
  spanGaps?: boolean;
}

/** A horizontal band across the plot (a baseline's interval), with a dashed line at `mid`. */
export interface Band {
  label: string;
  lo: number;
  hi: number;
  mid: number;
  colour: string;
}

/** A vertical error bar at `x` (a run's interval of its median). */
export interface Interval {
  x: number;
  lo: number;
  hi: number;
  colour: string;
}

export interface ChartProps {
  title: string;
  /** Seconds since the epoch, or run numbers (1, 2, …) when the window is `runs`. */
  xs: number[];
  series: ChartSeries[];
  window: PlotWindow;
  onWindow: (w: PlotWindow) => void;
  /** The legend's name for x (default "Time", or "Run" over runs). */
  xName?: string;
  /** The legend's x value (a time, or a run). */
  xLegend: (x: number, idx: number) => string;
  /** A y value for the legend, with its unit. */
  value: (v: number) => string;
  label: string;
  height?: number;
  testId?: string;
  class?: string;
  bands?: Band[];
  intervals?: Interval[];
}

const GRID = { stroke: 'rgba(128,128,128,0.22)' };

/** The index of a series' newest value. */
function lastValue(values: Array<number | null>): number | null {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return i;
  return null;
}

/**
 * Where the legend rests: per series its newest value (a board's latest run, where runs of
 * several boards interleave), and for x the newest of them. Null when there is no value.
 */
function restingIdxs(series: ChartSeries[]): Array<number | null> | null {
  const each = series.map((s) => lastValue(s.values));
  const newest = Math.max(-1, ...each.map((i) => i ?? -1));
  return newest < 0 ? null : [newest, ...each];
}

/**
 * Time tick labels: the time (with seconds below a minute's step), and the date under the
 * first tick and where the day changes. uPlot's own put a long date on the first tick that
 * ran into the next one when zoomed to minutes.
 */
function timeTicks(_u: uPlot, splits: number[], _axis: number, _space: number, incr: number): string[] {
  let day = '';
  return splits.map((v) => {
    const d = new Date(v * 1000);
    const date = d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
    if (incr >= 86400) return date;
    // A 24-hour clock: no AM/PM to widen every label.
    const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...(incr < 60 ? { second: '2-digit' } : {}) });
    const label = date !== day ? `${time}\n${date}` : time;
    day = date;
    return label;
  });
}

function alpha(hex: string, a: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plotRef = useRef<uPlot | null>(null);
  // The hooks read the current window and callback (the chart is not rebuilt when they change).
  const windowRef = useRef(props.window);
  windowRef.current = props.window;
  const onWindowRef = useRef(props.onWindow);
  onWindowRef.current = props.onWindow;
  // A zoom keeps the axis it started from (time, or runs).
  const byRun = unzoomed(props.window).kind === 'runs';
  const height = props.height ?? 190;
  const { xs, series, bands = [], intervals = [] } = props;
  const scheme = useColourScheme();

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, el.clientWidth);
    // Canvas colours cannot be `currentColor`: the page's text colour (light or dark scheme) is read here.
    const ink = getComputedStyle(el).color;
    const first = xs.length ? xs[0]! : null;
    const last = xs.length ? xs[xs.length - 1]! : null;
    const rest = restingIdxs(series);
    const show = (u: uPlot) => {
      // Where tests (and curious people) can read what the x axis spans.
      el.dataset.xMin = String(u.scales.x!.min);
      el.dataset.xMax = String(u.scales.x!.max);
    };
    const opts: uPlot.Options = {
      width: width(),
      height,
      title: props.title,
      legend: { live: true },
      cursor: {
        drag: { x: true, y: false, setScale: false },
        // Our own double-click (back to the chosen window), not uPlot's reset to the data.
        bind: { dblclick: () => null },
      },
      scales: {
        // From the data itself, not the min/max uPlot passes (it calls this again with the range it already has).
        x: { time: !byRun, range: () => windowRange(windowRef.current, first, last, Date.now() / 1000) },
        y: {
          range: (_u, min, max) => {
            // The bands and bars count too: a baseline far from today's runs is still seen.
            let lo = min ?? Infinity;
            let hi = max ?? -Infinity;
            for (const b of bands) [lo, hi] = [Math.min(lo, b.lo), Math.max(hi, b.hi)];
            for (const iv of intervals) [lo, hi] = [Math.min(lo, iv.lo), Math.max(hi, iv.hi)];
            if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
            return uPlot.rangeNum(lo, hi, 0.1, true);
          },
        },
      },
      axes: [
        byRun
          ? { stroke: ink, grid: GRID, ticks: GRID, label: 'run', labelSize: 18, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500], values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : '')) }
          : // Wider apart when the ticks carry seconds (a span of minutes): their labels are longer.
          { stroke: ink, grid: GRID, ticks: GRID, space: (_u, _a, min, max) => (max - min < 600 ? 80 : 60), values: timeTicks },
        { stroke: ink, grid: GRID, ticks: GRID, size: 58 },
      ],
      series: [
        { label: props.xName ?? (byRun ? 'Run' : 'Time'), value: (_u, v, _s, idx) => (v === null || idx === null ? '—' : props.xLegend(v, idx)) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 1.5,
          spanGaps: s.spanGaps ?? false,
          ...(s.points ? { points: { show: true, size: 6, fill: s.colour } } : {}),
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : props.value(v)),
        })),
      ],
      hooks: {
        ready: [
          (u) => {
            show(u);
            if (rest !== null) u.setLegend({ idxs: rest as number[] });
          },
        ],
        setScale: [(u, key) => key === 'x' && show(u)],
        // The pointer left (or never came): the legend rests on the latest point.
        setCursor: [(u) => u.cursor.idx == null && rest !== null && u.setLegend({ idxs: rest as number[] })],
        setSelect: [
          (u) => {
            const { left, width: w } = u.select;
            if (w < 3) return;
            const min = u.posToVal(left, 'x');
            const max = u.posToVal(left + w, 'x');
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            onWindowRef.current({ kind: 'zoom', min, max, before: windowRef.current });
          },
        ],
        // Bands behind the lines; the intervals over them.
        drawClear: [
          (u) => {
            const drawn: Array<{ label: string; lo: number; hi: number }> = [];
            const { ctx, bbox } = u;
            ctx.save();
            ctx.beginPath();
            ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
            ctx.clip();
            for (const b of bands) {
              const top = u.valToPos(b.hi, 'y', true);
              const bottom = u.valToPos(b.lo, 'y', true);
              ctx.fillStyle = alpha(b.colour, 0.2);
              ctx.fillRect(bbox.left, top, bbox.width, Math.max(1, bottom - top));
              const mid = u.valToPos(b.mid, 'y', true);
              ctx.strokeStyle = alpha(b.colour, 0.8);
              ctx.lineWidth = 1;
              ctx.setLineDash([5, 4]);
              ctx.beginPath();
              ctx.moveTo(bbox.left, mid);
              ctx.lineTo(bbox.left + bbox.width, mid);
              ctx.stroke();
              drawn.push({ label: b.label, lo: b.lo, hi: b.hi });
            }
            ctx.restore();
            el.dataset.bands = JSON.stringify(drawn);
          },
        ],
        draw: [
          (u) => {
            const drawn: Array<{ x: number; lo: number; hi: number }> = [];
            const { ctx } = u;
            const [x0, x1] = [u.scales.x!.min!, u.scales.x!.max!];
            const cap = 4 * devicePixelRatio;
            ctx.save();
            ctx.lineWidth = 1.5 * devicePixelRatio;
            for (const iv of intervals) {
              if (iv.x < x0 || iv.x > x1) continue;
              const x = u.valToPos(iv.x, 'x', true);
              const top = u.valToPos(iv.hi, 'y', true);
              const bottom = u.valToPos(iv.lo, 'y', true);
              ctx.strokeStyle = iv.colour;
              ctx.beginPath();
              ctx.moveTo(x, top);
              ctx.lineTo(x, bottom);
              ctx.moveTo(x - cap, top);
              ctx.lineTo(x + cap, top);
              ctx.moveTo(x - cap, bottom);
              ctx.lineTo(x + cap, bottom);
              ctx.stroke();
              drawn.push({ x: iv.x, lo: iv.lo, hi: iv.hi });
            }
            ctx.restore();
            el.dataset.intervals = JSON.stringify(drawn);
          },
        ],
      },
    };
    const plot = new uPlot(opts, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    plotRef.current = plot;
    el.dataset.dataMin = String(first);
    el.dataset.dataMax = String(last);
    const back = () => onWindowRef.current(unzoomed(windowRef.current));
    plot.over.addEventListener('dblclick', back);
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.over.removeEventListener('dblclick', back);
      plot.destroy();
      plotRef.current = null;
    };
  }, [xs, series, bands, intervals, byRun, height, props.title, scheme]);

  // A new window (a button, a zoom here or on a sibling plot): the x scale follows, the plot stays.
  useEffect(() => {
    const plot = plotRef.current;
    if (!plot) return;
    const [min, max] = windowRange(props.window, xs.length ? xs[0]! : null, xs.length ? xs[xs.length - 1]! : null, Date.now() / 1000);
    plot.setScale('x', { min, max });
  }, [props.window]);

  return <div ref={box} class={props.class ?? 'plot'} role="img" aria-label={props.label} data-testid={props.testId} />;
}

/** The range buttons above a set of plots, and "Reset zoom" while zoomed. */
export function RangeBar({ choices, value, onChange, label }: { choices: RangeChoice[]; value: PlotWindow; onChange: (w: PlotWindow) => void; label: string }) {
  return (
    <div class="range-bar" role="group" aria-label={label}>
      {choices.map((c) => (
        <button key={c.label} type="button" class="range-choice" aria-pressed={sameChoice(value, c.window)} onClick={() => onChange(c.window)}>
          {c.label}
        </button>
      ))}
      {value.kind === 'zoom' && (
        <button type="button" class="range-choice" onClick={() => onChange(unzoomed(value))}>
          Reset zoom
        </button>
      )}
      <span class="muted small range-hint">Drag across a plot to zoom in; double-click to go back.</span>
    </div>
  );
}
