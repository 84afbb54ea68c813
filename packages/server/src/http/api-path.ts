import { getPath } from 'hono/utils/url';

/**
 * Every API path ends with a slash, but a request without it is answered the same way
 * (no redirect, so POST and DELETE keep working). Paths that name a file or a script's
 * own route are left as they are.
 */
export function apiPath(request: Request): string {
  const p = getPath(request);
  if (!p.startsWith('/api/') || p.endsWith('/')) return p;
  if (p === '/api/openapi.json') return p;
  if (p.startsWith('/api/videos/results/')) return p;
  if (/^\/api\/device-scripts\/[^/]+\/proxy\/./.test(p)) return p;
  if (p.startsWith('/api/docs/assets/')) return p;
  if (/^\/api\/downloads\/[^/]+$/.test(p)) return p;
  return `${p}/`;
}
