import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import type { AuthService } from '../auth-service.ts';
import { HostNotAllowedError } from '../errors.ts';
import { hostAllowed } from '../origin.ts';
import { accessOf } from './access-state.ts';

/**
 * Host allow-list (421 `host_not_allowed`, DNS rebinding) while auth is off, or whenever
 * MM_PUBLIC_URL / MM_ALLOWED_HOSTS name the hosts. With auth on and neither set, a
 * rebinding page has no credentials: the cookie belongs to the real name, and it cannot
 * know a token.
 */
export function hostCheck(auth: AuthService): MiddlewareHandler<AppEnv> {
  const restrictHosts = Boolean(auth.config.publicUrl || auth.config.allowedHosts.length);
  return async (c, next) => {
    const s = accessOf(c);
    const host = c.req.header('host');
    if (!s.exempt && (!s.authOn || restrictHosts) && !hostAllowed(host, auth.config)) throw new HostNotAllowedError(host ?? '');
    await next();
  };
}
