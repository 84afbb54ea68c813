import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { formatMetric, metricLabel, metricUnit } from '../lib/format.ts';
import { useColourScheme } from '../lib/use-colour-scheme.ts';

/** One board's bar: its value, or (a failed step) none, marked as failed instead. */
export interface MetricBar {
  board: string;
  value: number | null;
  /** The step failed: its value (e.g. the time until it failed) is no measure, so no bar is drawn. */
  failed?: boolean;
}

const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const LABEL_FONT = `600 ${FONT}`;
const TICK_PX = 6;
const GAP_PX = 5;

let measurer: CanvasRenderingContext2D | null = null;
/** The width the values take in the axis font (uPlot's own default width clips "14,000" into the axis label). */
function textWidth(texts: string[]): number {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return 40;
  measurer.font = FONT;
  return Math.max(0, ...texts.map((t) => measurer!.measureText(t).width));
}

/** The page's colours (they change with the colour scheme): canvas text does not follow CSS by itself. */
function colours(el: HTMLElement): { fg: string; muted: string; grid: string; accent: string; danger: string } {
  const css = getComputedStyle(el);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return { fg: css.color || v('--fg', '#1b1f24'), muted: v('--muted', '#57606a'), grid: v('--border', '#d0d7de'), accent: v('--accent', '#0550ae'), danger: v('--danger', '#b42318') };
}

/** `#0550ae` at `alpha` (a bar's fill); other colour forms as they are. */
function translucent(colour: string, alpha: number): string {
  return /^#[0-9a-f]{6}$/i.test(colour) ? `${colour}${Math.round(alpha * 255).toString(16).padStart(2, '0')}` : colour;
}

/**
 * One metric across boards as a bar chart (uPlot, loaded when first shown: the rollout page's
 * bundle stays small). The axis title carries the unit; a time of seconds is drawn in
 * seconds. A failed step is marked "✕ failed" in red: with `dropFailed` (run_ms, whose value
 * for a failed step is the time until it failed, no measure of the run) it draws no bar;
 * otherwise (a temperature measured during the run) its bar is drawn red. The caption names
 * the failed boards. Boards with neither a value nor a failure are left out.
 */
export function MetricBars({ name, boards, dropFailed = false }: { name: string; boards: MetricBar[]; dropFailed?: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useColourScheme();
  const key = JSON.stringify(boards);
  const shown = boards.filter((b) => b.failed || b.value !== null);
  const drawn = shown.map((b) => (b.failed ? null : b.value));
  const drawnFailed = shown.map((b) => (b.failed && !dropFailed ? b.value : null));
  const unit = metricUnit(name).symbol;
  // Milliseconds in the thousands read better as seconds ("14.3", not "14,296").
  const inSeconds = unit === 'ms' && Math.max(0, ...drawn.map((v) => v ?? 0), ...drawnFailed.map((v) => v ?? 0)) >= 1000;
  const axisUnit = inSeconds ? 's' : unit;
  const title = axisUnit ? `${metricLabel(name)} (${axisUnit})` : metricLabel(name);
  const failed = shown.filter((b) => b.failed);
  useEffect(() => {
    let plot: uPlot | undefined;
    let stale = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([mod]) => {
      if (stale || !box.current) return;
      const UPlot = mod.default;
      const c = colours(box.current);
      const xs = shown.map((_, i) => i);
      const scaled = (vs: Array<number | null>) => vs.map((v) => (v === null ? null : inSeconds ? v / 1000 : v));
      const ys = scaled(drawn);
      const failedYs = scaled(drawnFailed);
      const width = Math.max(240, Math.min(640, box.current.clientWidth || 480));
      const yValues = (_u: uPlot, ticks: number[]) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString('en-US') : String(Number(t.toPrecision(6)))));
      plot = new UPlot(
        {
          width,
          height: 220,
          legend: { show: false },
          cursor: { show: false },
          scales: { x: { time: false, range: [-0.5, shown.length - 0.5] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
          axes: [
            {
              values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (shown[t]?.board ?? '') : '')),
              splits: () => xs,
              stroke: c.fg,
              font: FONT,
              grid: { show: false },
              ticks: { stroke: c.grid, size: TICK_PX },
            },
            {
              label: title,
              labelFont: LABEL_FONT,
              labelSize: 22,
              labelGap: 2,
              font: FONT,
              stroke: c.fg,
              values: yValues,
              // As wide as its widest value, plus the tick and the gap: the values never run into the title.
              size: (_u, values) => Math.ceil(textWidth(values ?? [])) + TICK_PX + GAP_PX + 4,
              gap: GAP_PX,
              grid: { stroke: c.grid, width: 1 },
              ticks: { stroke: c.grid, size: TICK_PX },
            },
          ],
          series: [
            {},
            { label: title, fill: translucent(c.accent, 0.55), stroke: c.accent, paths: UPlot.paths.bars!({ size: [0.6, 64] }), points: { show: false } },
            { label: `${title}, failed`, fill: translucent(c.danger, 0.35), stroke: c.danger, paths: UPlot.paths.bars!({ size: [0.6, 64] }), points: { show: false } },
          ],
          hooks: {
            draw: [
              (u) => {
                // A failed step: a red cross and the word where its bar would be.
                const ctx = u.ctx;
                ctx.save();
                ctx.font = `600 ${Math.round(12 * devicePixelRatio)}px system-ui, sans-serif`;
                ctx.fillStyle = c.danger;
                ctx.textAlign = 'center';
                ctx.textBaseline = 'bottom';
                shown.forEach((b, i) => {
                  if (!b.failed) return;
                  const x = u.valToPos(i, 'x', true);
                  const y = u.valToPos(failedYs[i] ?? 0, 'y', true) - 4 * devicePixelRatio;
                  ctx.fillText('✕ failed', x, y);
                });
                ctx.restore();
              },
            ],
          },
        },
        [xs, ys, failedYs],
        box.current,
      );
    });
    return () => {
      stale = true;
      plot?.destroy();
    };
  }, [name, key, scheme]);
  const said = shown.map((b) =>
    !b.failed ? `${b.board} ${formatMetric(name, b.value)}` : dropFailed ? `${b.board} failed${b.value !== null ? ` after ${formatMetric(name, b.value)}` : ''} (not drawn)` : `${b.board} failed${b.value !== null ? `, ${formatMetric(name, b.value)} (red)` : ''}`,
  );
  return (
    <figure class="chart" data-testid={`chart-${name}`}>
      <div ref={box} role="img" aria-label={`${title} by board: ${said.join(', ')}`} />
      <figcaption class="small muted">
        {metricLabel(name)} by board
        {failed.length > 0 && (
          <span class="danger-text" data-testid="chart-failed">
            {dropFailed
              ? ` · failed, no bar: ${failed.map((b) => `${b.board}${b.value !== null ? ` (after ${formatMetric(name, b.value)})` : ''}`).join(', ')}`
              : ` · failed: ${failed.map((b) => `${b.board}${b.value !== null ? ' (red bar)' : ''}`).join(', ')}`}
          </span>
        )}
      </figcaption>
    </figure>
  );
}
