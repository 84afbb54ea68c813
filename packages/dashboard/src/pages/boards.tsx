import { useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { CopyField } from '../components/copy-field.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { BoardStatus, neverConnected } from '../components/board-status.tsx';
import { ago } from '../lib/format.ts';
import { isAdmin } from '../lib/session.ts';
import { DataTable } from '../components/table-box.tsx';

export function BoardsPage() {
  const { boards, error, reload } = useBoards(3000);
  return (
    <section aria-labelledby="boards-title" class="stack">
      <div class="page-head">
        <h1 id="boards-title">Boards</h1>
        {isAdmin.value && <RegisterBoard onDone={reload} />}
      </div>
      <ErrorBox error={error} />
      {boards && boards.length === 0 && (
        <p>No board is registered yet.{isAdmin.value ? ' Register one with “Register a board” above, then start its agent with the command shown.' : ' Ask an administrator to register one.'}</p>
      )}
      {boards && boards.length > 0 && (
        <DataTable label="Boards" caption="Status refreshes every few seconds." columns={['Name', 'Status', 'Last seen', 'Agent', 'Architecture', 'Active PAC']}>
          {boards.map((b) => (
            <tr key={b.id} data-testid={`board-${b.name}`}>
              <td>
                <Link href={`/boards/${b.id}`}>{b.name}</Link>
                {b.hostname && <div class="muted small">{b.hostname}</div>}
              </td>
              <td>
                <BoardStatus board={b} />
              </td>
              <td>{b.status === 'online' ? 'now' : neverConnected(b) ? 'never' : ago(b.last_seen_at)}</td>
              <td>{b.agent_version ?? '—'}</td>
              <td>{b.platform ?? '—'}</td>
              <td>{b.active_pac ?? '—'}</td>
            </tr>
          ))}
        </DataTable>
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
        <CopyField label="Token" value={created.token} testId="board-token" />
        <CopyField
          label="Install command (run it on the board; set MM_RUNNER in /etc/mm-agent/mm-agent.env afterwards, or add --runner)"
          value={command}
          testId="install-command"
          rows={3}
        />
        <div class="row">
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
