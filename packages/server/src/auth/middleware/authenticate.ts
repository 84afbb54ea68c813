import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { AppEnv } from '../../http/app-env.ts';
import { UnauthorizedError } from '../../errors.ts';
import { bearerToken } from '../../http/auth.ts';
import type { AuthService } from '../auth-service.ts';
import { clientIp } from '../origin.ts';
import { anonymousPrincipal, type Principal } from '../principal.ts';
import { SESSION_COOKIE } from '../sessions.ts';
import { accessOf, needsUser } from './access-state.ts';

/**
 * Who is calling: `Authorization: Bearer` (MM_API_TOKEN or a personal token) or the
 * `mm_session` cookie; 401 when the route needs a user and neither is valid. Public routes
 * and a server with auth off act as the anonymous principal.
 */
export function authenticate(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const s = accessOf(c);
    if (!s.api || s.exempt) return next();
    const principal = needsUser(s) ? await whoIsCalling(auth, c.req.header('authorization'), getCookie(c, SESSION_COOKIE)) : anonymousPrincipal;
    s.request = { principal, authOn: s.authOn, ip: clientIp(c, auth.config), requestId: c.get('requestId') ?? null };
    await next();
  };
}

async function whoIsCalling(auth: AuthService, header: string | undefined, cookie: string | undefined): Promise<Principal> {
  if (header !== undefined) {
    const token = bearerToken(header);
    const p = token ? await auth.principalForBearer(token) : undefined;
    if (!p) throw new UnauthorizedError('The bearer token is not valid (unknown, revoked or expired).');
    return p;
  }
  if (cookie) {
    const p = await auth.principalForSession(cookie);
    if (!p) throw new UnauthorizedError('The session has ended; sign in again.');
    return p;
  }
  throw new UnauthorizedError('Sign in, or send Authorization: Bearer <token>.');
}
