/**
 * Each metric of an invocation over its runs, one uPlot chart per metric, one coloured series
 * per board; with a baseline chosen, its band per board, and each repeated run's 95 % interval
 * of its median as an error bar. Loaded as its own chunk (uPlot and its CSS stay out of the
 * first page).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { client, unwrap, type Board, type Operation, type Schemas } from '../api/client.ts';
import { formatMetric } from '../lib/format.ts';
import { metricsOf } from '../lib/run-result.ts';
import { BY_RUN, FIT, LAST_DAY, LAST_HOUR, LAST_WEEK, unzoomed, type PlotWindow } from '../lib/plot-range.ts';
import { useResource } from '../lib/use-resource.ts';
import { boardName } from './latest-run.tsx';
import { ErrorBox } from './error-box.tsx';
import { Chart, RangeBar, type Band, type ChartSeries, type Interval } from './time-plot.tsx';

/** Distinct on light and dark backgrounds; a board keeps its colour across the charts. */
const PALETTE = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#1b7c83', '#e16f24', '#6e7781', '#bf3989', '#4d2d00'];
const CHOICES = [FIT, LAST_HOUR, LAST_DAY, LAST_WEEK, BY_RUN];

type MetricPoint = Schemas['MetricPoint'];
type Baseline = Schemas['Baseline'];

/** The series of one metric over the invocation's runs (the server's metrics endpoint). */
async function loadPoints(invocationId: number, name: string): Promise<MetricPoint[]> {
  const { points } = await unwrap(client.GET('/api/invocations/{id}/metrics/', { params: { path: { id: invocationId }, query: { name } } }));
  return points;
}

