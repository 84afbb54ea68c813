import { client, unwrap, type Board } from '../api/client.ts';
import { hottest } from './fleet-fields.ts';
import { ApiProblem } from '../api/problem.ts';

/** How many samples a sparkline keeps (one per poll, or per minute from the server's history). */
const KEEP = 60;

interface History {
  lastAt: string | null;
  values: number[];
  /** The server's recent history was asked for once (or is being). */
  seeded: boolean;
}

const byBoard = new Map<string, History>();

function historyOf(id: string): History {
  let h = byBoard.get(id);
  if (!h) byBoard.set(id, (h = { lastAt: null, values: [], seeded: false }));
  return h;
}

/**
 * The hottest temperature of each board's latest sample, appended once per new sample (a new
 * array each time, so a row redraws only when its own line changed). Returns the boards whose
 * history changed.
 */
export function recordTelemetry(boards: readonly Board[]): number {
  let changed = 0;
  for (const b of boards) {
    const t = b.telemetry;
    const v = hottest(t);
    if (!t || v === null) continue;
    const h = historyOf(b.id);
    if (h.lastAt === t.at) continue;
    h.lastAt = t.at;
    h.values = [...h.values.slice(-(KEEP - 1)), v];
    changed++;
  }
  return changed;
}

export function temperatureHistory(id: string): readonly number[] {
  return byBoard.get(id)?.values ?? [];
}

/** The server answered 404 for the history route (an older server): stop asking. */
let noHistoryRoute = false;

/**
 * The last hour from `GET /api/boards/<id>/telemetry/`, asked once per board when its row has
 * stayed on screen a moment (a fast scroll through 1,000 rows asks for none of them), so a
 * fresh page has lines at once; a server without the route leaves the line to grow from the
 * polls. Calls `onDone` when the history changed. Returns a cancel for an unmounted row.
 */
export function seedTelemetryHistory(id: string, onDone: () => void, delayMs = 400): () => void {
  const h = historyOf(id);
  if (h.seeded || noHistoryRoute) return () => {};
  const timer = window.setTimeout(() => {
    h.seeded = true;
    const since = new Date(Date.now() - 3600_000).toISOString();
    unwrap(client.GET('/api/boards/{id}/telemetry/', { params: { path: { id }, query: { since } } }))
      .then(({ samples }) => {
        const past = samples.filter((s) => h.lastAt === null || s.at < h.lastAt).map(hottest).filter((v): v is number => v !== null);
        if (past.length === 0) return;
        h.values = [...past, ...h.values].slice(-KEEP);
        if (h.lastAt === null) h.lastAt = samples.at(-1)?.at ?? null;
        onDone();
      })
      .catch((err: unknown) => {
        if (err instanceof ApiProblem && err.status === 404 && err.code !== 'board_not_found') noHistoryRoute = true;
      });
  }, delayMs);
  return () => clearTimeout(timer);
}
