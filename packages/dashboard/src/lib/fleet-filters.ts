import { parseLabelPair } from '@mm/api-client';
import type { Board } from '@mm/api-client';

/** What the fleet view shows, as its URL query holds it (`?label=k=v&label=…&status=&health=&q=`). */
export interface FleetFilters {
  labels: Array<[string, string]>;
  status: string;
  health: string;
  q: string;
}

export function parseFleetFilters(search: string): FleetFilters {
  const sp = new URLSearchParams(search);
  const labels = sp.getAll('label').flatMap((t) => {
    const pair = parseLabelPair(t);
    return pair ? [pair] : [];
  });
  return { labels, status: sp.get('status') ?? '', health: sp.get('health') ?? '', q: sp.get('q') ?? '' };
}

export function fleetQuery(f: FleetFilters): string {
  const sp = new URLSearchParams();
  for (const [k, v] of f.labels) sp.append('label', `${k}=${v}`);
  if (f.status) sp.set('status', f.status);
  if (f.health) sp.set('health', f.health);
  if (f.q) sp.set('q', f.q);
  return sp.size ? `?${sp}` : '';
}

/**
 * Whether a board passes the filters: every label pair held (as the scheduler's selectors
 * match), the status (`maintenance` and `busy` count as statuses here), the health (a board
 * without one is `unknown`), and the name or host name containing `q`.
 */
export function matchesFleetFilters(b: Board, f: FleetFilters): boolean {
  for (const [k, v] of f.labels) if (b.labels?.[k] !== v) return false;
  if (f.status === 'maintenance') {
    if (!b.maintenance) return false;
  } else if (f.status === 'busy') {
    if (!b.busy) return false;
  } else if (f.status && b.status !== f.status) return false;
  if (f.health && (b.health ?? 'unknown') !== f.health) return false;
  if (f.q) {
    const q = f.q.toLowerCase();
    if (!b.name.toLowerCase().includes(q) && !(b.hostname ?? '').toLowerCase().includes(q)) return false;
  }
  return true;
}
