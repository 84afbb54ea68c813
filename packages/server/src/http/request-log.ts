import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.ts';
import type { Logger } from '../logger.ts';

/**
 * A read that went well: what pages and clients poll (board lists, operation status, health),
 * every few seconds each. Logged at debug so that the log at info is the changes and the
 * failures; LOG_LEVEL=debug shows every request.
 */
export function isRoutineRead(method: string, status: number): boolean {
  return (method === 'GET' || method === 'HEAD') && ((status >= 200 && status < 300) || status === 304);
}

/** Gives each request an id (honouring a sane `X-Request-Id`) and logs one line when it is answered. */
export function requestLog(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const id = given && /^[\w.:-]{1,100}$/.test(given) ? given : randomUUID();
    c.set('requestId', id);
    // On Node the header goes on the outgoing response now (writeHead merges it): touching
    // c.res.headers after the handler would turn the adapter's lightweight Response into a
    // full one, which copies a buffer body and sends every body through a web stream.
    const outgoing = c.env?.outgoing;
    outgoing?.setHeader('X-Request-Id', id);
    const started = performance.now();
    try {
      await next();
    } finally {
      if (!outgoing) c.header('X-Request-Id', id);
      log[isRoutineRead(c.req.method, c.res.status) ? 'debug' : 'info'](
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
