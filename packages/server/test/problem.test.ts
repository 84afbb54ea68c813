import { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { zodFieldProblems } from '../src/http/problem.ts';

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
