import type { Context } from 'hono';
import type { Access, RouteRole } from '../route-roles.ts';
import type { Principal } from '../principal.ts';
import type { RequestAuth } from '../request-auth.ts';

/**
 * What the access middlewares find out about a request, in order: `resolveAccess` fills in
 * the route and whether auth is on, `authenticate` the principal; the later ones read it.
 */
export interface AccessState {
  /** Outside user auth entirely: the agent link (board tokens) and health (probes). */
  exempt: boolean;
  /** An `/api/` request (the dashboard's files need no credentials). */
  api: boolean;
  authOn: boolean;
  route: RouteRole | undefined;
  /** The role the route needs, or `public`. */
  need: Access;
  /** Not GET/HEAD/OPTIONS. */
  changes: boolean;
  /** The per-request auth state handlers read through requestAuth() (set by `authenticate`). */
  request: RequestAuth | undefined;
}

declare module 'hono' {
  interface ContextVariableMap {
    access: AccessState;
  }
}

export const accessOf = (c: Context): AccessState => c.get('access');

/** Whether user auth applies to this request: an API route that is not public, with auth on. */
export const needsUser = (s: AccessState): boolean => s.api && !s.exempt && s.need !== 'public' && s.authOn;

/** The principal, once `authenticate` has run (anonymous where no user auth applies). */
export const principalOf = (s: AccessState): Principal | undefined => s.request?.principal;
