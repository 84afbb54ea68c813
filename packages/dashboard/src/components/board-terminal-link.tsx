import type { Board } from '../api/client.ts';
import { isAdmin, canOperate, session } from '../lib/session.ts';
import { Link } from './link.tsx';
import { myName } from './reservation-actions.tsx';

/**
 * Why the signed-in user may not open a terminal on this board, or null when they may (as
 * far as the page knows: the board's own refusal, MM_TERMINAL=off, comes when it is opened).
 * Admins may on any board; operators on a board whose reservation they hold (docs/terminal.md).
 */
export function terminalBlocked(board: Pick<Board, 'status' | 'reservation'>): string | null {
  if (!canOperate.value) return 'A terminal on the board needs the operator role and the board’s reservation.';
  const holder = board.reservation?.user ?? null;
  // Without accounts (auth off) everyone is the same admin.
  const holds = session.value.kind !== 'signed-in' || (holder !== null && holder === myName());
  if (!isAdmin.value && !holds) return board.reservation ? `A terminal needs the board’s reservation, which ${holder ?? 'someone else'} holds.` : 'Reserve the board to open a terminal on it.';
  if (board.status !== 'online') return 'The board is not online: a terminal opens once it is back.';
  return null;
}

/** The board page's way to its terminal: a button, or the reason there is none. */
export function BoardTerminalLink({ board }: { board: Pick<Board, 'id' | 'status' | 'reservation'> }) {
  const blocked = terminalBlocked(board);
  return (
    <p class="row wrap" data-testid="board-terminal">
      {blocked === null ? (
        <Link class="button" href={`/boards/${board.id}/terminal`}>
          Terminal
        </Link>
      ) : (
        <span class="muted">{blocked}</span>
      )}
    </p>
  );
}
