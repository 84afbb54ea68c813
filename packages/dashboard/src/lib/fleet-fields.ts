// From the shared package (not ../api/client.ts): pure types, so Node-side unit tests can import this file.
import type { Board, Schemas } from '@mm/api-client';

export type Health = Board['health'];
export type TelemetrySample = Schemas['TelemetrySample'];

/** The hottest sensor of a sample (what a sparkline shows), or null without one. */
export function hottest(t: TelemetrySample | null | undefined): number | null {
  const values = Object.values(t?.temperatures_c ?? {}).filter((v) => Number.isFinite(v));
  return values.length ? Math.max(...values) : null;
}

/** Labels people set (not the agent's read-only `mm/` ones). */
export function userLabels(labels: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !k.startsWith('mm/')));
}
