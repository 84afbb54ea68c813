import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-context.ts';
import type { Logger } from '../logger.ts';

/** Gives each request an id (honouring a sane `X-Request-Id`) and logs one line when it is answered. */
export function requestLog(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const id = given && /^[\w.:-]{1,100}$/.test(given) ? given : randomUUID();
    c.set('requestId', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      c.header('X-Request-Id', id);
      log.info(
        {
          req_id: id,
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };
}
