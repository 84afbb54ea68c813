import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TelemetrySample } from './board-telemetry.tsx';
import { timeRange } from '../lib/plot-range.ts';

const PALETTE = ['#d1495b', '#0550ae', '#1a7f37', '#8a5300', '#6f42c1', '#00798c', '#bf3989', '#57606a'];
/** As the rest of the dashboard counts a GB (formatBytes): 1024³ bytes. */
const GB = 1024 ** 3;

interface PlotSpec {
  title: string;
  unit: string;
  series: Array<{ label: string; values: Array<number | null> }>;
}

/** Temperatures per sensor, power, memory and load over the samples (one a minute, 24 h at most). */
export function TelemetryPlots({ samples }: { samples: TelemetrySample[] }) {
  const xs = samples.map((s) => Date.parse(s.at) / 1000);
  const sensors = [...new Set(samples.flatMap((s) => Object.keys(s.temperatures_c)))].sort();
  const plots: PlotSpec[] = [
    { title: 'Temperature', unit: '°C', series: sensors.map((name) => ({ label: name, values: samples.map((s) => s.temperatures_c[name] ?? null) })) },
    ...(samples.some((s) => s.power_w !== undefined) ? [{ title: 'Power', unit: 'W', series: [{ label: 'power', values: samples.map((s) => s.power_w ?? null) }] }] : []),
    { title: 'Memory used', unit: 'GB', series: [{ label: 'memory', values: samples.map((s) => s.memory_used_bytes / GB) }] },
    { title: 'Load (1 min)', unit: '', series: [{ label: 'load', values: samples.map((s) => s.load_1m) }] },
  ];
  return (
    <div class="plots" data-testid="telemetry-plots">
      {plots.map((p) => (
        <Plot key={p.title} xs={xs} spec={p} />
      ))}
    </div>
  );
}

function Plot({ xs, spec }: { xs: number[]; spec: PlotSpec }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, el.clientWidth);
    const decimals = spec.unit === '°C' || spec.unit === 'W' ? 1 : 2;
    // Canvas colours cannot be `currentColor`: the page's text colour (light or dark scheme) is read here.
    const ink = getComputedStyle(el).color;
    const grid = { stroke: 'rgba(128,128,128,0.2)' };
    const plot = new uPlot(
      {
        width: width(),
        height: 180,
        title: spec.unit ? `${spec.title} (${spec.unit})` : spec.title,
        legend: { live: true },
        cursor: { drag: { x: true, y: false } },
        scales: { x: { time: true, range: timeRange } },
        axes: [{ stroke: ink, grid }, { stroke: ink, grid, size: 55 }],
        series: [
          {},
          ...spec.series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length],
            width: 1.5,
            spanGaps: false,
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : v.toFixed(decimals)),
          })),
        ],
      },
      [xs, ...spec.series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [xs, spec]);
  return <div ref={box} class="plot" role="img" aria-label={`${spec.title} over the last 24 hours`} />;
}
