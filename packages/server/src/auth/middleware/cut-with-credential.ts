import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import type { AuthService } from '../auth-service.ts';
import { accessOf, principalOf } from './access-state.ts';

/**
 * Registers a user's request as live until its response closes, so that deleting the user,
 * revoking the token or ending the session cuts it at once: an event stream or a download
 * stops mid-way instead of outliving its credential.
 */
export function cutWithCredential(auth: AuthService): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const p = principalOf(accessOf(c));
    const outgoing = c.env?.outgoing;
    if (p?.kind === 'user' && outgoing) {
      const unregister = auth.live.add(p, () => {
        outgoing.destroy();
        c.env.incoming.destroy();
      });
      outgoing.once('close', unregister);
    }
    await next();
  };
}
