import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Board, type Schemas } from '../api/client.ts';
import { userLabels } from '../lib/fleet-fields.ts';
import { formatBytes, formatTime } from '../lib/format.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { ApiProblem } from '../api/problem.ts';
import { ErrorBox } from './error-box.tsx';
import { NoHealthCheck } from './no-health-check.tsx';
import { HealthBadge } from './health-badge.tsx';
import { LabelChips } from './label-chips.tsx';
import { Link } from './link.tsx';
import { ReservationActions } from './reservation-actions.tsx';

/** The contract's label rules, checked before sending so a typo is named next to its field. */
const KEY_RE = /^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$/;
const MAX_LABELS = 32;

function labelProblem(key: string, value: string): string {
  if (!KEY_RE.test(key)) return 'a key is 1–63 of a-z 0-9 . _ / -, starting and ending with a letter or digit';
  if (key.startsWith('mm/')) return 'mm/ labels are the agent’s own and cannot be set';
  if (value.length > 63 || !/^[\x20-\x7e]*$/.test(value)) return 'a value is at most 63 printable characters';
  return '';
}

/**
 * The board page's fleet section: health (with its reason, and a check run now), maintenance
 * (admins toggle it), labels (admins edit people's labels; the agent's `mm/` ones are read-only),
 * what it runs and what waits for it, and the facts the agent found.
 */
