import { useRef, useState } from 'preact/hooks';
import { ApiProblem } from '../api/problem.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { signInWithPassword, signInWithToken } from '../lib/session.ts';

export function SignInPage() {
  const [useToken, setUseToken] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const password = useRef<HTMLInputElement>(null);
  const token = useRef<HTMLInputElement>(null);

  async function submit(e: Event) {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      if (useToken) await signInWithToken(String(form.get('token') ?? '').trim());
      else await signInWithPassword(String(form.get('username') ?? ''), String(form.get('password') ?? ''));
    } catch (err) {
      setError(err);
      // A refused password (or token) is cleared, ready to be typed again; the username stays.
      const secret = password.current ?? token.current;
      if (secret && err instanceof ApiProblem && (err.status === 401 || err.status === 400)) {
        secret.value = '';
        secret.focus();
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>Model Manager</h1>
      <form onSubmit={submit} class="card stack" aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        {useToken ? (
          <label>
            API token
            <input ref={token} name="token" type="password" autoComplete="off" required autoFocus />
          </label>
        ) : (
          <>
            <label>
              Username
              <input name="username" autoComplete="username" required autoFocus />
            </label>
            <label>
              Password
              <input ref={password} name="password" type="password" autoComplete="current-password" required />
            </label>
          </>
        )}
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <button type="button" class="link" onClick={() => setUseToken(!useToken)}>
          {useToken ? 'Sign in with a username and password instead' : 'Sign in with an API token instead'}
        </button>
      </form>
    </main>
  );
}
