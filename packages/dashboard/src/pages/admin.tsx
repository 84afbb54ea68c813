import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { ErrorBox, NotAllowed } from '../components/error-box.tsx';
import { formatTime } from '../lib/format.ts';
import { isAdmin, session, type Role, type User } from '../lib/session.ts';

interface Token {
  id: string | number;
  name: string;
  created_at?: string;
  expires_at?: string | null;
  last_used_at?: string | null;
}

interface AuditEvent {
  at: string;
  user: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  request_id: string | null;
}

/** Everyone: their own personal tokens (created with the secret shown once, revoked). */
export function TokensPage() {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);
  const load = () =>
    api<{ tokens: Token[] }>('/api/tokens/')
      .then((d) => setTokens(d.tokens))
      .catch(setError);
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="tokens-title" class="stack">
      <h1 id="tokens-title">My tokens</h1>
      <p class="muted">Personal tokens let scripts and the command-line client (`mm login --token`) act as you.</p>
      <form
        class="card row wrap"
        aria-label="New token"
        onSubmit={async (e) => {
          e.preventDefault();
          const formEl = e.currentTarget;
          const f = new FormData(formEl);
          const days = Number(f.get('days') || 0);
          try {
            const r = await api<{ token: string }>('/api/tokens/', {
              method: 'POST',
              json: { name: String(f.get('name')), ...(days ? { expires_at: new Date(Date.now() + days * 86400_000).toISOString() } : {}) },
            });
            setCreated(r.token);
            formEl.reset();
            void load();
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
        <div class="card stack" role="status">
          <strong>Copy the new token now: it is shown this once.</strong>
          <label>
            New token
            <input readOnly value={created} data-testid="new-token" onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </label>
          <div>
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {tokens && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>{formatTime(t.created_at)}</td>
                <td>{t.expires_at ? formatTime(t.expires_at) : 'never'}</td>
                <td>{t.last_used_at ? formatTime(t.last_used_at) : 'never'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={async () => {
                      if (!confirm(`Revoke the token “${t.name}”? Scripts using it stop working.`)) return;
                      try {
                        await api(`/api/tokens/${t.id}/`, { method: 'DELETE' });
                        void load();
                      } catch (err) {
                        setError(err);
                      }
                    }}
                  >
                    Revoke <span class="visually-hidden">{t.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const ROLES: Role[] = ['viewer', 'operator', 'admin'];

export function UsersPage() {
  const [users, setUsers] = useState<User[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    api<{ users: User[] }>('/api/users/')
      .then((d) => setUsers(d.users))
      .catch(setError);
  useEffect(() => {
    if (isAdmin.value) void load();
  }, []);
  if (!isAdmin.value) return <NotAllowed need="admin" />;
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
          try {
            await api('/api/users/', { method: 'POST', json: { username: String(f.get('username')), password: String(f.get('password')), role: String(f.get('role')) } });
            formEl.reset();
            void load();
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
          Password
          <input name="password" type="password" required autoComplete="new-password" minLength={8} />
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
      <ErrorBox error={error} onDismiss={() => setError(null)} />
      {users && (
        <table>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>{u.username}</td>
                <td>
                  <select
                    aria-label={`Role of ${u.username}`}
                    value={u.role}
                    disabled={me?.id === u.id}
                    onChange={async (e) => {
                      try {
                        await api(`/api/users/${u.id}/`, { method: 'PATCH', json: { role: (e.target as HTMLSelectElement).value } });
                      } catch (err) {
                        setError(err);
                      }
                      void load();
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
                    <button
                      type="button"
                      class="danger"
                      onClick={async () => {
                        if (!confirm(`Delete the user “${u.username}”? Their sessions and tokens stop working.`)) return;
                        try {
                          await api(`/api/users/${u.id}/`, { method: 'DELETE' });
                          void load();
                        } catch (err) {
                          setError(err);
                        }
                      }}
                    >
                      Delete <span class="visually-hidden">{u.username}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function AuditPage() {
  const [data, setData] = useState<{ events: AuditEvent[]; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [filters, setFilters] = useState({ user: '', action: '', since: '' });
  useEffect(() => {
    if (!isAdmin.value) return;
    const q = new URLSearchParams({ limit: '200' });
    if (filters.user) q.set('user', filters.user);
    if (filters.action) q.set('action', filters.action);
    if (filters.since) q.set('since', new Date(filters.since).toISOString());
    api<{ events: AuditEvent[]; total: number }>(`/api/audit/?${q}`)
      .then((d) => (setData(d), setError(null)))
      .catch(setError);
  }, [filters]);
  if (!isAdmin.value) return <NotAllowed need="admin" />;
  return (
    <section aria-labelledby="audit-title" class="stack">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="row wrap filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setFilters({ user: String(f.get('user') ?? ''), action: String(f.get('action') ?? ''), since: String(f.get('since') ?? '') });
        }}
      >
        <label>
          User
          <input name="user" />
        </label>
        <label>
          Action
          <input name="action" />
        </label>
        <label>
          Since
          <input name="since" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={error} />
      {data && (
        <>
          <p class="muted">{data.total} events</p>
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">User</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">IP</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {data.events.map((ev, i) => (
                <tr key={i}>
                  <td>{formatTime(ev.at)}</td>
                  <td>{ev.user ?? '—'}</td>
                  <td>{ev.action}</td>
                  <td>{ev.target ?? '—'}</td>
                  <td>{ev.ip ?? '—'}</td>
                  <td>
                    <code class="small">{ev.request_id ?? ''}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