export function BoardFleetPanel({ board, onChange }: { board: Board; onChange: (b: Board) => void }) {
  const b = board;
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState<number | null>(null);
  const [noCheck, setNoCheck] = useState(false);

  async function patch(body: Schemas['PatchBoard']) {
    setError(null);
    try {
      onChange(await unwrap(client.PATCH('/api/boards/{id}/', { params: { path: { id: b.id } }, body })));
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }

  /** After a reservation changed: the board as it is now (its `reservation`). */
  async function reload() {
    try {
      onChange(await unwrap(client.GET('/api/boards/{id}/', { params: { path: { id: b.id } } })));
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section class="card stack" aria-labelledby="fleet-panel-title" data-testid="board-fleet-panel">
      <h2 id="fleet-panel-title">In the fleet</h2>
      <dl class="facts">
        <dt>Health</dt>
        <dd data-testid="board-health">
          <HealthBadge health={b.health} reason={b.health_reason} /> {b.health_reason && <span>{b.health_reason}</span>}
          {b.health_checked_at && <span class="muted small"> · checked {formatTime(b.health_checked_at)}</span>}
          {canOperate.value && (
            <>
              {' '}
              <button
                type="button"
                class="link"
                onClick={async () => {
                  setError(null);
                  setNoCheck(false);
                  try {
                    const op = await unwrap(client.POST('/api/boards/{id}/health-check/', { params: { path: { id: b.id } } }));
                    setChecking(op.id);
                  } catch (err) {
                    // No check matches: say what to do (create one for this board), not a generic "reload".
                    if (err instanceof ApiProblem && err.code === 'no_health_check') setNoCheck(true);
                    else setError(err);
                  }
                }}
              >
                Run health checks now
              </button>
              {checking !== null && (
                <span class="small">
                  {' '}
                  started as <Link href={`/operations/${checking}`}>operation #{checking}</Link>
                </span>
              )}
            </>
          )}
          {noCheck && <NoHealthCheck board={b} onDismiss={() => setNoCheck(false)} />}
        </dd>
        <dt>Maintenance</dt>
        <dd>
          <span data-testid="board-maintenance">{b.maintenance ? 'in maintenance: takes no selector work' : 'in service'}</span>
          {isAdmin.value && (
            <>
              {' '}
              <button type="button" onClick={() => void patch({ maintenance: !b.maintenance })}>
                {b.maintenance ? 'Return to service' : 'Put in maintenance'}
              </button>
            </>
          )}
        </dd>
        <dt>Reservation</dt>
        <dd>
          {b.reservation ? (
            <>
              <span data-testid="board-reservation">
                held by <strong>{b.reservation.user ?? 'anonymous'}</strong> until {formatTime(b.reservation.ends_at)}
              </span>{' '}
              <ReservationActions r={{ id: b.reservation.id, user: b.reservation.user, status: 'active' }} onDone={reload} onError={setError} />
            </>
          ) : (
            <>
              <span data-testid="board-reservation">nobody holds it</span>{' '}
              {canOperate.value && (
                <button
                  type="button"
                  onClick={async () => {
                    try {
                      await unwrap(client.POST('/api/reservations/', { body: { board_id: b.id, duration_s: 3600 } }));
                      reload();
                    } catch (err) {
                      setError(err);
                    }
                  }}
                >
                  Reserve for 1 h
                </button>
              )}
            </>
          )}{' '}
          <Link href="/reservations">reservations</Link>
        </dd>
        <dt>Running</dt>
        <dd>
          {b.current_operation_id ? <Link href={`/operations/${b.current_operation_id}`}>operation #{b.current_operation_id}</Link> : b.busy ? 'an operation' : 'nothing'}
          {typeof b.queued === 'number' && <span class="muted"> · {b.queued} queued for it</span>}{' '}
          <Link href={`/operations?board_id=${b.id}`}>its operations</Link>
        </dd>
        <dt>Labels</dt>
        <dd>
          <LabelChips labels={b.labels} />
        </dd>
      </dl>
      {isAdmin.value && <LabelEditor labels={userLabels(b.labels)} onSave={(labels) => patch({ labels })} />}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {b.facts && Object.keys(b.facts).length > 0 && <Facts facts={b.facts} />}
    </section>
  );
}

/** People's labels as editable key/value rows; saved together (PATCH replaces the map). */
function LabelEditor({ labels, onSave }: { labels: Record<string, string>; onSave: (labels: Record<string, string>) => Promise<boolean> }) {
  const initial = () => Object.entries(labels).map(([key, value]) => ({ key, value }));
  const [open, setOpen] = useState(false);
  const [rows, setRows] = useState(initial);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    if (!open) setRows(initial());
  }, [JSON.stringify(labels), open]);
  if (!open)
    return (
      <div>
        <button type="button" onClick={() => setOpen(true)}>
          Edit labels
        </button>
      </div>
    );
  const set = (i: number, part: 'key' | 'value', v: string) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, [part]: v } : r)));
  return (
    <form
      class="stack"
      aria-label="Edit labels"
      onSubmit={async (e) => {
        e.preventDefault();
        const filled = rows.map((r) => ({ key: r.key.trim(), value: r.value.trim() })).filter((r) => r.key || r.value);
        for (const r of filled) {
          const p = labelProblem(r.key, r.value);
          if (p) return setProblem(`${r.key || '(empty key)'}: ${p}.`);
        }
        if (new Set(filled.map((r) => r.key)).size !== filled.length) return setProblem('Each key may appear once.');
        if (filled.length > MAX_LABELS) return setProblem(`At most ${MAX_LABELS} labels.`);
        setProblem('');
        if (await onSave(Object.fromEntries(filled.map((r) => [r.key, r.value])))) setOpen(false);
      }}
    >
      {rows.map((r, i) => (
        <div class="row wrap" key={i}>
          <label>
            Key
            <input value={r.key} onInput={(e) => set(i, 'key', (e.target as HTMLInputElement).value)} placeholder="camera" />
          </label>
          <label>
            Value
            <input value={r.value} onInput={(e) => set(i, 'value', (e.target as HTMLInputElement).value)} placeholder="yes" />
          </label>
          <button type="button" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>
            Remove <span class="visually-hidden">label {r.key}</span>
          </button>
        </div>
      ))}
      <p class="error-text small" role="status">
        {problem}
      </p>
      <div class="row wrap">
        <button type="button" onClick={() => setRows((rs) => [...rs, { key: '', value: '' }])}>
          Add a label
        </button>
        <button type="submit" class="primary">
          Save labels
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function factText(key: string, v: unknown): string {
  if (typeof v === 'number' && /_bytes$/.test(key)) return formatBytes(v);
  if (v === null || v === undefined) return '—';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function Facts({ facts }: { facts: Record<string, unknown> }) {
  return (
    <details>
      <summary>What the agent found ({Object.keys(facts).length} facts)</summary>
      <dl class="facts" data-testid="board-facts">
        {Object.entries(facts)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => (
            <Fragment key={k}>
              <dt>{k.replace(/_/g, ' ')}</dt>
              <dd>{factText(k, v)}</dd>
            </Fragment>
          ))}
      </dl>
    </details>
  );
}
