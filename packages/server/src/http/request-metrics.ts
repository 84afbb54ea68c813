import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Context } from 'hono';
import { UNMATCHED_ROUTE, type ServerMetrics } from '../metrics/server-metrics.ts';

/**
 * Times every request into the metrics, labelled with the pattern of the route that
 * matched (`/api/invocations/:id/`), never the raw path: ids and junk paths would make a
 * new series each. A request no route matched (404 `route_not_found`) is `unmatched`.
 */
export function requestMetrics(metrics: ServerMetrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.observeRequest(c.req.method, routePattern(c), c.res.status, (performance.now() - started) / 1000);
    }
  };
}

/**
 * The matched route's pattern. Middleware (`app.use('*')`, auth on `/api/*`, a route's
 * validators) also "match": a route's own handler takes only the context, middleware takes
 * `next` as well, so the last one-argument handler is the route. A request that auth
 * refused is still labelled with the route it asked for.
 */
function routePattern(c: Context): string {
  const routes = matchedRoutes(c).filter((r) => r.handler.length < 2);
  return routes.at(-1)?.path ?? UNMATCHED_ROUTE;
}