const timeOf = (s: number) => new Date(s * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function MetricPlots({ invocationId, operations, boards }: { invocationId: number; operations: Operation[]; boards: Board[] | null }) {
  const names = [...new Set(operations.flatMap((op) => Object.keys(metricsOf(op))))].sort();
  const [series, setSeries] = useState<Record<string, MetricPoint[]> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [range, setRange] = useState<PlotWindow>({ kind: 'fit' });
  // undefined: the newest baseline of the invocation; null: none chosen.
  const [chosen, setChosen] = useState<number | null | undefined>(undefined);
  const baselineList = useResource(() => unwrap(client.GET('/api/baselines/', { params: { query: { invocation_id: invocationId, limit: 100 } } })), [invocationId]);
  const baselines = useMemo(() => [...(baselineList.data?.baselines ?? [])].sort((a, b) => b.created_at.localeCompare(a.created_at)), [baselineList.data]);
  const baseline = chosen === null ? null : (baselines.find((b) => b.id === chosen) ?? (chosen === undefined ? baselines[0] : undefined) ?? null);
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
  // In name order, so the legend reads like the board list (a board keeps its colour across charts);
  // the baseline's boards count too, so a board with a band and no run yet has its own colour.
  const nameOf = (id: string) => (id ? boardName(boards, id) : '');
  const boardIds = useMemo(() => {
    const ids = new Set(Object.values(series ?? {}).flatMap((ps) => ps.map((p) => p.board_id ?? '')));
    for (const id of Object.keys(baseline?.summary_by_board ?? {})) ids.add(id);
    return [...ids].sort((a, b) => nameOf(a).localeCompare(nameOf(b), undefined, { numeric: true }));
  }, [series, baseline, boards]);
  if (names.length === 0) return <p class="muted">No run has reported metrics yet (a runner reports them in metrics.json).</p>;
  if (error && !series) return <ErrorBox error={error} />;
  if (!series) return <p aria-busy="true">Loading metrics…</p>;
  const repeated = Object.values(series).some((ps) => ps.some((p) => p.summary));
  return (
    <div class="stack" data-testid="metric-plots">
      <div class="plot-controls">
        <RangeBar label="Metrics time range" choices={CHOICES} value={range} onChange={setRange} />
        {baselines.length > 0 && (
          <label class="small inline">
            Baseline{' '}
            <select
              value={baseline ? String(baseline.id) : ''}
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                setChosen(v === '' ? null : Number(v));
              }}
              data-testid="metric-baseline"
            >
              <option value="">none</option>
              {baselines.map((b) => (
                <option key={b.id} value={String(b.id)}>
                  {b.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {(baseline || repeated) && (
        <p class="small muted" data-testid="metric-plot-key">
          {baseline && (
            <>
              Shaded band: baseline <strong>{baseline.name}</strong>, the 95 % interval of its median per board (dashed line: the median).{' '}
            </>
          )}
          {repeated && 'Error bars: a run’s 95 % interval of the median over its repeats.'}
        </p>
      )}
      <div class="grid two metric-plots">
        {names.map((n) =>
          series[n]?.length ? (
            <MetricChart key={n} name={n} points={series[n]} boardIds={boardIds} boards={boards} baseline={baseline} range={range} onRange={setRange} />
          ) : (
            // The endpoint plots succeeded runs only: a metric only failed runs reported has no points.
            <p key={n} class="muted small" data-testid={`metric-none-${n}`}>
              <strong>{n}</strong>: no succeeded run reported it yet.
            </p>
          ),
        )}
      </div>
    </div>
  );
}

interface ChartData {
  xs: number[];
  lines: ChartSeries[];
  bands: Band[];
  intervals: Interval[];
  sorted: MetricPoint[];
}

function MetricChart(props: { name: string; points: MetricPoint[]; boardIds: string[]; boards: Board[] | null; baseline: Baseline | null; range: PlotWindow; onRange: (w: PlotWindow) => void }) {
  const { name, points, boardIds, boards, baseline, range } = props;
  const byRun = unzoomed(range).kind === 'runs';
  const colourOf = (id: string) => PALETTE[Math.max(0, boardIds.indexOf(id)) % PALETTE.length]!;
  const label = (id: string) => (id ? boardName(boards, id) : 'no board');
  const data = useMemo((): ChartData => {
    // uPlot wants one x array shared by all series: every run's time (or number), and per board its values or gaps.
    const sorted = [...points].sort((a, b) => a.finished_at.localeCompare(b.finished_at));
    const xs = sorted.map((p, i) => (byRun ? i + 1 : new Date(p.finished_at).getTime() / 1000));
    const present = boardIds.filter((id) => sorted.some((p) => (p.board_id ?? '') === id));
    const lines = present.map((id) => ({
      label: label(id),
      colour: colourOf(id),
      spanGaps: true,
      points: true,
      values: sorted.map((p) => ((p.board_id ?? '') === id ? p.value : null)),
    }));
    const intervals = sorted.flatMap((p, i) => (p.summary ? [{ x: xs[i]!, lo: p.summary.ci95[0], hi: p.summary.ci95[1], colour: colourOf(p.board_id ?? '') }] : []));
    const bands = Object.entries(baseline?.summary_by_board ?? {}).flatMap(([id, metrics]) => {
      const s = metrics[name];
      return s ? [{ label: `${baseline!.name} · ${label(id)}`, lo: s.ci95[0], hi: s.ci95[1], mid: s.median, colour: colourOf(id) }] : [];
    });
    return { xs, lines, bands, intervals, sorted };
  }, [points, boardIds.join(','), boards?.length, baseline, byRun, name]);
  const runAt = (idx: number) => data.sorted[idx];
  return (
    <Chart
      class="metric-chart"
      title={name}
      xs={data.xs}
      series={data.lines}
      bands={data.bands}
      intervals={data.intervals}
      window={range}
      onWindow={props.onRange}
      height={210}
      xName="Run"
      xLegend={(x, idx) => {
        const p = runAt(idx);
        if (!p) return String(x);
        const when = timeOf(new Date(p.finished_at).getTime() / 1000);
        const ci = p.summary ? ` · 95 % interval ${formatMetric(name, p.summary.ci95[0])} to ${formatMetric(name, p.summary.ci95[1])} (n ${p.summary.n})` : '';
        return `${byRun ? `run ${x} · ` : ''}#${p.operation_id} · ${when}${ci}`;
      }}
      value={(v) => formatMetric(name, v)}
      label={`${name} over ${points.length} runs, one colour per board${data.bands.length ? `, with the band of baseline ${baseline!.name}` : ''}`}
      testId={`metric-plot-${name}`}
    />
  );
}
