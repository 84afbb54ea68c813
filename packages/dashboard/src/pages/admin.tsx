import { useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';
import { ConfirmButton, Confirm } from '../components/confirm.tsx';
import { ShownOnce } from '../components/copy-field.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Pager } from '../components/pager.tsx';
import { formatTime } from '../lib/format.ts';
import { isAdmin, session, type Role } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';
import { DataTable } from '../components/table-box.tsx';

type User = Schemas['User'];

/** Everyone: their own personal tokens (created with the secret shown once, revoked); an admin may list everyone's. */
export function TokensPage() {
  const [everyone, setEveryone] = useState(false);
  const tokens = useResource(
    () => unwrap(client.GET('/api/tokens/', { params: { query: { limit: 1000, ...(everyone ? { all: '1' as const } : {}) } } })),
    [everyone],
  );
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);
  return (
    <section aria-labelledby="tokens-title" class="stack">
      <h1 id="tokens-title">My tokens</h1>
      <p class="muted">
        Personal tokens let scripts and the command-line client (<code>mm login --token</code>) act as you.
      </p>
      <form
        class="card row wrap"
        aria-label="New token"
        onSubmit={async (e) => {
          e.preventDefault();
          const formEl = e.currentTarget;
          const f = new FormData(formEl);
          const days = Number(f.get('days') || 0);
          try {
            const r = await unwrap(
              client.POST('/api/tokens/', {
                body: { name: String(f.get('name')), ...(days ? { expires_at: new Date(Date.now() + days * 86400_000).toISOString() } : {}) },
              }),
            );
            setCreated(r.token);
            formEl.reset();
            tokens.reload();
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          Expires after (days, empty: never)
          <input name="days" type="number" min={1} size={5} />
        </label>
        <button type="submit" class="primary">
          Create token
        </button>
      </form>
      {created && (
        <ShownOnce title="Copy the new token now: it is shown this once." label="New token" value={created} testId="new-token" onDone={() => setCreated(null)} />
      )}
      <ErrorBox error={error ?? tokens.error} onDismiss={() => setError(null)} />
      {isAdmin.value && (
        <label class="inline-check">
          <input type="checkbox" checked={everyone} onChange={(e) => setEveryone((e.target as HTMLInputElement).checked)} />
          Show everyone's tokens (an admin may revoke any)
        </label>
      )}
      {tokens.data && tokens.data.tokens.length === 0 && <p>You have no tokens yet: create one above for a script or for <code>mm</code>.</p>}
      {tokens.data && tokens.data.tokens.length > 0 && (
        <DataTable label="Tokens" columns={['Name', everyone && 'Owner', 'Created', 'Expires', 'Last used', '']}>
          {tokens.data.tokens.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              {everyone && <td>{t.username}</td>}
              <td>{formatTime(t.created_at)}</td>
              <td>{t.expires_at ? formatTime(t.expires_at) : 'never'}</td>
              <td>{t.last_used_at ? formatTime(t.last_used_at) : 'never'}</td>
              <td>
                <ConfirmButton
                  label={
                    <>
                      Revoke <span class="visually-hidden">{t.name}</span>
                    </>
                  }
                  question={`Revoke the token “${t.name}”? Scripts using it stop working.`}
                  yes="Yes, revoke"
                  action={async () => {
                    await unwrap(client.DELETE('/api/tokens/{id}/', { params: { path: { id: t.id } } }));
                    tokens.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

const ROLES: Role[] = ['viewer', 'operator', 'admin'];
/** "a viewer", "an operator", "an admin". */
const withArticle = (role: Role) => `${role === 'viewer' ? 'a' : 'an'} ${role}`;

export function UsersPage() {
  const users = useResource(() => unwrap(client.GET('/api/users/', { params: { query: { limit: 1000 } } })), []);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ username: string; password: string } | null>(null);
  const [roleChange, setRoleChange] = useState<{ user: User; role: Role } | null>(null);
  const [notice, setNotice] = useState('');
  const me = session.value.kind === 'signed-in' ? session.value.user : null;
  return (
    <section aria-labelledby="users-title" class="stack">
      <h1 id="users-title">Users</h1>
      <form
        class="card row wrap"
        aria-label="New user"
        onSubmit={async (e) => {
          e.preventDefault();
          const formEl = e.currentTarget;
          const f = new FormData(formEl);
          const password = String(f.get('password') ?? '');
          const username = String(f.get('username'));
          setError(null);
          setCreated(null);
          try {
            // No password: the server generates one and answers it this once.
            const u = await unwrap(
              client.POST('/api/users/', { body: { username, role: String(f.get('role')) as Role, ...(password ? { password } : {}) } }),
            );
            if (u.password) setCreated({ username: u.username, password: u.password });
            setNotice(`Added ${u.username} (${u.role}).`);
            formEl.reset();
            users.reload();
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label>
          Username
          <input name="username" required autoComplete="off" />
        </label>
        <label>
          Password (empty: generate one)
          <input name="password" type="password" autoComplete="new-password" minLength={8} />
        </label>
        <label>
          Role
          <select name="role" defaultValue="viewer">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit" class="primary">
          Add user
        </button>
      </form>
      {created && (
        <ShownOnce
          title={`Give ${created.username} this password now: it is shown this once.`}
          label={`Password of ${created.username}`}
          value={created.password}
          testId="new-password"
          onDone={() => setCreated(null)}
        />
      )}
      <ErrorBox error={error ?? users.error} onDismiss={() => setError(null)} />
      {roleChange && (
        <Confirm
          question={`Make ${roleChange.user.username} ${withArticle(roleChange.role)}? ${
            roleChange.role === 'viewer' ? 'They will no longer be able to change anything.' : `They will be able to do what ${roleChange.role}s do.`
          }`}
          yes="Yes, change the role"
          onYes={async () => {
            const u = await unwrap(client.PATCH('/api/users/{id}/', { params: { path: { id: roleChange.user.id } }, body: { role: roleChange.role } }));
            setNotice(`${u.username} is now ${withArticle(u.role)}.`);
            users.reload();
          }}
          onClose={() => setRoleChange(null)}
        />
      )}
      <p class="ok" role="status" data-testid="users-notice">
        {notice}
      </p>
      {users.data && (
        <DataTable label="Users" columns={['Username', 'Role', 'Created', '']}>
          {users.data.users.map((u) => (
            <tr key={u.id}>
              <td>{u.username}</td>
              <td>
                <select
                  aria-label={`Role of ${u.username}`}
                  // While asked, the select shows the role asked for; declining puts it back.
                  value={roleChange?.user.id === u.id ? roleChange.role : u.role}
                  disabled={me?.id === u.id}
                  onChange={(e) => {
                    const next = (e.target as HTMLSelectElement).value as Role;
                    setNotice('');
                    setRoleChange(next === u.role ? null : { user: u, role: next });
                  }}
                >
                  {ROLES.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              </td>
              <td>{formatTime(u.created_at)}</td>
              <td>
                {me?.id !== u.id && (
                  <div class="row wrap">
                    <ResetPassword user={u} onReset={(password) => setCreated({ username: u.username, password })} />
                    <ConfirmButton
                      label={
                        <>
                          Delete <span class="visually-hidden">{u.username}</span>
                        </>
                      }
                      question={`Delete the user “${u.username}”? Their sessions and tokens stop working.`}
                      yes="Yes, delete"
                      action={async () => {
                        await unwrap(client.DELETE('/api/users/{id}/', { params: { path: { id: u.id } } }));
                        setNotice(`Deleted ${u.username}.`);
                        users.reload();
                      }}
                    />
                  </div>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** A password made here for a reset: 18 random bytes, base64url (24 characters). */
function generatedPassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_');
}

/** An admin resets another user's password (their sessions end), optionally revoking their tokens too. */
function ResetPassword({ user, onReset }: { user: User; onReset: (password: string) => void }) {
  const [revoke, setRevoke] = useState(false);
  return (
    <ConfirmButton
      label={
        <>
          Reset password <span class="visually-hidden">of {user.username}</span>
        </>
      }
      question={
        <>
          Give {user.username} a new password? Their sessions end; the new password is shown here once.{' '}
          <label class="inline-check">
            <input type="checkbox" checked={revoke} onChange={(e) => setRevoke((e.target as HTMLInputElement).checked)} />
            Also revoke their personal tokens
          </label>
        </>
      }
      yes="Yes, reset it"
      action={async () => {
        const password = generatedPassword();
        await unwrap(client.PATCH('/api/users/{id}/', { params: { path: { id: user.id } }, body: { password, ...(revoke ? { revoke_tokens: true } : {}) } }));
        onReset(password);
      }}
    />
  );
}

const AUDIT_PAGE = 50;

export function AuditPage() {
  const [filters, setFilters] = useState({ user: '', action: '', since: '' });
  const [page, setPage] = useState(0);
  const actions = useResource(() => unwrap(client.GET('/api/audit/actions/')), []);
  const audit = useResource(
    () =>
      unwrap(
        client.GET('/api/audit/', {
          params: {
            query: {
              limit: AUDIT_PAGE,
              offset: page * AUDIT_PAGE,
              ...(filters.user ? { user: filters.user } : {}),
              ...(filters.action ? { action: filters.action } : {}),
              ...(filters.since ? { since: new Date(filters.since).toISOString() } : {}),
            },
          },
        }),
      ),
    [filters, page],
  );
  const data = audit.data;
  return (
    <section aria-labelledby="audit-title" class="stack">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="row wrap filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setPage(0);
          setFilters({ user: String(f.get('user') ?? ''), action: String(f.get('action') ?? ''), since: String(f.get('since') ?? '') });
        }}
      >
        <label>
          User
          <input name="user" />
        </label>
        <label>
          Action
          <select name="action">
            <option value="">any</option>
            {actions.data?.actions.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input name="since" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={audit.error} />
      {data && (
        <>
          <p class="muted">
            {data.total} event{data.total === 1 ? '' : 's'}
          </p>
          <DataTable label="Audit events" columns={['When', 'User', 'Action', 'Target', 'IP', 'Request']}>
            {data.events.map((ev) => (
              <tr key={ev.id}>
                <td>
                  {formatTime(ev.at)}
                  {ev.count > 1 && <div class="muted small">to {formatTime(ev.last_at)}</div>}
                </td>
                <td>{ev.user_name ?? ev.user ?? '—'}</td>
                <td>
                  {ev.action}
                  {ev.count > 1 && <span class="muted"> ×{ev.count}</span>}
                </td>
                <td>
                  {ev.target_name ?? ev.target ?? '—'}
                  {ev.target_name && ev.target && <div class="muted small">{ev.target}</div>}
                  {typeof ev.detail?.filename === 'string' && <div class="muted small">{ev.detail.filename}</div>}
                </td>
                <td>{ev.ip ?? '—'}</td>
                <td>
                  <code class="small">{ev.request_id ?? ''}</code>
                </td>
              </tr>
            ))}
          </DataTable>
          <Pager page={page} total={data.total} pageSize={AUDIT_PAGE} onPage={setPage} />
        </>
      )}
    </section>
  );
}
