import { z } from '@hono/zod-openapi';

/**
 * The string every request schema is built from: PostgreSQL text and jsonb cannot hold
 * U+0000, so a NUL byte in a request is refused with 400 (`validation_failed`) instead of
 * reaching the database and failing there with 500.
 */
export const safeString = () => z.string().refine((s) => !s.includes('\0'), 'must not contain a NUL character');

/** The largest value of a PostgreSQL `integer` (int4) column: ids, offsets and counts stay within it. */
export const INT4_MAX = 2_147_483_647;
