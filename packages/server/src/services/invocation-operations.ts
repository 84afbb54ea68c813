import { desc, eq } from 'drizzle-orm';
import type { AppContext } from '../app-context.ts';
import { operations } from '../db/schema.ts';
import { type OperationRecord, toOperationRecord } from './invocation-records.ts';

/** How many operations an invocation's details show. */
export const LATEST_OPERATIONS_SHOWN = 20;

/**
 * The invocation's latest operations, newest first, shaped like the contract's operation
 * object. Self-contained on purpose: the operations module may replace it with its own.
 */
export async function latestOperationsOf(ctx: AppContext, invocationId: number, limit = LATEST_OPERATIONS_SHOWN): Promise<OperationRecord[]> {
  const rows = await ctx.database.db
    .select()
    .from(operations)
    .where(eq(operations.invocationId, invocationId))
    .orderBy(desc(operations.createdAt), desc(operations.id))
    .limit(limit);
  return rows.map(toOperationRecord);
}
