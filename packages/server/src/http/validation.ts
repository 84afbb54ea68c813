import type { Hook } from '@hono/zod-openapi';
import type { Env } from 'hono';
import type { AppEnv } from './app-env.ts';
import { type ApiError, ValidationError } from '../errors.ts';
import { zodFieldProblems } from './problem.ts';

/**
 * The validation hook of every route module. A path parameter that does not parse
 * (e.g. a non-numeric id) names no resource, so it answers that resource's 404;
 * anything else is a 400 listing each field problem.
 */
export function validationHook<E extends Env = AppEnv>(notFound: (raw: string) => ApiError) {
  const hook: Hook<unknown, E, string, unknown> = (result, c) => {
    if (result.success) return;
    if (result.target === 'param') {
      const raw = Object.values(c.req.param() as Record<string, string>)[0] ?? '';
      throw notFound(raw);
    }
    throw new ValidationError(zodFieldProblems(result.error));
  };
  return hook;
}
