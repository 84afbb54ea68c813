import { client, unwrap, type Schemas } from '../api/client.ts';
import { canOperate, isAdmin, session } from '../lib/session.ts';
import { ConfirmButton } from './table-parts.tsx';

type Reservation = Schemas['Reservation'];

/** The signed-in user's name (null: auth off, where everyone is the same anonymous user). */
export function myName(): string | null {
  const s = session.value;
  return s.kind === 'signed-in' ? s.user.username : null;
}

/** Renew and release for the holder (an admin may release anyone's: that breaks it, audited). */
export function ReservationActions({ r, onDone, onError }: { r: Pick<Reservation, 'id' | 'user' | 'status'>; onDone: () => void; onError: (err: unknown) => void }) {
  const mine = r.user === myName();
  if (!canOperate.value || (!mine && !isAdmin.value)) return null;
  const name = `reservation ${r.id}`;
  return (
    <span class="row wrap">
      {mine && r.status === 'active' && (
        <button
          type="button"
          onClick={async () => {
            try {
              await unwrap(client.POST('/api/reservations/{id}/renew/', { params: { path: { id: r.id } }, body: { duration_s: 3600 } }));
              onDone();
            } catch (err) {
              onError(err);
            }
          }}
        >
          Renew 1 h <span class="visually-hidden">{name}</span>
        </button>
      )}
      <ConfirmButton
        label={r.status === 'waiting' ? 'Withdraw' : mine ? 'Release' : 'Break'}
        name={name}
        question={mine ? '' : `End ${r.user ?? 'anonymous'}'s reservation? This is recorded in the audit log.`}
        run={() => unwrap(client.DELETE('/api/reservations/{id}/', { params: { path: { id: r.id } } }))}
        onDone={onDone}
        onError={onError}
      />
    </span>
  );
}

