import { desc, eq } from 'drizzle-orm';
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
