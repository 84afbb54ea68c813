import type { MiddlewareHandler } from 'hono';
import { TUS_EXPOSED_HEADERS, TUS_VERSION } from './tus-protocol.ts';

/**
 * tus 1.0: `Tus-Resumable` on every answer of the upload routes, errors included (401,
 * 404, 409, 412, ...), not only on those the handlers build. Mounted before auth so its
 * refusals carry it too.
 */
export const tusResumableOnEveryAnswer: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.has('tus-resumable')) {
    c.res.headers.set('Tus-Resumable', TUS_VERSION);
    c.res.headers.set('Access-Control-Expose-Headers', TUS_EXPOSED_HEADERS);
  }
};
