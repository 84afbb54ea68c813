import { signal } from '@preact/signals';
import { createApiClient, unwrap as unwrapAnswer } from '@mm/api-client';
import type { ApiProblem } from '@mm/api-client';
import { ApiProblem as Problem } from './problem.ts';

export type {
  Schemas,
  Invocation,
  InvocationDetails,
  FileRecord,
  Operation,
  Board,
  Video,
  DeviceScript,
  PacRecord,
  FileKind,
} from '@mm/api-client';

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

/** The typed client: paths and bodies from the server's own OpenAPI document. */
export const client = createApiClient({ baseUrl: location.origin, credentials: 'same-origin', headers: authHeaders });

/** The data of an openapi-fetch answer, or the API's problem thrown. */
export function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  return unwrapAnswer(call, {
    onProblem: (p: ApiProblem) => {
      if (p.status === 401) onUnauthorized.handler();
    },
  });
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
    throw Problem.network(err);
  }
  if (!res.ok) {
    const p = await Problem.fromResponse(res);
    if (p.status === 401 && !path.startsWith('/api/auth/')) onUnauthorized.handler();
    throw p;
  }
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}
