import type { Schemas } from '../api/client.ts';
import { formatTime } from '../lib/format.ts';

type Board = Schemas['Board'];

/** The end of a lease, short: the time alone within a day, else the date and time. */
function shortEnd(iso: string): string {
  const d = new Date(iso);
  const soon = d.getTime() - Date.now() < 86_400_000;
  return soon ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }) : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
}

/** Who holds the board and until when (docs/reservations.md), in one short line; nothing when nobody does. */
export function ReservationBadge({ board }: { board: Pick<Board, 'name' | 'reservation'> }) {
  const r = board.reservation;
  if (!r) return null;
  const who = r.user ?? 'anonymous';
  return (
    <span class="badge badge-reserved" data-testid={`reservation-${board.name}`} title={`Reserved by ${who} until ${formatTime(r.ends_at)} (reservation ${r.id})`}>
      reserved by {who} until {shortEnd(r.ends_at)}
    </span>
  );
}
