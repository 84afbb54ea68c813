import { useRef, useState } from 'preact/hooks';
import { client, unwrap } from '../api/client.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { session } from '../lib/session.ts';

/** Anyone signed in: who they are, and changing their own password. */
export function AccountPage() {
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const [mismatch, setMismatch] = useState(false);
  const current = useRef<HTMLInputElement>(null);
  const s = session.value;
  const user = s.kind === 'signed-in' ? s.user : null;
  return (
    <section aria-labelledby="account-title" class="stack">
      <h1 id="account-title">My account</h1>
      {user && (
        <p>
          Signed in as <strong>{user.username ?? 'the shared API token'}</strong> with the {user.role} role. Scripts and the command-line
          client use <Link href="/tokens">personal tokens</Link>.
        </p>
      )}
      {user?.username ? (
        <form
          class="card stack narrow"
          aria-label="Change my password"
          onSubmit={async (e) => {
            e.preventDefault();
            const formEl = e.currentTarget;
            const f = new FormData(formEl);
            setError(null);
            setDone(false);
            setMismatch(f.get('new_password') !== f.get('again'));
            if (f.get('new_password') !== f.get('again')) return;
            setBusy(true);
            try {
              await unwrap(client.POST('/api/auth/password/', { body: { current_password: String(f.get('current_password')), new_password: String(f.get('new_password')) } }));
              formEl.reset();
              setDone(true);
            } catch (err) {
              setError(err);
              if (current.current) {
                current.current.value = '';
                current.current.focus();
              }
            } finally {
              setBusy(false);
            }
          }}
        >
          <h2>Change my password</h2>
          <label>
            Current password
            <input ref={current} name="current_password" type="password" autoComplete="current-password" required />
          </label>
          <label>
            New password (at least 8 characters)
            <input name="new_password" type="password" autoComplete="new-password" required minLength={8} />
          </label>
          <label>
            New password again
            <input name="again" type="password" autoComplete="new-password" required minLength={8} />
          </label>
          {mismatch && (
            <div class="error" role="alert">
              <p>
                <strong>The two new passwords differ.</strong>
              </p>
              <p>Type the same new password twice.</p>
            </div>
          )}
          <ErrorBox error={error} />
          {done && (
            <p class="ok" role="status">
              Your password is changed. Your other sessions have ended; this one stays signed in.
            </p>
          )}
          <div>
            <button type="submit" class="primary" disabled={busy}>
              Change password
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">The shared API token has no password to change.</p>
      )}
    </section>
  );
}
