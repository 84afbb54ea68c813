import { z } from '@hono/zod-openapi';
import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import type { StoreContext } from '../store-context.ts';
import { operations } from '../db/schema.ts';
import { OperationSchema, toOperationObject, type OperationObject } from '../operations/operation-object.ts';
import { InvocationSchema } from '../invocations/invocation-records.ts';

/** An invocation as `GET /api/invocations/<id>/` shows it: with its latest operations. */
export const InvocationDetailsSchema = InvocationSchema.extend({
  operations: z.array(OperationSchema).openapi({ description: 'Its latest operations, newest first.' }),
}).openapi('InvocationDetails');

/** A list item of `GET /api/invocations/`: the invocation and its latest run (its latest `execute` that is not a health check's, null before the first). */
export const InvocationListItemSchema = InvocationSchema.extend({
  // A union, not `.nullable()`: that would turn the shared Operation component itself nullable.
  latest_run: z.union([OperationSchema, z.null()]),
}).openapi('InvocationListItem');

/** How many operations an invocation's details show. */
export const LATEST_OPERATIONS_SHOWN = 20;

/** The invocation's latest operations, newest first, as the operations module shows them. */
export async function latestOperationsOf(ctx: StoreContext, invocationId: number, limit = LATEST_OPERATIONS_SHOWN): Promise<OperationObject[]> {
  const rows = await ctx.database.db
    .select()
    .from(operations)
    .where(eq(operations.invocationId, invocationId))
    .orderBy(desc(operations.createdAt), desc(operations.id))
    .limit(limit);
  return rows.map(toOperationObject);
}

/**
 * Each invocation's latest `execute` (its latest run), for the list's CI-style run column: one
 * `DISTINCT ON` query for a whole page, on the (invocation_id, id) index.
 */
export async function latestRunsOf(ctx: StoreContext, invocationIds: number[]): Promise<Map<number, OperationObject>> {
  const runs = new Map<number, OperationObject>();
  if (invocationIds.length === 0) return runs;
  const rows = await ctx.database.db
    .selectDistinctOn([operations.invocationId])
    .from(operations)
    .where(and(inArray(operations.invocationId, invocationIds), eq(operations.kind, 'execute'), isNull(operations.healthCheckId)))
    .orderBy(operations.invocationId, desc(operations.id));
  for (const row of rows) if (row.invocationId !== null) runs.set(row.invocationId, toOperationObject(row));
  return runs;
}
