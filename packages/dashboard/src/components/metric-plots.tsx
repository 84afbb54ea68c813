/**
 * Each metric of an invocation over its runs, one uPlot chart per metric, one coloured series
 * per board. Loaded as its own chunk (uPlot and its CSS stay out of the first page).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { client, unwrap, type Board, type Operation, type Schemas } from '../api/client.ts';
import { metricsOf } from '../lib/run-result.ts';
import { boardName } from './latest-run.tsx';
import { ErrorBox } from './error-box.tsx';
import { timeRange } from '../lib/plot-range.ts';

/** Distinct on light and dark backgrounds; a board keeps its colour across the charts. */
const PALETTE = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#1b7c83', '#e16f24', '#6e7781', '#bf3989', '#4d2d00'];

type MetricPoint = Schemas['MetricPoint'];

/** The series of one metric over the invocation's runs (the server's metrics endpoint). */
async function loadPoints(invocationId: number, name: string): Promise<MetricPoint[]> {
  const { points } = await unwrap(client.GET('/api/invocations/{id}/metrics/', { params: { path: { id: invocationId }, query: { name } } }));
  return points;
}

export function MetricPlots({ invocationId, operations, boards }: { invocationId: number; operations: Operation[]; boards: Board[] | null }) {
  const names = [...new Set(operations.flatMap((op) => Object.keys(metricsOf(op))))].sort();
  const [series, setSeries] = useState<Record<string, MetricPoint[]> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = `${invocationId}:${names.join(',')}:${operations.map((o) => `${o.id}${o.status}`).join(',')}`;
  useEffect(() => {
    let stale = false;
    Promise.all(names.map(async (n) => [n, await loadPoints(invocationId, n)] as const)).then(
      (pairs) => {
        if (stale) return;
        setError(null);
        setSeries(Object.fromEntries(pairs));
      },
      (err: unknown) => {
        if (!stale) setError(err);
      },
    );
    return () => void (stale = true);
  }, [key]);
  if (names.length === 0) return <p class="muted">No run has reported metrics yet (a runner reports them in metrics.json).</p>;
  if (error && !series) return <ErrorBox error={error} />;
  if (!series) return <p aria-busy="true">Loading metrics…</p>;
  // In name order, so the legend reads like the board list (a board keeps its colour across charts).
  const nameOf = (id: string) => (id ? boardName(boards, id) : '');
  const boardIds = [...new Set(Object.values(series).flatMap((ps) => ps.map((p) => p.board_id ?? '')))].sort((a, b) => nameOf(a).localeCompare(nameOf(b), undefined, { numeric: true }));
  return (
    <div class="grid two metric-plots">
      {names.map((n) =>
        series[n]?.length ? (
          <MetricChart key={n} name={n} points={series[n]} boardIds={boardIds} boards={boards} />
        ) : (
          // The endpoint plots succeeded runs only: a metric only failed runs reported has no points.
          <p key={n} class="muted small" data-testid={`metric-none-${n}`}>
            <strong>{n}</strong>: no succeeded run reported it yet.
          </p>
        ),
      )}
    </div>
  );
}

function MetricChart({ name, points, boardIds, boards }: { name: string; points: MetricPoint[]; boardIds: string[]; boards: Board[] | null }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // uPlot wants one x array shared by all series: every run's time, and per board its values or gaps.
    const sorted = [...points].sort((a, b) => a.finished_at.localeCompare(b.finished_at));
    const xs = sorted.map((p) => new Date(p.finished_at).getTime() / 1000);
    const present = boardIds.filter((id) => sorted.some((p) => (p.board_id ?? '') === id));
    const ys = present.map((id) => sorted.map((p) => ((p.board_id ?? '') === id ? p.value : null)));
    // Canvas colours cannot be `currentColor`: the page's text colour (light or dark scheme) is read here.
    const ink = getComputedStyle(el).color;
    const grid = { stroke: 'rgba(128,128,128,0.25)' };
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: 200,
      title: name,
      cursor: { drag: { x: true, y: false } },
      // The legend names each board by its colour (not the hovered values: a run list reads better).
      legend: { live: false },
      scales: { x: { time: true, range: timeRange } },
      axes: [
        { stroke: ink, grid, ticks: grid },
        { stroke: ink, grid, ticks: grid, size: 56 },
      ],
      series: [
        {},
        ...present.map((id) => {
          const colour = PALETTE[boardIds.indexOf(id) % PALETTE.length]!;
          return { label: id ? boardName(boards, id) : 'no board', stroke: colour, fill: undefined, spanGaps: true, width: 1.5, points: { show: true, size: 6, fill: colour } };
        }),
      ],
    };
    const plot = new uPlot(opts, [xs, ...ys] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 200 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, boardIds.join(','), boards?.length]);
  return <div ref={box} class="metric-chart" role="img" aria-label={`${name} over ${points.length} runs, one colour per board`} data-testid={`metric-plot-${name}`} />;
}
