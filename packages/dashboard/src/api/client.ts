import { signal } from '@preact/signals';
import createClient, { type Middleware } from 'openapi-fetch';
import { ApiProblem } from './problem.ts';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type Invocation = Schemas['Invocation'];
export type InvocationDetails = Schemas['InvocationDetails'];
export type FileRecord = Schemas['FileRecord'];
export type Operation = Schemas['Operation'];
export type Board = Schemas['Board'];
export type Video = Schemas['Video'];
export type DeviceScript = Schemas['DeviceScript'];
export type PacRecord = Schemas['PacRecord'];
export type FileKind = 'parameter' | 'bitstream' | 'weights' | 'input_video';

const TOKEN_KEY = 'mm_token';
/** A token the person signed in with (kept for the tab only); otherwise the session cookie is used. */
export const bearerToken = signal<string | null>(sessionStorage.getItem(TOKEN_KEY));
export function setBearerToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  bearerToken.value = token;
}

export function authHeaders(): Record<string, string> {
  return bearerToken.value ? { authorization: `Bearer ${bearerToken.value}` } : {};
}

/** Called when any request answers 401: the app shows the sign-in page. */
export const onUnauthorized = { handler: (): void => {} };

const auth: Middleware = {
  onRequest({ request }) {
    for (const [k, v] of Object.entries(authHeaders())) request.headers.set(k, v);
    return request;
  },
};

/** The typed client: paths and bodies from the server's own OpenAPI document. */
export const client = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
client.use(auth);

/** The data of an openapi-fetch answer, or the API's problem thrown. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await call;
  } catch (err) {
    throw ApiProblem.network(err);
  }
  if (!r.response.ok) {
    // openapi-fetch has read the body already: its parsed problem is `r.error`.
    const p = r.error !== undefined ? ApiProblem.fromBody(r.response, r.error) : await ApiProblem.fromResponse(r.response);
    if (p.status === 401) onUnauthorized.handler();
    throw p;
  }
  return r.data as T;
}

/** A plain request for routes outside the typed document (or to read headers): JSON in and out. */
export async function api<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const headers = new Headers(init.headers);
  for (const [k, v] of Object.entries(authHeaders())) headers.set(k, v);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers, body, credentials: 'same-origin' });
  } catch (err) {
    throw ApiProblem.network(err);
  }
  if (!res.ok) {
    const p = await ApiProblem.fromResponse(res);
    if (p.status === 401 && !path.startsWith('/api/auth/')) onUnauthorized.handler();
    throw p;
  }
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}
