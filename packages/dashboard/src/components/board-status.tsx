import type { Board } from '../api/client.ts';
import { StatusBadge } from './status-badge.tsx';

/** A board whose agent has never connected: not an alarm, a step still to do. */
export function neverConnected(b: Board): boolean {
  return b.status === 'offline' && !b.last_seen_at && !b.connected_at;
}

/** The board's status word; "not connected yet" (neutral) for a board that never was. */
export function BoardStatus({ board }: { board: Board }) {
  if (neverConnected(board)) return <span class="badge badge-new">not connected yet</span>;
  return (
    <>
      <StatusBadge status={board.status} />
      {board.busy && <span class="muted small"> busy</span>}
    </>
  );
}
