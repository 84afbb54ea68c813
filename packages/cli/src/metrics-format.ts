import { formatMetric } from '@mm/api-client';

/**
 * One figure as people read it, its unit from its name's suffix (`_ms`, `_s`, `_c`, `_w`,
 * `_bytes`, `_percent`): the dashboard's own formatter (@mm/api-client), so `mm` and the
 * pages say `14.3 s` and `68.2 °C` alike.
 */
export function metricValue(name: string, value: number): string {
  return formatMetric(name, value);
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
