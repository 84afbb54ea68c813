/**
 * One way to show a metric, shared by the dashboard and `mm`: its label, its unit and its
 * value as people read them. Per-run metrics are a flat map of snake_case names to numbers
 * (`metrics.json`, `result.metrics`, `result.summary`); the unit is read from the name's
 * suffix (`_ms`, `_c`, `_w`, ...), the way the runner and the agent name them.
 */

/** How a unit is shown, and how a value in it is scaled for reading. */
export interface MetricUnit {
  /** Shown after the value (`ms`, `°C`, ...); '' for a plain count. */
  symbol: string;
  /** The unit's name for an axis (`Time (ms)`) or a legend. */
  name: string;
}

interface UnitRule {
  suffix: RegExp;
  unit: MetricUnit;
}

/** First match wins: longer, more specific suffixes come first. */
const UNIT_RULES: readonly UnitRule[] = [
  { suffix: /(^|_)fps$/, unit: { symbol: 'fps', name: 'frames per second' } },
  { suffix: /_mj_per_frame$/, unit: { symbol: 'mJ/frame', name: 'millijoules per frame' } },
  { suffix: /_ms(_p\d+)?$|^latency_ms_p\d+$/, unit: { symbol: 'ms', name: 'milliseconds' } },
  { suffix: /_s$/, unit: { symbol: 's', name: 'seconds' } },
  { suffix: /_c$/, unit: { symbol: '°C', name: 'degrees Celsius' } },
  { suffix: /_w$/, unit: { symbol: 'W', name: 'watts' } },
  { suffix: /_mj$/, unit: { symbol: 'mJ', name: 'millijoules' } },
  { suffix: /_j$/, unit: { symbol: 'J', name: 'joules' } },
  { suffix: /_mhz$/, unit: { symbol: 'MHz', name: 'megahertz' } },
  { suffix: /_bytes$/, unit: { symbol: 'B', name: 'bytes' } },
  { suffix: /_percent$|_pct$/, unit: { symbol: '%', name: 'percent' } },
];

const PLAIN: MetricUnit = { symbol: '', name: '' };

/** Names people know better than their snake_case (the runner's and the agent's own). */
const KNOWN_LABELS: Readonly<Record<string, string>> = {
  run_ms: 'Run time',
  fps: 'Frames per second',
  e2e_fps: 'End-to-end fps',
  dpu_fps: 'DPU fps',
  frames: 'Frames',
  latency_ms: 'Latency',
  latency_ms_p50: 'Latency p50',
  latency_ms_p95: 'Latency p95',
  latency_ms_p99: 'Latency p99',
  dpu_ms: 'DPU time',
  mean_power_w: 'Mean power',
  idle_power_w: 'Idle power',
  energy_mj_per_frame: 'Energy per frame',
  max_temperature_c: 'Max temperature',
  start_temperature_c: 'Start temperature',
};

/** The unit a metric's name implies (a plain count when its suffix names none). */
export function metricUnit(name: string): MetricUnit {
  return UNIT_RULES.find((r) => r.suffix.test(name))?.unit ?? PLAIN;
}

/** A metric's label for people: `latency_ms_p95` → `Latency p95`, `foo_bar_ms` → `Foo bar`. */
export function metricLabel(name: string): string {
  const known = KNOWN_LABELS[name];
  if (known) return known;
  const words = name
    .replace(/_(ms|s|c|w|mj|j|mhz|bytes|percent|pct)(?=$|_p\d+$)/, '')
    .split('_')
    .filter(Boolean);
  const text = words.join(' ');
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : name;
}

/** `Latency p95 (ms)`: an axis title or a table heading. */
export function metricTitle(name: string): string {
  const { symbol } = metricUnit(name);
  return symbol ? `${metricLabel(name)} (${symbol})` : metricLabel(name);
}

/** A number with a sensible precision: 3 significant digits below 100, whole above. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (Number.isInteger(value) || abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return '0';
  return value.toPrecision(2);
}

function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(n)} B` : `${v.toFixed(Math.abs(v) >= 100 ? 0 : 1)} ${units[i]}`;
}

/**
 * A value with its unit: `68.2 °C`, `14.3 s` (a time of a second or more in seconds), `42 fps`,
 * `1.5 MiB`. Null or a value that is not a finite number reads `—`.
 */
export function formatMetric(name: string, value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const unit = metricUnit(name);
  if (unit.symbol === 'B') return formatBytes(value);
  if (unit.symbol === 'ms' && Math.abs(value) >= 1000) return `${formatNumber(value / 1000)} s`;
  return unit.symbol ? `${formatNumber(value)} ${unit.symbol}` : formatNumber(value);
}

/** A relative change as people read it: `+3.1 %`, `−0.4 %` (a true minus sign). */
export function formatChangePercent(pct: number | null | undefined): string {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return '—';
  const text = Math.abs(pct) >= 10 ? Math.abs(pct).toFixed(0) : Math.abs(pct).toFixed(1);
  return `${pct > 0 ? '+' : pct < 0 ? '−' : '±'}${text} %`;
}
