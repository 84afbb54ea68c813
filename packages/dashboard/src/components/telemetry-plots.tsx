import { useMemo, useState } from 'preact/hooks';
import type { TelemetrySample } from '../lib/fleet-fields.ts';
import { FIT, LAST_DAY, LAST_HOUR, unzoomed, type PlotWindow } from '../lib/plot-range.ts';
import { Chart, RangeBar, type ChartSeries } from './time-plot.tsx';

// Lines that read on white and on the dark scheme's near-black (3:1 or more on both).
const PALETTE = ['#d1495b', '#0969da', '#1a7f37', '#bf8700', '#8250df', '#1b7c83', '#bf3989', '#6e7781'];
/** As the rest of the dashboard counts a GB (formatBytes): 1024³ bytes. */
const GB = 1024 ** 3;
/** The server keeps 24 h of samples: a longer window would show nothing more. */
const CHOICES = [FIT, LAST_HOUR, LAST_DAY];

/** One of the board's runs, to zoom to (seconds; `to` null while it runs). */
export interface RunSpan {
  id: number;
  status: string;
  from: number;
  to: number | null;
}

/** The time shown either side of a run. */
const AROUND_RUN_S = 60;

interface PlotSpec {
  /** Its test id: telemetry-plot-<id>. */
  id: string;
  title: string;
  unit: string;
  decimals: number;
  series: ChartSeries[];
}

const timeOf = (s: number) => new Date(s * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * Temperatures per sensor, power, memory and load over the samples (one a minute, 24 h at
 * most). The four plots share one x window: a range button or a zoom on one moves them all.
 */
export function TelemetryPlots({ samples, runs = [] }: { samples: TelemetrySample[]; runs?: RunSpan[] }) {
  const [range, setRange] = useState<PlotWindow>({ kind: 'fit' });
  const xs = useMemo(() => samples.map((s) => Date.parse(s.at) / 1000), [samples]);
  const plots = useMemo((): PlotSpec[] => {
    const sensors = [...new Set(samples.flatMap((s) => Object.keys(s.temperatures_c)))].sort();
    const line = (label: string, i: number, values: Array<number | null>): ChartSeries => ({ label, colour: PALETTE[i % PALETTE.length]!, values });
    return [
      { id: 'temperature', title: 'Temperature', unit: '°C', decimals: 1, series: sensors.map((name, i) => line(name, i, samples.map((s) => s.temperatures_c[name] ?? null))) },
      ...(samples.some((s) => s.power_w !== undefined) ? [{ id: 'power', title: 'Power', unit: 'W', decimals: 2, series: [line('power', 0, samples.map((s) => s.power_w ?? null))] }] : []),
      { id: 'memory', title: 'Memory used', unit: 'GB', decimals: 2, series: [line('memory', 0, samples.map((s) => s.memory_used_bytes / GB))] },
      { id: 'load', title: 'Load (1 min)', unit: '', decimals: 2, series: [line('load', 0, samples.map((s) => s.load_1m))] },
    ];
  }, [samples]);
  const span = xs.length > 1 ? `from ${timeOf(xs[0]!)} to ${timeOf(xs[xs.length - 1]!)}` : 'of one sample';
  return (
    <div class="stack" data-testid="telemetry-plots">
      <div class="plot-controls">
        <RangeBar label="Telemetry time range" choices={CHOICES} value={range} onChange={setRange} />
        {runs.length > 0 && (
          <label class="small inline">
            Around a run{' '}
            <select
              value=""
              data-testid="telemetry-run"
              onChange={(e) => {
                const run = runs.find((r) => String(r.id) === (e.target as HTMLSelectElement).value);
                if (!run) return;
                const end = run.to ?? Date.now() / 1000;
                setRange({ kind: 'zoom', min: run.from - AROUND_RUN_S, max: end + AROUND_RUN_S, before: unzoomed(range) });
              }}
            >
              <option value="">choose…</option>
              {runs.map((r) => (
                <option key={r.id} value={String(r.id)}>
                  #{r.id} · {timeOf(r.from)} · {r.to === null ? 'running' : `${Math.max(1, Math.round(r.to - r.from))} s, ${r.status}`}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div class="plots">
        {plots.map((p) => (
          <Chart
            key={p.title}
            title={p.unit ? `${p.title} (${p.unit})` : p.title}
            xs={xs}
            series={p.series}
            window={range}
            onWindow={setRange}
            xLegend={(x) => timeOf(x)}
            value={(v) => (p.unit ? `${v.toFixed(p.decimals)} ${p.unit}` : v.toFixed(p.decimals))}
            label={`${p.title}, ${samples.length} samples ${span}`}
            testId={`telemetry-plot-${p.id}`}
          />
        ))}
      </div>
    </div>
  );
}
