import { client, unwrap } from '../api/client.ts';
import { terminalBlocked } from '../components/board-terminal-link.tsx';
import { ErrorBox, NotAllowed } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { TerminalView } from '../components/terminal-view.tsx';
import { formatTime } from '../lib/format.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';

/**
 * A terminal on one board (docs/terminal.md), loaded on first visit with xterm.js in its own
 * chunk. The page says who holds the board; the server decides whether the terminal opens
 * and the view says why not when it does not.
 */
export function TerminalPage({ id }: { id: string }) {
  const { data: board, error } = useResource(() => unwrap(client.GET('/api/boards/{id}/', { params: { path: { id } } })), [id]);
  if (!canOperate.value) return <NotAllowed need="operator" />;
  if (!board)
    return (
      <section aria-labelledby="terminal-title" class="stack">
        <h1 id="terminal-title">Terminal</h1>
        {error ? <ErrorBox error={error} /> : <p aria-busy="true">Loading…</p>}
      </section>
    );
  const blocked = terminalBlocked(board);
  return (
    <section aria-labelledby="terminal-title" class="stack">
      <p>
        <Link href={`/boards/${board.id}`}>← {board.name}</Link>
      </p>
      <h1 id="terminal-title">Terminal on {board.name}</h1>
      <p class="muted small">
        {board.reservation ? `Held by ${board.reservation.user ?? 'anonymous'} until ${formatTime(board.reservation.ends_at)}. ` : ''}
        The session is recorded (its output, not your keys) and audited.
        {blocked !== null && ` ${blocked}`}
      </p>
      <TerminalView boardId={board.id} />
    </section>
  );
}
