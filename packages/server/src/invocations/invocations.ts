import { asc, count, desc, eq, ilike, inArray } from 'drizzle-orm';
import type { StoreContext } from '../store-context.ts';
import { invocationFiles, invocations } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { collectUnusedContent, type InvocationFileRow } from './invocation-files.ts';
import { type InvocationRecord, toInvocationRecord } from './invocation-records.ts';

export type InvocationRow = typeof invocations.$inferSelect;

export async function createInvocation(ctx: StoreContext, input: { name: string; description: string }): Promise<InvocationRecord> {
  const [row] = await ctx.database.db.insert(invocations).values(input).returning();
  return toInvocationRecord(row!, []);
}

/** `%`, `_` and `\` match themselves in a "name contains" search. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

export async function listInvocations(
  ctx: StoreContext,
  query: { limit: number; offset: number; q?: string | undefined },
): Promise<{ invocations: InvocationRecord[]; total: number }> {
  const { db } = ctx.database;
  const where = query.q ? ilike(invocations.name, likePattern(query.q)) : undefined;
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(invocations).where(where);
  const rows = await db
    .select()
    .from(invocations)
    .where(where)
    .orderBy(desc(invocations.createdAt), desc(invocations.id))
    .limit(query.limit)
    .offset(query.offset);
  const files = await filesOf(ctx, rows.map((r) => r.id));
  return { invocations: rows.map((r) => toInvocationRecord(r, files.get(r.id) ?? [])), total };
}

async function filesOf(ctx: StoreContext, ids: number[]): Promise<Map<number, InvocationFileRow[]>> {
  const byInvocation = new Map<number, InvocationFileRow[]>();
  if (ids.length === 0) return byInvocation;
  const rows = await ctx.database.db
    .select()
    .from(invocationFiles)
    .where(inArray(invocationFiles.invocationId, ids))
    .orderBy(asc(invocationFiles.kind));
  for (const row of rows) {
    const list = byInvocation.get(row.invocationId) ?? [];
    list.push(row);
    byInvocation.set(row.invocationId, list);
  }
  return byInvocation;
}

export async function findInvocation(ctx: StoreContext, id: number): Promise<{ row: InvocationRow; files: InvocationFileRow[] } | undefined> {
  const [row] = await ctx.database.db.select().from(invocations).where(eq(invocations.id, id));
  if (!row) return undefined;
  const files = await ctx.database.db.select().from(invocationFiles).where(eq(invocationFiles.invocationId, id));
  return { row, files };
}

/** The invocation's row, or its 404 problem. */
export async function requireInvocation(ctx: StoreContext, id: number): Promise<InvocationRow> {
  const [row] = await ctx.database.db.select().from(invocations).where(eq(invocations.id, id));
  if (!row) throw notFound.invocation(id);
  return row;
}

/** The part of the operations service an invocation's delete waits for. */
export interface InvocationWork {
  /** Cancels the invocation's queued and running operations and waits (a while) for them to end. */
  cancelOperationsOf(invocationId: number): Promise<void>;
}

/**
 * Deletes the invocation: first its queued or running operations are cancelled, then its
 * rows go, then the content no other invocation uses.
 */

export async function deleteInvocation(ctx: StoreContext & { operations: InvocationWork }, id: number): Promise<void> {
  await requireInvocation(ctx, id);
  await ctx.operations.cancelOperationsOf(id);
  const shas = await ctx.database.db.transaction(async (tx) => {
    const [row] = await tx.select({ id: invocations.id }).from(invocations).where(eq(invocations.id, id)).for('update');
    if (!row) throw notFound.invocation(id);
    const files = await tx.select({ sha256: invocationFiles.sha256 }).from(invocationFiles).where(eq(invocationFiles.invocationId, id));
    // invocation_files go with it (ON DELETE CASCADE); operations keep their history (SET NULL).
    await tx.delete(invocations).where(eq(invocations.id, id));
    return files.map((f) => f.sha256);
  });
  await collectUnusedContent(ctx, shas);
}
