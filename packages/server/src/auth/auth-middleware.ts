import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { AuthService } from './auth-service.ts';
import { auditChanges } from './middleware/audit-changes.ts';
import { authenticate } from './middleware/authenticate.ts';
import { crossOrigin } from './middleware/cross-origin.ts';
import { cutWithCredential } from './middleware/cut-with-credential.ts';
import { hostCheck } from './middleware/host-check.ts';
import { requireRole } from './middleware/require-role.ts';
import { resolveAccess } from './middleware/resolve-access.ts';

/**
 * People and access in front of every route, as small middlewares in this order (each
 * in auth/middleware/):
 * 1. resolveAccess: the route's entry in the one role table (auth/route-roles.ts) and whether auth is on;
 * 2. hostCheck: the Host allow-list (421 `host_not_allowed`);
 * 3. authenticate: bearer token or session cookie (401);
 * 4. crossOrigin: cross-site state changes where the browser carries the credential (403 `cross_origin`);
 * 5. requireRole: the role the route needs (403 `forbidden`);
 * 6. cutWithCredential: a live request is cut when its credential goes;
 * 7. auditChanges: the handler runs with requestAuth(); a change is audited once answered.
 */
export function accessMiddlewares(auth: AuthService): MiddlewareHandler<AppEnv>[] {
  return [resolveAccess(auth), hostCheck(auth), authenticate(auth), crossOrigin(auth), requireRole(), cutWithCredential(auth), auditChanges(auth)];
}
