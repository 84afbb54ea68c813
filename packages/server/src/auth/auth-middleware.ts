import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { AppEnv } from '../http/app-env.ts';
import { UnauthorizedError } from '../errors.ts';
import { bearerToken } from '../http/auth.ts';
import type { AuthService } from './auth-service.ts';
import { CrossOriginError, ForbiddenError, HostNotAllowedError } from './errors.ts';
import { clientIp, hostAllowed, isCrossSite } from './origin.ts';
import { anonymousPrincipal, type Principal } from './principal.ts';
import { runWithAuth, type RequestAuth } from './request-auth.ts';
import { roleAllows } from './roles.ts';
import { accessForUnmapped, isStateChanging, matchRoute } from './route-roles.ts';
import { SESSION_COOKIE } from './sessions.ts';

/** The agent authenticates with its board token on its own route; nothing here applies to it. */
const AGENT_PATH = '/api/agent/connect/';
/** Health answers any Host: probes use addresses, and it reveals nothing and changes nothing. */
const HEALTH_PATH = '/api/health/';

/**
 * The one auth middleware, in front of everything:
 * 1. Host allow-list (421 `host_not_allowed`) while auth is off, or when MM_PUBLIC_URL /
 *    MM_ALLOWED_HOSTS name the hosts (with auth on, a rebinding page has no credentials:
 *    the cookie belongs to the real name, and it cannot know a token).
 * 2. Who is calling: `Authorization: Bearer` (MM_API_TOKEN or a personal token) or the
 *    `mm_session` cookie; 401 when auth is on and neither is valid.
 * 3. Cross-site state changes (403 `cross_origin`) when auth is off, for cookie-authenticated
 *    requests, and for sign-in.
 * 4. The role the route needs (auth/route-roles.ts), 403 `forbidden`.
 * 5. Registers the request as live (cut when its credential goes) and, once answered,
 *    records a state change in the audit log.
 */
export function authMiddleware(auth: AuthService): MiddlewareHandler<AppEnv> {
  const { config } = auth;
  const restrictHosts = Boolean(config.publicUrl || config.allowedHosts.length);

  return async (c, next) => {
    const path = c.req.path;
    const method = c.req.method;
    if (path === AGENT_PATH || path === HEALTH_PATH) return next();
    const authOn = await auth.isOn();
    if ((!authOn || restrictHosts) && !hostAllowed(c.req.header('host'), config)) throw new HostNotAllowedError(c.req.header('host') ?? '');
    if (!path.startsWith('/api/')) return next();

    const match = matchRoute(method, path);
    const access = match?.route.access ?? accessForUnmapped(method);
    const changes = isStateChanging(method);

    let principal: Principal = anonymousPrincipal;
    if (access === 'public') {
      // Sign-in from another site would log the victim's browser into the attacker's account.
      if (changes && isCrossSite(c, config)) throw new CrossOriginError();
    } else if (!authOn) {
      if (changes && isCrossSite(c, config)) throw new CrossOriginError();
    } else {
      const header = c.req.header('authorization');
      const cookie = getCookie(c, SESSION_COOKIE);
      if (header !== undefined) {
        const token = bearerToken(header);
        const p = token ? await auth.principalForBearer(token) : undefined;
        if (!p) throw new UnauthorizedError('The bearer token is not valid (unknown, revoked or expired).');
        principal = p;
      } else if (cookie) {
        const p = await auth.principalForSession(cookie);
        if (!p) throw new UnauthorizedError('The session has ended; sign in again.');
        if (changes && isCrossSite(c, config)) throw new CrossOriginError();
        principal = p;
      } else {
        throw new UnauthorizedError('Sign in, or send Authorization: Bearer <token>.');
      }
      if (!roleAllows(principal.role, access)) {
        throw new ForbiddenError(`This needs the ${access} role; you are ${principal.role === 'admin' ? 'an' : 'a'} ${principal.role}.`);
      }
    }

    const state: RequestAuth = { principal, authOn, ip: clientIp(c, config), requestId: c.get('requestId') ?? null };
    const outgoing = c.env?.outgoing;
    if (principal.kind === 'user' && outgoing) {
      const unregister = auth.live.add(principal, () => {
        // Ends the response mid-stream: an event stream or download stops at once.
        outgoing.destroy();
        c.env.incoming.destroy();
      });
      outgoing.once('close', unregister);
    }

    await runWithAuth(state, next);

    const action = state.auditAction ?? match?.route.action;
    if (changes && action && action !== 'self') {
      const status = c.res.status;
      // Refused requests changed nothing; a 502 is a run that failed, but it ran.
      if (status < 400 || status === 502) {
        await auth.audit.record({
          action,
          target: state.auditTarget ?? path,
          actor: authOn ? principal : null,
          ip: state.ip,
          requestId: state.requestId,
          detail: { status, ...state.auditDetail },
        });
      }
    }
  };
}
