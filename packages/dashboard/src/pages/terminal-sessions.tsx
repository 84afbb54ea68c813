import { useEffect, useRef, useState } from 'preact/hooks';
import { authHeaders, client, unwrap, type Schemas } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { DataTable } from '../components/table-box.tsx';
import { formatBytes, formatDuration, formatTime } from '../lib/format.ts';
import { useResource } from '../lib/use-resource.ts';
import { exitText } from '../lib/terminal-exit.ts';
import './terminal-sessions.css';

type Session = Schemas['TerminalSession'];

function ending(s: Session): string {
  if (s.ended_at === null) return 'still open';
  if (s.end_reason === null) return '—';
  return s.end_reason === 'exited' ? `exit ${s.exit_code ?? '?'}` : s.end_reason.replace(/_/g, ' ');
}

const seconds = (s: Session) => (s.ended_at ? Math.max(0, (Date.parse(s.ended_at) - Date.parse(s.started_at)) / 1000) : null);

/**
 * Terminal sessions (admins, docs/terminal.md): who opened a terminal on which board, when,
 * how it ended, and its recording played back with asciinema-player (loaded on first play).
 */
export function TerminalSessionsPage() {
  const sessions = useResource(() => unwrap(client.GET('/api/terminal-sessions/', { params: { query: { limit: 200 } } })), [], { pollMs: 10_000 });
  const [playing, setPlaying] = useState<Session | null>(null);
  const list = sessions.data?.sessions ?? [];
  return (
    <section aria-labelledby="terminal-sessions-title" class="stack terminal-sessions">
      <h1 id="terminal-sessions-title">Terminal sessions</h1>
      <p class="muted">
        Every terminal opened on a board, newest first. A recording holds what the shell printed (keys are not recorded, what the shell echoed is) and is
        written when the session ends.
      </p>
      <ErrorBox error={sessions.error} />
      {playing && <Player key={playing.id} session={playing} onClose={() => setPlaying(null)} />}
      {sessions.data && list.length === 0 && <p class="muted">No terminal has been opened yet.</p>}
      {list.length > 0 && (
        <DataTable label="Terminal sessions" columns={['Who', 'Board', 'Started', 'Ended', 'How it ended', 'Size', 'Recording', '']}>
          {list.map((s) => {
            const d = seconds(s);
            return (
              <tr key={s.id} data-testid={`session-${s.id}`}>
                <td>{s.username ?? 'anonymous'}</td>
                <td>
                  <Link href={`/boards/${s.board_id}`}>{s.board_name}</Link>
                </td>
                <td class="when">{formatTime(s.started_at)}</td>
                <td class="when">
                  {formatTime(s.ended_at)}
                  {d !== null && <span class="muted small"> ({formatDuration(d)})</span>}
                </td>
                <td>{ending(s)}</td>
                <td>
                  {s.cols}×{s.rows}
                </td>
                <td>
                  {formatBytes(s.recording_bytes)}
                  {s.recording_truncated && <span class="muted small"> (cut at the limit)</span>}
                </td>
                <td>
                  {s.ended_at !== null && (
                    <button type="button" onClick={() => setPlaying(s)}>
                      Play <span class="visually-hidden">the session of {s.username ?? 'anonymous'} on {s.board_name} at {formatTime(s.started_at)}</span>
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}

/** One recording in asciinema-player: the .cast fetched with the page's credentials, then played. */
function Player({ session, onClose }: { session: Session; onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let dispose: (() => void) | null = null;
    let gone = false;
    void (async () => {
      try {
        const [player, res] = await Promise.all([
          import('asciinema-player'),
          fetch(`/api/terminal-sessions/${session.id}/recording/`, { credentials: 'same-origin', headers: authHeaders() }),
          import('asciinema-player/dist/bundle/asciinema-player.css'),
        ]);
        if (!res.ok) throw await ApiProblem.fromResponse(res);
        const cast = await res.text();
        if (gone) return;
        const p = player.create({ data: cast }, box.current!, { autoPlay: true, idleTimeLimit: 2, fit: false, terminalFontSize: '13px', theme: 'asciinema', preload: true });
        dispose = () => p.dispose();
        setReady(true);
      } catch (err) {
        if (!gone) setError(err instanceof ApiProblem ? err : ApiProblem.network(err));
      }
    })();
    return () => {
      gone = true;
      dispose?.();
    };
  }, [session.id]);
  const how = session.end_reason === 'exited' ? exitText({ type: 'exit', code: session.exit_code, reason: 'exited' }) : ending(session);
  return (
    <div class="card stack" data-testid="recording-player" aria-label="Recording">
      <div class="row wrap page-head">
        <h2 class="form-title">
          {session.username ?? 'anonymous'} on {session.board_name}, {formatTime(session.started_at)}
        </h2>
        <button type="button" onClick={onClose}>
          Close the recording
        </button>
      </div>
      <p class="muted small">{how}</p>
      <ErrorBox error={error} />
      {!ready && !error && <p aria-busy="true">Loading the recording…</p>}
      <div class="recording-box" ref={box} />
    </div>
  );
}
