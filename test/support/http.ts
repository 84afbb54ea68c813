/**
 * Tests read loosely-typed JSON bodies and assert on their shape with expect(); `any`
 * keeps those assertions readable (the shapes themselves are what is under test).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
}

/** A POST through `api` (a running server's): a JSON body when one is given, and any extra headers. */
export function jsonPoster(api: (pathname: string, init?: RequestInit) => Promise<Response>) {
  return (pathname: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(pathname, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
}

/**
 * Calls of one bearer token against a server: `call(path)` GETs, `call(path, { body })`
 * POSTs JSON (or `method` says otherwise).
 */
export function bearerCaller(api: (pathname: string, init?: RequestInit) => Promise<Response>, token: string) {
  return (pathname: string, init: { method?: string; body?: unknown } = {}) =>
    api(pathname, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
}
