import { z } from '@hono/zod-openapi';
import { INT4_MAX } from './safe-string.ts';

/**
 * The path and paging parameters every route module shares (docs/api.md, "Conventions").
 * Boards, device scripts, users, tokens, provisioning keys and uploads are keyed by UUIDs;
 * invocations, operations, rollouts and health checks by serials. A path id that does not
 * parse names nothing: the module's validation hook answers its resource's 404.
 */

/** A UUID path parameter. */
export const uuidParam = (name: string) =>
  z.string().uuid().openapi({ param: { name, in: 'path' }, example: '0b6f3c1e-8d4a-4f51-9a43-2f0f2b1f7c11' });

/** `{id}`: a UUID. */
export const IdParams = z.object({ id: uuidParam('id') });

/** A serial (int4) key as a path writes it: positive, plain decimal, at most 2^31 - 1 (a larger one names nothing, never a database error). */
export const SerialId = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/, 'must be a positive integer')
  .transform(Number)
  .pipe(z.number().int().max(INT4_MAX));

/** `{id}`: a serial. */
export const SerialIdParams = z.object({ id: SerialId.openapi({ param: { name: 'id', in: 'path' }, type: 'integer', example: 1 }) });

/** `?limit=` (default 100, at most 1000) and `?offset=`: one page of a list, whose `total` counts every match. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ description: 'Page size (max 1000).' }),
  // Described in full: the generator calls a parameter whose default is 0 nullable.
  offset: z.coerce.number().int().min(0).max(INT4_MAX).default(0).openapi({ type: 'integer', minimum: 0, maximum: INT4_MAX, default: 0 }),
});
