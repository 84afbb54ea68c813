import { computed, signal } from '@preact/signals';
import { bearerToken, client, onUnauthorized, setBearerToken, unwrap, type Schemas } from '../api/client.ts';
import { ApiProblem } from '../api/problem.ts';

export type Role = Schemas['User']['role'];
/** Who is signed in (`/api/auth/me/`'s user). */
export type User = Schemas['Me']['user'];

/**
 * Who is using the dashboard:
 * - `loading` until `/api/auth/me/` answers;
 * - `signed-in` with a user;
 * - `sign-in` when it answers 401 (auth is on and we have no valid session or token);
 * - `open` when the server has no accounts (auth off, or a server without the accounts
 *   routes: 404): everyone may do everything, as with curl.
 */
export type SessionState =
  | { kind: 'loading' }
  | { kind: 'signed-in'; user: User; viaToken: boolean }
  | { kind: 'sign-in' }
  | { kind: 'open' }
  | { kind: 'unreachable'; error: ApiProblem };

export const session = signal<SessionState>({ kind: 'loading' });

export const role = computed<Role>(() => {
  const s = session.value;
  if (s.kind === 'signed-in') return s.user.role;
  return s.kind === 'open' ? 'admin' : 'viewer';
});
export const canOperate = computed(() => role.value === 'operator' || role.value === 'admin');
export const isAdmin = computed(() => role.value === 'admin');
/** Accounts exist on this server (users, tokens, audit pages make sense). */
export const hasAccounts = computed(() => session.value.kind === 'signed-in');

export async function loadSession(viaToken = false): Promise<void> {
  try {
    const me = await unwrap(client.GET('/api/auth/me/'));
    session.value = me.auth === 'off' ? { kind: 'open' } : { kind: 'signed-in', user: me.user, viaToken };
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 401) session.value = { kind: 'sign-in' };
    else if (err instanceof ApiProblem && err.status === 404) session.value = { kind: 'open' };
    else session.value = { kind: 'unreachable', error: err instanceof ApiProblem ? err : ApiProblem.network(err) };
  }
}

export async function signInWithPassword(username: string, password: string): Promise<void> {
  setBearerToken(null);
  await unwrap(client.POST('/api/auth/login/', { body: { username, password } }));
  await loadSession();
}

/**
 * Signs in with a personal token or MM_API_TOKEN: the server exchanges it for a session
 * cookie tied to the token (it ends when the token is revoked), so plain links (videos,
 * ZIPs, logs) work like everything else and the page never keeps the token.
 */
export async function signInWithToken(token: string): Promise<void> {
  setBearerToken(null);
  try {
    await unwrap(client.POST('/api/auth/token-login/', { body: { token } }));
  } catch (err) {
    // A server without the route: use the token as a bearer for this tab (links that are
    // plain GETs will not work there).
    if (err instanceof ApiProblem && err.status === 404) return signInWithBearer(token);
    throw err;
  }
  await loadSession(true);
}

async function signInWithBearer(token: string): Promise<void> {
  setBearerToken(token);
  try {
    const me = await unwrap(client.GET('/api/auth/me/'));
    session.value = { kind: 'signed-in', user: me.user, viaToken: true };
  } catch (err) {
    setBearerToken(null);
    throw err instanceof ApiProblem && err.status === 401 ? new ApiProblem(401, 'invalid_credentials', 'Unauthorized', '') : err;
  }
}

export async function signOut(): Promise<void> {
  // A token sign-in has a session too (unless the server is older): it ends here.
  if (session.value.kind === 'signed-in' && !bearerToken.value) {
    await unwrap(client.POST('/api/auth/logout/')).catch(() => undefined);
  }
  setBearerToken(null);
  session.value = { kind: 'sign-in' };
}

onUnauthorized.handler = () => {
  if (session.value.kind === 'signed-in' || session.value.kind === 'open') session.value = { kind: 'sign-in' };
};
