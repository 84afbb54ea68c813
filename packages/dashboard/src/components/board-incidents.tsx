import type { Board, Schemas } from '../api/client.ts';
import { client, unwrap } from '../api/client.ts';
import { formatDuration, formatTime } from '../lib/format.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';

type Incident = Schemas['Incident'];

/** Where an open incident's recovery is (its `phase`), in words. */
const PHASE_TEXT: Record<Incident['phase'], string> = {
  detected: 'detected: a power cycle is next (if the board has power settings and cycles are left)',
  cycling: 'power-cycling it through its lab host',
  booting: 'power-cycled: waiting for it to link again',
  checking: 'linked again: running its health checks',
  closed: 'closed',
};

const ACTION_TEXT: Record<Incident['actions'][number]['action'], string> = { power_cycle: 'power cycle', health_check: 'health check' };

/** Seconds as "12.3 s" below a minute, else "3 min 4 s". */
function seconds(s: number): string {
  return s < 60 ? `${s.toFixed(1)} s` : formatDuration(s);
}

function secondsBetween(from: string, to: string): number {
  return (new Date(to).getTime() - new Date(from).getTime()) / 1000;
}

/**
 * The board page's incidents (docs/power.md): an open one said plainly at the top (why the board
 * is unresponsive and where its recovery is), a recovery that gave up (the board is `bad`), and
 * every incident with when it began, when it was detected, what the recovery did, when the board
 * was back in service, the outcome and the time to recover (MTTR).
 */
export function BoardIncidents({ board }: { board: Board }) {
  const unresponsive = board.status === 'unresponsive';
  // Reloaded when the board's status changes; polled faster while one is open.
  const list = useResource(() => unwrap(client.GET('/api/boards/{id}/incidents/', { params: { path: { id: board.id } } })), [board.id, board.status, board.health], {
    pollMs: unresponsive ? 2000 : 10_000,
  });
  const incidents = list.data?.incidents ?? [];
  const open = incidents.find((i) => i.outcome === null);
  const latest = incidents[0];
  const gaveUp = !open && latest?.outcome === 'bad' && board.health === 'bad' ? latest : undefined;
  const recovered = incidents.filter((i) => i.recovery_seconds !== null);
  const mttr = recovered.length ? recovered.reduce((s, i) => s + i.recovery_seconds!, 0) / recovered.length : null;

  return (
    <section class="stack" aria-labelledby="board-incidents-title" data-testid="board-incidents">
      <h2 id="board-incidents-title">Incidents</h2>
      {/* The incidents say whether one is open; the board's status (polled apart) only until they are loaded. */}
      {(open || (unresponsive && !list.data)) && (
        <div class="card stack incident-alert" role="status" data-testid="incident-open">
          <p>
            <StatusBadge status="unresponsive" /> <strong>{board.name} stopped answering</strong>
            {open && (
              <>
                {' '}
                at {formatTime(open.started_at)} (noticed {seconds(secondsBetween(open.started_at, open.detected_at))} later): {open.reason}.
              </>
            )}
          </p>
          {open && (
            <p>
              Recovery: <strong>{PHASE_TEXT[open.phase]}</strong>
              {cycles(open) > 0 && ` · ${cycles(open)} power cycle${cycles(open) === 1 ? '' : 's'} so far`}
              .{' '}
              {!board.power && 'This board has no power settings: it stays unresponsive until it comes back by itself or someone switches it.'}
            </p>
          )}
        </div>
      )}
      {gaveUp && (
        <div class="card stack incident-alert" role="status" data-testid="incident-gave-up">
          <p>
            <StatusBadge status="bad" /> <strong>Recovery gave up</strong> ({formatTime(board.health_checked_at ?? lastAt(gaveUp))}):{' '}
            {board.health_reason ?? gaveUp.reason}
          </p>
          <p class="small">
            It takes no selector work until someone looks at it. Once it is fixed, run its health checks: a pass puts it back in service.
          </p>
        </div>
      )}
      <ErrorBox error={list.error} />
      {list.data &&
        (incidents.length === 0 ? (
          <p class="muted" data-testid="no-incidents">
            No incidents: this board has not hung since it was registered.
          </p>
        ) : (
          <>
            <p class="small" data-testid="incident-summary">
              {incidents.length} incident{incidents.length === 1 ? '' : 's'}
              {incidents.length === 100 ? ' (the latest 100)' : ''}; {recovered.length} recovered without a person
              {mttr !== null && (
                <>
                  , mean time to recover <strong>{seconds(mttr)}</strong>
                </>
              )}
              .
            </p>
            <div class="table-scroll" role="region" aria-label="Incidents" tabIndex={0}>
              <table class="incidents">
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Detected</th>
                    <th scope="col">Actions</th>
                    <th scope="col">Recovered</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">MTTR</th>
                  </tr>
                </thead>
                <tbody>
                  {incidents.map((i) => (
                    <tr key={i.id} data-testid={`incident-${i.id}`}>
                      <td>
                        {formatTime(i.started_at)}
                        <div class="muted small">{i.reason}</div>
                      </td>
                      <td>
                        {formatTime(i.detected_at)}
                        <div class="muted small">+{seconds(secondsBetween(i.started_at, i.detected_at))}</div>
                      </td>
                      <td>
                        {i.actions.length === 0 ? (
                          <span class="muted">{i.outcome === null ? 'none yet' : 'none'}</span>
                        ) : (
                          <ol class="steps small">
                            {i.actions.map((a, n) => (
                              <li key={n}>
                                {ACTION_TEXT[a.action]}
                                {a.operation_ids.map((id) => (
                                  <span key={id}>
                                    {' '}
                                    <Link href={`/operations/${id}`}>#{id}</Link>
                                  </span>
                                ))}
                                {actionOutcome(i, n)}
                              </li>
                            ))}
                          </ol>
                        )}
                      </td>
                      <td>{i.recovered_at ? formatTime(i.recovered_at) : '—'}</td>
                      <td>{i.outcome ? <StatusBadge status={i.outcome} /> : <span class="badge badge-open">open: {i.phase}</span>}</td>
                      <td class="nowrap">{i.recovery_seconds !== null ? seconds(i.recovery_seconds) : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        ))}
    </section>
  );
}

/** When the incident's last action was taken (or it was detected). */
function lastAt(i: Incident): string {
  return i.actions.at(-1)?.at ?? i.detected_at;
}

/** What came of the incident's n-th action: noted by the recovery, or read from how the incident ended. */
function actionOutcome(i: Incident, n: number): string {
  const a = i.actions[n]!;
  if (a.outcome) return `: ${a.outcome}`;
  if (i.outcome === null) return n === i.actions.length - 1 ? ': …' : '';
  // A recovery's last health check is not noted when it passes: the incident's outcome says it.
  if (i.outcome === 'recovered' && n === i.actions.length - 1 && a.action === 'health_check') return ': passed';
  return '';
}

function cycles(i: Incident): number {
  return i.actions.filter((a) => a.action === 'power_cycle').length;
}
