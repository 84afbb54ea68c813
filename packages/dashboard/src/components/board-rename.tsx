import { useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';
import { ErrorBox } from './error-box.tsx';

/**
 * Renames a board (admins): boards enrolled from one image are named `<hostname>-<machine id>`
 * until someone gives them a name people use. Names are unique: a taken one is said next to
 * the field (409 `board_name_taken`), and the field keeps what was typed.
 */
export function BoardRename({ board, onRenamed }: { board: Board; onRenamed: (b: Board) => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(board.name);
  const [taken, setTaken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  if (!open)
    return (
      <button
        type="button"
        class="push-right"
        onClick={() => {
          setName(board.name);
          setTaken('');
          setError(null);
          setOpen(true);
        }}
      >
        Rename
      </button>
    );
  return (
    <form
      class="card stack"
      aria-label="Rename the board"
      onSubmit={async (e) => {
        e.preventDefault();
        const wanted = name.trim();
        setTaken('');
        setError(null);
        if (wanted === board.name) return setOpen(false);
        setBusy(true);
        try {
          onRenamed(await unwrap(client.PATCH('/api/boards/{id}/', { params: { path: { id: board.id } }, body: { name: wanted } })));
          setOpen(false);
        } catch (err) {
          if (err instanceof ApiProblem && err.code === 'board_name_taken') setTaken(wanted);
          else setError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      <div class="row wrap align-end">
        <label class="grow">
          New name for {board.name}
          <input
            name="board-name"
            required
            maxLength={200}
            autoFocus
            value={name}
            aria-invalid={!!taken}
            aria-describedby="rename-problem"
            onInput={(e) => {
              setName((e.target as HTMLInputElement).value);
              setTaken('');
            }}
          />
        </label>
        <button type="submit" class="primary" disabled={busy || !name.trim()}>
          Save name
        </button>
        <button type="button" onClick={() => setOpen(false)} disabled={busy}>
          Cancel
        </button>
      </div>
      <p id="rename-problem" class="error-text small" role="alert" data-testid="rename-problem">
        {taken && `Another board is already named “${taken}”. Board names are unique: choose another.`}
      </p>
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </form>
  );
}
