import { parseLabelPair } from '@mm/api-client';
import { useState } from 'preact/hooks';
import { client, unwrap, type Board } from '../api/client.ts';
import { plural } from '../lib/format.ts';
import type { BoardSelection } from './board-selection.tsx';
import { Confirm } from './confirm.tsx';
import { ErrorBox } from './error-box.tsx';

const KEY_RE = /^[a-z0-9]([a-z0-9._/-]{0,61}[a-z0-9])?$/;

/** A key people may set or remove (the contract's rules; `mm/` keys are the agent's). */
function keyProblem(key: string): string {
  if (key.startsWith('mm/')) return 'mm/ labels are the agent’s own and cannot be changed.';
  if (!KEY_RE.test(key)) return 'A key is 1–63 of a-z 0-9 . _ / -, starting and ending with a letter or digit.';
  return '';
}

/**
 * The boards list's bulk action bar (admins): how many boards are ticked, tick all shown or
 * none, and add a label to every ticked board or remove a key from them, in one request
 * (`POST /api/boards/labels/`, one transaction). Removing asks first.
 */
export function BulkLabelBar({ shown, all, selection, onDone }: { shown: readonly Board[]; all: readonly Board[]; selection: BoardSelection; onDone: () => void }) {
  const [add, setAdd] = useState('');
  const [remove, setRemove] = useState('');
  const [problem, setProblem] = useState('');
  const [done, setDone] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Ticked boards that still exist (one deleted meanwhile drops out).
  const known = new Set(all.map((b) => b.id));
  const ids = [...selection.ids].filter((id) => known.has(id));
  const hidden = ids.filter((id) => !shown.some((b) => b.id === id)).length;
  const allShown = shown.length > 0 && shown.every((b) => selection.ids.has(b.id));
  const n = ids.length;
  /** How many ticked boards hold `key` (what a removal changes). */
  const holding = (key: string) => all.filter((b) => selection.ids.has(b.id) && b.labels?.[key] !== undefined).length;

  /** One request for every ticked board; true when it was done (an error is shown below). */
  async function send(body: { set?: Record<string, string>; remove?: string[] }, said: (changed: number) => string): Promise<boolean> {
    setBusy(true);
    setError(null);
    setDone('');
    try {
      const r = await unwrap(client.POST('/api/boards/labels/', { body: { board_ids: ids, ...body } }));
      setDone(said(r.changed));
      onDone();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="card stack bulk-bar" role="region" aria-label="Label the selected boards" data-testid="bulk-label-bar">
      <div class="row wrap">
        <strong data-testid="bulk-count">{n === 0 ? 'No board selected' : `${plural(n, 'board')} selected`}</strong>
        {hidden > 0 && <span class="muted small">({hidden} not shown by the filters)</span>}
        <label class="inline-check">
          <input type="checkbox" checked={allShown} onChange={(e) => selection.setAll(shown.map((b) => b.id), (e.target as HTMLInputElement).checked)} />
          Select all shown ({shown.length})
        </label>
        {n > 0 && (
          <button type="button" class="link" onClick={selection.clear}>
            Clear the selection
          </button>
        )}
      </div>
      {n > 0 && (
        <div class="row wrap align-end">
          <form
            class="row wrap align-end"
            aria-label="Add a label to the selected boards"
            onSubmit={async (e) => {
              e.preventDefault();
              const pair = parseLabelPair(add);
              if (!pair || !pair[0]) return setProblem('Write the label to add as key=value, e.g. site=lab-2.');
              const p = keyProblem(pair[0]);
              if (p) return setProblem(p);
              setProblem('');
              if (await send({ set: { [pair[0]]: pair[1] } }, (c) => `Set ${pair[0]}=${pair[1]} on ${plural(c, 'board')}.`)) setAdd('');
            }}
          >
            <label>
              Label to add
              <input value={add} size={16} placeholder="site=lab-2" onInput={(e) => setAdd((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit" class="primary" disabled={busy}>
              Add to {plural(n, 'board')}
            </button>
          </form>
          <form
            class="row wrap align-end"
            aria-label="Remove a label from the selected boards"
            onSubmit={(e) => {
              e.preventDefault();
              const key = remove.includes('=') ? remove.slice(0, remove.indexOf('=')).trim() : remove.trim();
              const p = keyProblem(key);
              if (p) return setProblem(p);
              setProblem('');
              setDone('');
              setAsking(key);
            }}
          >
            <label>
              Label key to remove
              <input value={remove} size={12} placeholder="site" onInput={(e) => setRemove((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit" disabled={busy}>
              Remove from {plural(n, 'board')}
            </button>
          </form>
        </div>
      )}
      {asking !== null && (
        <Confirm
          question={`Remove the label ${asking} from ${plural(n, 'selected board')} (${holding(asking)} of them ${holding(asking) === 1 ? 'has' : 'have'} it)? Work sent by that label no longer goes to them.`}
          yes={`Yes, remove ${asking}`}
          onYes={async () => {
            const had = holding(asking);
            if (await send({ remove: [asking] }, (c) => `Removed ${asking} from ${plural(had, 'board')}${c > had ? ` (the other ${c - had} selected did not have it)` : ''}.`)) setRemove('');
          }}
          onClose={() => setAsking(null)}
        />
      )}
      {problem && (
        <p class="error-text small" role="alert">
          {problem}
        </p>
      )}
      {done && (
        <p class="ok small" role="status" data-testid="bulk-done">
          {done}
        </p>
      )}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
    </div>
  );
}
