import { bytes } from './format.ts';

/** One figure as people read it, its unit from its name's suffix (`_ms`, `_s`, `_c`, `_w`, `_bytes`, `_percent`). */
export function metricValue(name: string, value: number): string {
  const n = Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
  if (name.endsWith('_ms')) return value >= 1000 ? `${n} ms (${(value / 1000).toFixed(1)} s)` : `${n} ms`;
  if (name.endsWith('_s')) return `${n} s`;
  if (name.endsWith('_c')) return `${n} °C`;
  if (name.endsWith('_w')) return `${n} W`;
  if (name.endsWith('_bytes')) return bytes(value);
  if (name.endsWith('_percent')) return `${n} %`;
  return n;
}

/** `result.metrics` as aligned `name  value` lines (sorted by name), or [] when there are none. */
export function metricLines(metrics: unknown, indent = '  '): string[] {
  if (!metrics || typeof metrics !== 'object' || Array.isArray(metrics)) return [];
  const entries = Object.entries(metrics as Record<string, unknown>)
    .filter((e): e is [string, number] => typeof e[1] === 'number')
    .sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${indent}${k.padEnd(width)}  ${metricValue(k, v)}`);
}
