import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import type { AuthService } from '../auth-service.ts';
import { runWithAuth } from '../request-auth.ts';
import { accessOf } from './access-state.ts';

/**
 * Last: runs the handler with the request's auth state in async context (requestAuth()),
 * then records a state change in the audit log under the route's action (or the one the
 * handler asked for with auditAs()). `self` routes record their own events.
 */
export function auditChanges(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const s = accessOf(c);
    const state = s.request;
    if (!state) return next();
    await runWithAuth(state, next);
    const action = state.auditAction ?? s.route?.action;
    if (!s.changes || !action || action === 'self') return;
    const status = c.res.status;
    // Refused requests changed nothing; a 502 is a run that failed, but it ran.
    if (status >= 400 && status !== 502) return;
    await auth.audit.record({
      action,
      target: state.auditTarget ?? c.req.path,
      actor: state.authOn ? state.principal : null,
      ip: state.ip,
      requestId: state.requestId,
      detail: { status, ...state.auditDetail },
    });
  };
}
