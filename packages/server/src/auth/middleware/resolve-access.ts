import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import type { AuthService } from '../auth-service.ts';
import { accessForUnmapped, isStateChanging, matchRoute } from '../route-roles.ts';

/** The agent authenticates with its board token on its own route; nothing here applies to it. */
const AGENT_PATH = '/api/agent/connect/';
/** Health answers any Host: probes use addresses, and it reveals nothing and changes nothing. */
const HEALTH_PATH = '/api/health/';

/** First: which entry of the one role table the request hits, what it needs, and whether auth is on. */
export function resolveAccess(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { path, method } = c.req;
    const exempt = path === AGENT_PATH || path === HEALTH_PATH;
    const route = matchRoute(method, path)?.route;
    c.set('access', {
      exempt,
      api: path.startsWith('/api/'),
      // Not asked for the exempt routes: while auth is off it costs a query.
      authOn: exempt ? false : await auth.isOn(),
      route,
      need: route?.access ?? accessForUnmapped(method),
      changes: isStateChanging(method),
      request: undefined,
    });
    await next();
  };
}
