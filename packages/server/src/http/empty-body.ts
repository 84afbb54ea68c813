import type { MiddlewareHandler } from 'hono';

/**
 * "No body" may come with a JSON content type (e.g. a client that always sets it): an empty
 * body is treated as no body rather than as malformed JSON.
 */
export const emptyBodyIsNoBody: MiddlewareHandler = async (c, next) => {
  if (c.req.header('content-length') === '0' && c.req.header('content-type')) {
    const headers = new Headers(c.req.raw.headers);
    headers.delete('content-type');
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, signal: c.req.raw.signal });
  }
  await next();
};
