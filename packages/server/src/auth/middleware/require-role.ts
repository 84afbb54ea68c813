import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/app-env.ts';
import { ForbiddenError } from '../errors.ts';
import { roleAllows } from '../roles.ts';
import { accessOf, needsUser, principalOf } from './access-state.ts';

/** The role the route needs (auth/route-roles.ts, the one table): 403 `forbidden` below it. */
export function requireRole(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const s = accessOf(c);
    const p = principalOf(s);
    if (needsUser(s) && p && s.need !== 'public' && !roleAllows(p.role, s.need)) {
      throw new ForbiddenError(`This needs the ${s.need} role; you are ${p.role === 'admin' ? 'an' : 'a'} ${p.role}.`);
    }
    await next();
  };
}
