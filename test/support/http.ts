/**
 * Tests read loosely-typed JSON bodies and assert on their shape with expect(); `any`
 * keeps those assertions readable (the shapes themselves are what is under test).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(res: Response): Promise<any> {
  return res.json();
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
