import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../errors.ts';

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Constant-time comparison: hash both sides so lengths never leak either. */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/** Paths that authenticate otherwise (the agent's board token) or not at all (health). */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/api/health/', '/api/agent/connect/']);

export function apiTokenAuth(apiToken: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (!apiToken || OPEN_PATHS.has(c.req.path)) return next();
    const token = bearerToken(c.req.header('authorization'));
    if (!token || !tokensEqual(token, apiToken)) throw new UnauthorizedError();
    return next();
  };
}
