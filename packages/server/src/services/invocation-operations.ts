import { and, desc, eq, inArray } from 'drizzle-orm';
import type { StoreContext } from '../store-context.ts';
import { operations } from '../db/schema.ts';
import { toOperationObject, type OperationObject } from '../operations/operation-object.ts';

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
    .where(and(inArray(operations.invocationId, invocationIds), eq(operations.kind, 'execute')))
    .orderBy(operations.invocationId, desc(operations.id));
  for (const row of rows) if (row.invocationId !== null) runs.set(row.invocationId, toOperationObject(row));
  return runs;
}
