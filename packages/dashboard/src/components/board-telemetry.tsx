import type { Board, Operation } from '../api/client.ts';
import type { RunSpan } from './telemetry-plots.tsx';
import { client, unwrap } from '../api/client.ts';
import type { TelemetrySample } from '../lib/fleet-fields.ts';
import { formatBytes, formatTime, ago } from '../lib/format.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from './error-box.tsx';
import { lazyPage } from './lazy-page.tsx';

/** The plots are their own chunk (uPlot and its CSS): the first page does not carry them. */
const TelemetryPlots = lazyPage(() => import('./telemetry-plots.tsx').then((m) => m.TelemetryPlots));

/** How many of the board's latest runs the plots offer to zoom to. */
const RECENT_RUNS = 20;

/** The runs that started, with their time span (a running one up to now). */
function runSpans(operations: readonly Operation[]): RunSpan[] {
  return operations.flatMap((op) =>
    op.started_at ? [{ id: op.id, status: op.status, from: Date.parse(op.started_at) / 1000, to: op.finished_at ? Date.parse(op.finished_at) / 1000 : null }] : [],
  );
}

/** The board page's telemetry section: the latest reading, and plots of the last 24 h. */
export function BoardTelemetry({ board }: { board: Board }) {
  // The server keeps one sample a minute: polling each minute shows every new one.
  const history = useResource(() => unwrap(client.GET('/api/boards/{id}/telemetry/', { params: { path: { id: board.id }, query: {} } })), [board.id], {
    pollMs: 60_000,
  });
  // The board's recent runs: the plots can zoom to the time around one of them.
  const runs = useResource(() => unwrap(client.GET('/api/operations/', { params: { query: { board_id: board.id, kind: 'execute', limit: RECENT_RUNS } } })), [board.id], {
    pollMs: 60_000,
  });
  const latest = board.telemetry;
  return (
    <section aria-labelledby="telemetry-title" class="stack" data-testid="board-telemetry">
      <h2 id="telemetry-title">Telemetry</h2>
      {latest ? <LatestTelemetry sample={latest} /> : <p class="muted">No telemetry from this board yet (its agent sends a reading every 30 s by default).</p>}
      <ErrorBox error={history.error} />
      {history.data && history.data.samples.length > 0 && <TelemetryPlots samples={history.data.samples} runs={runSpans(runs.data?.operations ?? [])} />}
      {history.data && history.data.samples.length === 0 && latest && <p class="muted">The plots show the last 24 h once the server has kept a few minutes.</p>}
    </section>
  );
}

function LatestTelemetry({ sample }: { sample: TelemetrySample }) {
  const temps = Object.entries(sample.temperatures_c).sort(([a], [b]) => a.localeCompare(b));
  return (
    <dl class="facts" data-testid="latest-telemetry">
      <dt>Reading of</dt>
      <dd>
        {ago(sample.at)} ({formatTime(sample.at)})
      </dd>
      <dt>Temperatures</dt>
      <dd>{temps.length === 0 ? '—' : temps.map(([name, c]) => `${name} ${c.toFixed(1)} °C`).join(' · ')}</dd>
      <dt>Power</dt>
      <dd>{sample.power_w !== undefined ? `${sample.power_w.toFixed(2)} W` : 'not measured on this board'}</dd>
      <dt>Memory used</dt>
      <dd>{formatBytes(sample.memory_used_bytes)}</dd>
      <dt>Load (1 min)</dt>
      <dd>{sample.load_1m.toFixed(2)}</dd>
      <dt>Free disk</dt>
      <dd>{formatBytes(sample.disk_free_bytes)}</dd>
    </dl>
  );
}
