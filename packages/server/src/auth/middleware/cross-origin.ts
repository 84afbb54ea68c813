import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import type { AuthService } from '../auth-service.ts';
import { CrossOriginError } from '../errors.ts';
import { isCrossSite } from '../origin.ts';
import { accessOf, principalOf } from './access-state.ts';

/**
 * Cross-site state changes (403 `cross_origin`, the CSRF defence) where a browser carries
 * the credential by itself: a session cookie, a server with auth off, and signing in (a
 * sign-in from another site would log the victim's browser into the attacker's account).
 * A bearer token is never sent by a browser on its own, so it needs no such check.
 */
export function crossOrigin(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const s = accessOf(c);
    if (s.api && !s.exempt && s.changes) {
      const browserCarried = s.need === 'public' || !s.authOn || principalOf(s)?.via === 'session';
      if (browserCarried && isCrossSite(c, auth.config)) throw new CrossOriginError();
    }
    await next();
  };
}
