import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { contents, operationFiles, operations } from '../db/schema.ts';
import type { StoreContext } from '../store-context.ts';
import { collectUnusedContent } from './invocation-files.ts';

/** The kinds of file a run keeps besides its output video. */
export type OperationFileKind = 'results';

export type OperationFileRow = typeof operationFiles.$inferSelect;

/** What an execute's result says of its results.jsonl. */
export interface RunResultsRecord {
  filename: string;
  size: number;
  sha256: string;
  url: string;
}

export function resultsUrl(invocationId: number, operationId: number): string {
  return `/api/invocations/${invocationId}/results/?operation_id=${operationId}`;
}

/**
 * Records stored (and pinned) content as the operation's file of `kind`, replacing one it
 * had; ends the pin whatever happens. The content stays while the row does (retention
 * deletes the row with the operation).
 */
export async function attachOperationFile(
  ctx: StoreContext,
  operationId: number,
  kind: OperationFileKind,
  file: { filename: string; sha256: string; size: number; contentType: string },
): Promise<void> {
  let replaced: string | undefined;
  try {
    replaced = await ctx.database.db.transaction(async (tx) => {
      await tx
        .insert(contents)
        .values({ sha256: file.sha256, size: file.size })
        .onConflictDoUpdate({ target: contents.sha256, set: { size: sql`excluded.size` } });
      if (!(await ctx.files.has(file.sha256))) throw new Error(`content ${file.sha256} is missing from the store`);
      const [previous] = await tx
        .select({ sha256: operationFiles.sha256 })
        .from(operationFiles)
        .where(and(eq(operationFiles.operationId, operationId), eq(operationFiles.kind, kind)));
      await tx
        .insert(operationFiles)
        .values({ operationId, kind, ...file })
        .onConflictDoUpdate({
          target: [operationFiles.operationId, operationFiles.kind],
          set: { filename: file.filename, size: file.size, sha256: file.sha256, contentType: file.contentType, createdAt: sql`now()` },
        });
      return previous?.sha256;
    });
  } catch (err) {
    ctx.files.release(file.sha256);
    await collectUnusedContent(ctx, [file.sha256]);
    throw err;
  }
  ctx.files.release(file.sha256);
  if (replaced && replaced !== file.sha256) await collectUnusedContent(ctx, [replaced]);
}

/**
 * The results file of one of the invocation's operations, or (no operation named) of its
 * latest run that has one.
 */
export async function findRunResults(ctx: StoreContext, invocationId: number, operationId?: number): Promise<(OperationFileRow & { operationId: number }) | undefined> {
  const { db } = ctx.database;
  const where = [eq(operations.invocationId, invocationId), eq(operationFiles.kind, 'results')];
  if (operationId !== undefined) where.push(eq(operations.id, operationId));
  // The latest run is the user's own, never a health check's.
  else where.push(isNull(operations.healthCheckId));
  const [row] = await db
    .select({ file: operationFiles })
    .from(operationFiles)
    .innerJoin(operations, eq(operations.id, operationFiles.operationId))
    .where(and(...where))
    .orderBy(desc(operations.id))
    .limit(1);
  return row?.file;
}
