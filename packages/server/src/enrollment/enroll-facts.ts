import { z } from '@hono/zod-openapi';

/** A high surrogate without its low one after it, or a low one without its high one before it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What PostgreSQL's jsonb cannot hold: U+0000 and strings that are not well-formed UTF-16
 * (a lone surrogate, `"\ud800"`). Either made an enrolment a 500 (issue 46); the path of the
 * first one found, or undefined when the value can be stored.
 */
export function unstorableJsonPath(value: unknown, at: Array<string | number> = [], depth = 0): Array<string | number> | undefined {
  if (depth > 32) return at;
  const bad = (s: string) => s.includes('\0') || LONE_SURROGATE.test(s);
  if (typeof value === 'string') return bad(value) ? at : undefined;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = unstorableJsonPath(v, [...at, i], depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (bad(k)) return [...at, k];
      const found = unstorableJsonPath(v, [...at, k], depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** The `facts` an agent sends with its enrolment: any JSON object the database can store. */
export const EnrollFactsSchema = z
  .record(z.string(), z.unknown())
  .superRefine((facts, ctx) => {
    const path = unstorableJsonPath(facts);
    if (path) ctx.addIssue({ code: 'custom', path, message: 'must not contain a NUL character or a lone surrogate, nor nest deeper than 32' });
  });
