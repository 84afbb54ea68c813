/**
 * Helpers of the people-and-access tests: users made through the API, signing in (the
 * session cookie), personal tokens, and requests as one of them.
 */
import { expect } from 'vitest';
import { json } from '../../../../test/support/http.ts';
import type { TestServer } from '../../../../test/support/test-server.ts';

export const ADMIN_TOKEN = 'bootstrap-admin-token-for-tests';
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface TestUser {
  id: string;
  username: string;
  role: string;
  password: string;
  /** `mm_session=<value>` for a Cookie header. */
  cookie: string;
  /** A personal token of this user. */
  token: string;
}

/** The `mm_session=…` pair of a response's Set-Cookie, or undefined. */
export function sessionCookie(res: Response): string | undefined {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('mm_session='));
  return set?.split(';')[0];
}

export function login(server: TestServer, username: string, password: string, headers: Record<string, string> = {}) {
  return server.api('/api/auth/login/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username, password }),
  });
}

/** JSON request helper: `auth` is headers (bearer or cookie). */
export function call(server: TestServer, method: string, path: string, auth: Record<string, string>, body?: unknown, headers: Record<string, string> = {}) {
  return server.api(path, {
    method,
    headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Makes a user through the API as `admin`, signs in as it and makes it a personal token. */
export async function makeUser(server: TestServer, username: string, role: string, admin: Record<string, string> = bearer(ADMIN_TOKEN)): Promise<TestUser> {
  const password = `pw-${username}-${Math.random().toString(36).slice(2)}`;
  const created = await call(server, 'POST', '/api/users/', admin, { username, password, role });
  expect(created.status, await created.clone().text()).toBe(201);
  const user = await json(created);
  const res = await login(server, username, password);
  expect(res.status).toBe(200);
  const cookie = sessionCookie(res)!;
  expect(cookie).toBeDefined();
  const t = await call(server, 'POST', '/api/tokens/', { cookie }, { name: `${username}-token` });
  expect(t.status).toBe(201);
  return { id: user.id, username, role, password, cookie, token: (await json(t)).token };
}
