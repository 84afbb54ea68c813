import { signal } from '@preact/signals';
import { createApiClient, unwrap as unwrapAnswer } from '@mm/api-client';
import type { ApiProblem } from '@mm/api-client';

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
  BoardScript,
  DeviceScriptProgram,
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
      // A refused password (`invalid_credentials`, e.g. changing one's own) is not a session that ended.
      if (p.status === 401 && p.code !== 'invalid_credentials') onUnauthorized.handler();
    },
  });
}

/**
 * The device-script relay's `{path}` is the script's own route and may hold slashes
 * (`motor/forward`): openapi-fetch escapes them as `%2F`, which the relay would pass on as
 * sent, so they are put back here.
 */
client.use({
  async onRequest({ request }) {
    const url = new URL(request.url);
    const m = /^(\/api\/device-scripts\/[^/]+\/proxy\/)(.*)$/.exec(url.pathname);
    if (!m || !/%2F/i.test(m[2]!)) return request;
    url.pathname = m[1]! + m[2]!.replace(/%2F/gi, '/');
    const body = request.body ? await request.arrayBuffer() : undefined;
    return new Request(url, { method: request.method, headers: request.headers, body, credentials: request.credentials, signal: request.signal });
  },
});
