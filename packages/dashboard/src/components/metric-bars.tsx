import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/**
 * One metric across boards as a bar chart (uPlot, loaded when first shown: the rollout page's
 * bundle stays small). Boards without a value are left out.
 */
export function MetricBars({ name, boards }: { name: string; boards: Array<{ board: string; value: number }> }) {
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify(boards);
  useEffect(() => {
    let plot: uPlot | undefined;
    let stale = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([mod]) => {
      if (stale || !box.current) return;
      const UPlot = mod.default;
      const xs = boards.map((_, i) => i);
      const width = Math.max(240, Math.min(640, box.current.clientWidth || 480));
      plot = new UPlot(
        {
          width,
          height: 200,
          legend: { show: false },
          cursor: { show: false },
          scales: { x: { time: false, range: [-0.5, boards.length - 0.5] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
          axes: [
            { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (boards[t]?.board ?? '') : '')), splits: () => xs },
            { label: name },
          ],
          series: [{}, { label: name, fill: 'rgba(37, 99, 235, 0.55)', stroke: 'rgb(37, 99, 235)', paths: UPlot.paths.bars!({ size: [0.6, 64] }), points: { show: false } }],
        },
        [xs, boards.map((b) => b.value)],
        box.current,
      );
    });
    return () => {
      stale = true;
      plot?.destroy();
    };
  }, [name, key]);
  return (
    <figure class="chart" data-testid={`chart-${name}`}>
      <div ref={box} role="img" aria-label={`${name} by board: ${boards.map((b) => `${b.board} ${b.value}`).join(', ')}`} />
      <figcaption class="small muted">{name === 'run_ms' ? 'Run time (ms) by board' : `${name} by board`}</figcaption>
    </figure>
  );
}
