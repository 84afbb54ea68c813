import { useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ago } from '../lib/format.ts';
import { isAdmin } from '../lib/session.ts';

export function BoardsPage() {
  const { boards, error, reload } = useBoards(3000);
  return (
    <section aria-labelledby="boards-title" class="stack">
      <div class="page-head">
        <h1 id="boards-title">Boards</h1>
        {isAdmin.value && <RegisterBoard onDone={reload} />}
      </div>
      <ErrorBox error={error} />
      {boards && boards.length === 0 && <p>No board is registered yet.</p>}
      {boards && boards.length > 0 && (
        <table aria-describedby="boards-live">
          <caption id="boards-live" class="muted small">
            Status refreshes every few seconds.
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Last seen</th>
              <th scope="col">Agent</th>
              <th scope="col">Architecture</th>
              <th scope="col">Active PAC</th>
            </tr>
          </thead>
          <tbody>
            {boards.map((b) => (
              <tr key={b.id} data-testid={`board-${b.name}`}>
                <td>
                  <Link href={`/boards/${b.id}`}>{b.name}</Link>
                  {b.hostname && <div class="muted small">{b.hostname}</div>}
                </td>
                <td>
                  <StatusBadge status={b.status} />
                  {b.busy && <span class="muted small"> busy</span>}
                </td>
                <td>{b.status === 'online' ? 'now' : ago(b.last_seen_at)}</td>
                <td>{b.agent_version ?? '—'}</td>
                <td>{b.platform ?? '—'}</td>
                <td>{b.active_pac ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RegisterBoard({ onDone }: { onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<(Board & { token: string; install_command: string }) | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (created) {
    // The server's one line: fetches install-agent.sh from it, installs the package for the board's architecture.
    const command = created.install_command;
    return (
      <div class="card stack" role="region" aria-labelledby="reg-done">
        <h2 id="reg-done">Board “{created.name}” registered</h2>
        <p>
          <strong>Copy the token now: it is shown this once.</strong>
        </p>
        <label>
          Token
          <input readOnly value={created.token} data-testid="board-token" onFocus={(e) => (e.target as HTMLInputElement).select()} />
        </label>
        <label>
          <span>
            Install command (run it on the board; set <code>MM_RUNNER</code> in <code>/etc/mm-agent/mm-agent.env</code> afterwards, or add <code>--runner</code>)
          </span>
          <textarea readOnly rows={3} value={command} data-testid="install-command" onFocus={(e) => (e.target as HTMLTextAreaElement).select()} />
        </label>
        <div class="row">
          <button type="button" onClick={() => void navigator.clipboard?.writeText(command)}>
            Copy the command
          </button>
          <button
            type="button"
            onClick={() => {
              setCreated(null);
              setOpen(false);
            }}
          >
            Done
          </button>
        </div>
      </div>
    );
  }
  if (!open)
    return (
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        Register a board
      </button>
    );
  return (
    <form
      class="card stack"
      aria-label="Register a board"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        try {
          setCreated(await unwrap(client.POST('/api/boards/', { body: { name: String(f.get('name')) } })));
          onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <label>
        Board name
        <input name="name" required autoFocus />
      </label>
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit" class="primary">
          Register
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
