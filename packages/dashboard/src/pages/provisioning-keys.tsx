import { formatLabels, parseLabelPair, type Labels } from '@mm/api-client';
import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { ConfirmButton, submitting, TableHead } from '../components/table-parts.tsx';
import { formatTime } from '../lib/format.ts';
import { ago } from '../lib/format.ts';

type ProvisioningKey = Schemas['ProvisioningKey'];
type NewKey = Schemas['NewProvisioningKey'];

/** `site=lab-2, rack=a` → `{ site: 'lab-2', rack: 'a' }` (the server checks the rest). */
function parseLabels(text: string): Labels {
  const labels: Labels = {};
  for (const part of text.split(/[,\n]/)) {
    const item = part.trim();
    if (!item) continue;
    const pair = parseLabelPair(item);
    if (!pair) throw new Error(`“${item}” is not key=value`);
    labels[pair[0]] = pair[1];
  }
  return labels;
}

/** Admins: provisioning keys boards enroll with, and the pending boards to approve (docs/enrollment.md). */
export function ProvisioningKeysPage() {
  const [keys, setKeys] = useState<ProvisioningKey[] | null>(null);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    unwrap(client.GET('/api/provisioning-keys/'))
      .then((d) => setKeys(d.provisioning_keys))
      .catch(setError);
  useEffect(() => void load(), []);

  return (
    <section aria-labelledby="keys-title" class="stack">
      <h1 id="keys-title">Provisioning keys</h1>
      <p class="muted">
        A board given a key enrolls by itself: it gets a token of its own and the key's labels. With manual approval it waits below until you approve it.
      </p>
      <PendingBoards onError={setError} />
      <form
        class="card row wrap"
        aria-label="New provisioning key"
        onSubmit={submitting(async (f) => {
          const days = Number(f.get('days') || 0);
          const max = Number(f.get('max') || 0);
          const key = await unwrap(
            client.POST('/api/provisioning-keys/', {
              body: {
                name: String(f.get('name')),
                labels: parseLabels(String(f.get('labels') ?? '')),
                approval: f.get('manual') ? 'manual' : 'auto',
                ...(max ? { max_boards: max } : {}),
                ...(days ? { expires_at: new Date(Date.now() + days * 86400_000).toISOString() } : {}),
              },
            }),
          );
          setCreated(key);
          void load();
        }, setError)}
      >
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          Labels (key=value, comma-separated)
          <input name="labels" placeholder="site=lab-2, rack=a" />
        </label>
        <label>
          Boards at most (empty: any number)
          <input name="max" type="number" min={1} size={5} />
        </label>
        <label>
          Expires after (days, empty: never)
          <input name="days" type="number" min={1} size={5} />
        </label>
        <label class="row">
          <input name="manual" type="checkbox" /> Approve each board by hand
        </label>
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      {created && <CreatedKey created={created} onDone={() => setCreated(null)} />}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {keys && keys.length === 0 && <p>No provisioning key yet.</p>}
      {keys && keys.length > 0 && (
        // A phone scrolls the table inside its box, not the page.
        <div class="table-scroll" role="region" aria-label="Provisioning keys" tabIndex={0}>
          <table>
            <TableHead columns={['Name', 'Approval', 'Labels', 'Boards', 'Expires']} actions />
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-testid={`key-${k.name}`}>
                  <td>{k.name}</td>
                  <td>{k.approval}</td>
                  <td>{formatLabels(k.labels) || '—'}</td>
                  <td>
                    {k.boards_enrolled}
                    {k.max_boards !== null && ` of ${k.max_boards}`}
                  </td>
                  <td>{k.expires_at ? formatTime(k.expires_at) : 'never'}</td>
                  <td>
                    <ConfirmButton
                      label="Delete"
                      name={k.name}
                      question={`Delete the key “${k.name}”? Boards enrolled with it stay; no new board can use it.`}
                      run={() => unwrap(client.DELETE('/api/provisioning-keys/{id}/', { params: { path: { id: k.id } } }))}
                      onDone={() => void load()}
                      onError={setError}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function CreatedKey({ created, onDone }: { created: NewKey; onDone: () => void }) {
  const install = created.install_command;
  return (
    <div class="card stack" role="status">
      <strong>Copy the key now: it is shown this once.</strong>
      <label>
        Key
        <input readOnly value={created.key} data-testid="new-key" onFocus={(e) => (e.target as HTMLInputElement).select()} />
      </label>
      {install && (
        <label>
          Install command (run it on each board)
          <textarea readOnly rows={3} value={install} data-testid="key-install-command" onFocus={(e) => (e.target as HTMLTextAreaElement).select()} />
        </label>
      )}
      {created.install_warning && (
        <p class="warning" data-testid="key-install-warning">
          {created.install_warning}
        </p>
      )}
      <div class="row">
        {install && (
          <button type="button" onClick={() => void navigator.clipboard?.writeText(install)}>
            Copy the command
          </button>
        )}
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function PendingBoards({ onError }: { onError: (err: unknown) => void }) {
  const { boards, reload } = useBoards(3000);
  // New boards of a manual key, and boards someone asked to enroll again without proving it
  // is them (docs/enrollment.md): both wait for an admin.
  const pending = (boards ?? []).filter((b) => b.status === 'pending' || (b.reenroll_request && !b.reenroll_request.approved));
  if (pending.length === 0) return <p class="muted" data-testid="no-pending">No board is waiting for approval.</p>;
  return (
    <div class="card stack" role="region" aria-labelledby="pending-title">
      <h2 id="pending-title">Waiting for approval</h2>
      <div class="table-scroll" role="region" aria-label="Boards waiting for approval" tabIndex={0}>
        <table>
          <TableHead columns={['Board', 'Machine', 'Labels', 'Asked']} />
          <tbody>
            {pending.map((b) => {
              const again = b.status !== 'pending' ? b.reenroll_request : null;
              return (
                <tr key={b.id} data-testid={`pending-${b.name}`}>
                  <td>
                    <Link href={`/boards/${b.id}`}>{b.name}</Link>
                  </td>
                  <td class="small" data-testid={`pending-machine-${b.name}`}>
                    {/* Which machine asks, from where and when: enrolled boards of one image share a host name. */}
                    <div>
                      host <strong>{b.hostname ?? '—'}</strong>
                    </div>
                    <div>
                      machine id <code title={b.machine_id ?? ''}>{b.machine_id ? b.machine_id.slice(0, 12) : '—'}</code>
                    </div>
                    {b.facts && typeof b.facts.serial === 'string' && <div>serial {b.facts.serial}</div>}
                    <div class="muted" title={b.enrolled_at ? `enrolled ${formatTime(b.enrolled_at)}` : undefined}>
                      {b.enrolled_from ? `from ${b.enrolled_from}` : ''}
                      {b.enrolled_at ? ` ${ago(b.enrolled_at)}` : ''}
                    </div>
                  </td>
                  <td>{formatLabels(b.labels) || '—'}</td>
                  <td data-testid={again ? `reenroll-${b.name}` : undefined}>
                    {again ? (
                      <span class="small">
                        Enroll again as <strong>{again.hostname}</strong>
                        {again.address ? ` from ${again.address}` : ''}: it would get a new token and the board ({b.status}) would lose its own.
                      </span>
                    ) : (
                      <span class="small muted">new board</span>
                    )}
                    {/* In this cell, not a column of its own: on a phone the button stays in view. */}
                    <div class="approve-cell">
                      <ConfirmButton
                        label="Approve"
                        kind="primary"
                        name={b.name}
                        question={again ? 'The next enrolment with its key and machine id gets a new token; the board\'s current token stops working.' : ''}
                        run={() => unwrap(client.POST('/api/boards/{id}/approve/', { params: { path: { id: b.id } } }))}
                        onDone={reload}
                        onError={onError}
                      />
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
