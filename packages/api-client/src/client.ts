import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { ApiProblem } from './problem.ts';
import type { components, paths } from './schema.d.ts';

export type { components, paths } from './schema.d.ts';
export type Schemas = components['schemas'];
export type Invocation = Schemas['Invocation'];
export type InvocationDetails = Schemas['InvocationDetails'];
export type FileRecord = Schemas['FileRecord'];
export type Operation = Schemas['Operation'];
export type Board = Schemas['Board'];
export type Reservation = Schemas['Reservation'];
export type Video = Schemas['Video'];
export type DeviceScript = Schemas['DeviceScript'];
export type PacRecord = Schemas['PacRecord'];
export type BoardScript = Schemas['BoardScript'];
export type DeviceScriptProgram = Schemas['DeviceScriptProgram'];
export type FileKind = 'parameter' | 'bitstream' | 'weights' | 'input_video';

export type ApiClient = Client<paths>;

export interface ApiClientOptions {
  /** The control plane's origin, e.g. `http://127.0.0.1:8000` (the browser passes `location.origin`). */
  baseUrl: string;
  /** Headers added to every request, read at request time (a token may change after sign-in). */
  headers?: () => Record<string, string>;
  /** The browser sends its session cookie with `same-origin`. */
  credentials?: 'omit' | 'same-origin' | 'include';
  fetch?: typeof globalThis.fetch;
}

/** The typed client: paths, parameters and bodies from the server's own OpenAPI document. */
export function createApiClient(opts: ApiClientOptions): ApiClient {
  const client = createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const headers = opts.headers;
  if (headers) {
    const auth: Middleware = {
      onRequest({ request }) {
        for (const [k, v] of Object.entries(headers())) request.headers.set(k, v);
        return request;
      },
    };
    client.use(auth);
  }
  return client;
}

export interface UnwrapOptions {
  /** Called with the problem before it is thrown (e.g. the dashboard shows sign-in on 401). */
  onProblem?: (problem: ApiProblem) => void;
}

/** The data of an openapi-fetch answer, or the API's problem (or a network failure) thrown as an ApiProblem. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
  opts: UnwrapOptions = {},
): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await call;
  } catch (err) {
    throw ApiProblem.network(err);
  }
  if (!r.response.ok) {
    // openapi-fetch has read the body already: its parsed problem is `r.error`.
    const p = r.error !== undefined ? ApiProblem.fromBody(r.response, r.error) : await ApiProblem.fromResponse(r.response);
    opts.onProblem?.(p);
    throw p;
  }
  return r.data as T;
}
