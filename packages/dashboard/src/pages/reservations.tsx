import { useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { DataTable } from '../components/table-box.tsx';
import { submitting } from '../components/table-parts.tsx';
import { ReservationActions } from '../components/reservation-actions.tsx';
import { formatTime } from '../lib/format.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

type Reservation = Schemas['Reservation'];

const target = (r: Reservation) =>
  r.board_id ? (
    <Link href={`/boards/${r.board_id}`}>{r.board_name ?? r.board_id}</Link>
  ) : (
    <span>
      any of <code>{Object.entries(r.board_selector ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')}</code>
    </span>
  );

/** `k=v, k2=v2` → a selector; a pair without `=` is refused here, as the server would. */
function selectorOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0) throw new ApiProblem(400, 'validation_failed', 'Bad Request', `A label is key=value (got "${part}").`);
    out[part.slice(0, at)] = part.slice(at + 1);
  }
  if (Object.keys(out).length === 0) throw new ApiProblem(400, 'validation_failed', 'Bad Request', 'Choose a board or give labels.');
  return out;
}

/** Reservations: who holds which board until when, the queue, and asking for a board (docs/reservations.md). */
export function ReservationsPage() {
  const active = useResource(() => unwrap(client.GET('/api/reservations/', { params: { query: { status: 'active', limit: 1000 } } })), [], { pollMs: 5000 });
  const waiting = useResource(() => unwrap(client.GET('/api/reservations/', { params: { query: { status: 'waiting', limit: 1000 } } })), [], { pollMs: 5000 });
  const boards = useResource(() => unwrap(client.GET('/api/boards/', { params: { query: { limit: 1000 } } })), []);
  const [error, setError] = useState<unknown>(null);
  const [made, setMade] = useState<Reservation | null>(null);
  const reload = () => {
    active.reload();
    waiting.reload();
  };
  // The queue in the order it is served: oldest first.
  const queue = [...(waiting.data?.reservations ?? [])].sort((a, b) => a.id - b.id);

  return (
    <section aria-labelledby="reservations-title" class="stack">
      <h1 id="reservations-title">Reservations</h1>
      <p class="muted">
        A reserved board takes no selector or rollout work but its holder's, and others' work naming it waits. Leases end by themselves; the queue is served
        first come, first served.
      </p>
      {canOperate.value && (
        <form
          class="card stack"
          aria-label="Reserve a board"
          onSubmit={submitting(async (f) => {
            const board = String(f.get('board') ?? '');
            const hours = Number(f.get('hours'));
            const note = String(f.get('note') ?? '').trim();
            const body = {
              ...(board ? { board_id: board } : { board_selector: selectorOf(String(f.get('labels') ?? '')) }),
              duration_s: Math.round(hours * 3600),
              ...(note ? { note } : {}),
            };
            setMade(await unwrap(client.POST('/api/reservations/', { body })));
            reload();
          }, setError)}
        >
          <h2 class="form-title">Reserve a board</h2>
          <div class="row wrap align-end">
            <label>
              Board
              <select name="board">
                <option value="">any idle board with the labels →</option>
                {(boards.data?.boards ?? []).map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.name}
                    {b.reservation ? ` (held by ${b.reservation.user ?? 'anonymous'})` : ''}
                  </option>
                ))}
              </select>
            </label>
            <label class="grow">
              Labels
              <input name="labels" placeholder="site=lab-1, camera=yes" />
            </label>
            <label>
              For (hours)
              <input name="hours" type="number" min="0.25" max="24" step="0.25" defaultValue="1" required />
            </label>
            <label class="grow">
              Note
              <input name="note" maxLength={500} placeholder="what it is for" />
            </label>
          </div>
          <div>
            <button type="submit" class="primary">
              Reserve
            </button>
          </div>
        </form>
      )}
      {made && (
        <p role="status" data-testid="reservation-made">
          {made.status === 'active'
            ? `Reservation ${made.id}: ${made.board_name ?? ''} is yours until ${formatTime(made.ends_at)}.`
            : `Reservation ${made.id} waits: position ${made.position ?? '?'}${made.estimated_start_at ? `, expected by ${formatTime(made.estimated_start_at)}` : ''}.`}
        </p>
      )}
      <ErrorBox error={error ?? active.error ?? waiting.error} onDismiss={() => setError(null)} />

      <h2>Held now</h2>
      {active.data && active.data.reservations.length === 0 && <p data-testid="no-reservations">No board is reserved.</p>}
      {active.data && active.data.reservations.length > 0 && (
        <DataTable label="Reservations held now" columns={['Board', 'Held by', 'Until', 'Note', '']}>
          {active.data.reservations.map((r) => (
            <tr key={r.id} data-testid={`held-${r.id}`}>
              <td>{target(r)}</td>
              <td>{r.user ?? 'anonymous'}</td>
              <td>{formatTime(r.ends_at)}</td>
              <td class="small">{r.note || <span class="muted">—</span>}</td>
              <td>
                <ReservationActions r={r} onDone={reload} onError={setError} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}

      <h2>Queue</h2>
      {waiting.data && queue.length === 0 && <p data-testid="empty-queue">Nobody is waiting.</p>}
      {queue.length > 0 && (
        <DataTable label="Reservation queue" columns={['Wants', 'Position', 'Asked by', 'Expected', 'Asked at', '']}>
          {queue.map((r) => (
            <tr key={r.id} data-testid={`waiting-${r.id}`}>
              <td>{target(r)}</td>
              <td>{r.position ?? '—'}</td>
              <td>{r.user ?? 'anonymous'}</td>
              <td>{r.estimated_start_at ? formatTime(r.estimated_start_at) : <span class="muted">unknown</span>}</td>
              <td class="small">{formatTime(r.requested_at)}</td>
              <td>
                <ReservationActions r={r} onDone={reload} onError={setError} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
