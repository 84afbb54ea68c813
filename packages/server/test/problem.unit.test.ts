import { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { toProblem, zodFieldProblems } from '../src/http/problem.ts';

const problemsOf = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected the value to be refused');
  return zodFieldProblems(parsed.error);
};

describe('zodFieldProblems', () => {
  it('names each unknown key as its own field, nested ones by their path', () => {
    const schema = z.strictObject({ name: z.string(), inner: z.strictObject({ a: z.number() }) });
    const problems = problemsOf(schema, { name: 'x', colour: 'red', size: 3, inner: { a: 1, b: 2 } });
    expect(problems.map((p) => p.field).sort()).toEqual(['colour', 'inner.b', 'size']);
    for (const p of problems) expect(p.message).toEqual(expect.any(String));
  });

  it('names other problems by their path, and the body as a whole (body)', () => {
    expect(problemsOf(z.object({ port: z.number() }), { port: '80' }).map((p) => p.field)).toEqual(['port']);
    expect(problemsOf(z.object({ port: z.number() }), 'text').map((p) => p.field)).toEqual(['(body)']);
  });
});

describe('toProblem of database failures', () => {
  const wrapped = (cause: object) => Object.assign(new Error('Failed query: select 1'), { cause });
  it('answers 503 database_unreachable when the connection failed or the server is going away', () => {
    for (const cause of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
    ]) {
      expect(toProblem(wrapped(cause))).toMatchObject({ status: 503, code: 'database_unreachable' });
    }
  });
  it('keeps other database errors a 500 (a bug, not an outage)', () => {
    expect(toProblem(wrapped(Object.assign(new Error('syntax error'), { code: '42601' })))).toMatchObject({ status: 500, code: 'internal_error' });
  });
});
