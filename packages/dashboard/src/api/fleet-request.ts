import { authHeaders, onUnauthorized } from './client.ts';
import { ApiProblem } from './problem.ts';

/**
 * A JSON request to a fleet route the generated client does not know yet (PATCH a board,
 * the metrics series, telemetry, execute with a selector): same credentials and problem
 * handling as the typed client.
 */
export async function fleetRequest<T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...authHeaders(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw ApiProblem.network(err);
  }
  if (!res.ok) {
    const problem = await ApiProblem.fromResponse(res);
    if (problem.status === 401) onUnauthorized.handler();
    throw problem;
  }
  return (await res.json()) as T;
}
