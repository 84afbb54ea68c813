import type { MiddlewareHandler } from 'hono';
import { ValidationError } from '../errors.ts';

/**
 * Refuses a request whose query string holds a NUL character (`%00`) with 400
 * `validation_failed`, before any route reads it. PostgreSQL's text cannot hold NUL: a query
 * parameter carrying one into SQL would otherwise end as a 500 (found by the API fuzz on
 * `?version=a%00b`). Paths are the routes' own: their parameters are ids or names each
 * route checks (a video name with a NUL is simply not found, 404).
 */
export function noNulInQuery(opts: { exempt?: (path: string) => boolean } = {}): MiddlewareHandler {
  return async (c, next) => {
    const url = c.req.url;
    const at = url.indexOf('?');
    if (at >= 0 && /%00|\0/.test(url.slice(at)) && !opts.exempt?.(c.req.path)) {
      throw new ValidationError([{ field: 'query', message: 'must not contain a NUL character' }], 'The query string holds a NUL character (%00).');
    }
    await next();
  };
}
