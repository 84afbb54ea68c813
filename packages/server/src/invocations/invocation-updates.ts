import { eq, sql } from 'drizzle-orm';
import { invocationFiles, invocations } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { StoreContext } from '../store-context.ts';
import { type InvocationRecord, toInvocationRecord } from './invocation-records.ts';

export interface InvocationChange {
  name?: string | undefined;
  description?: string | undefined;
  /** The accelerated application its runs need (docs/accelerators.md); null clears it. */
  requires_app?: string | null | undefined;
}

/** `PATCH /api/invocations/<id>/`: changes what is given, keeps the rest; the invocation as it is now. */
export async function updateInvocation(ctx: StoreContext, id: number, change: InvocationChange): Promise<InvocationRecord> {
  const { db } = ctx.database;
  const set = {
    ...(change.name !== undefined ? { name: change.name } : {}),
    ...(change.description !== undefined ? { description: change.description } : {}),
    ...(change.requires_app !== undefined ? { requiresApp: change.requires_app } : {}),
  };
  const [row] = await db
    .update(invocations)
    .set({ ...set, updatedAt: sql`now()` })
    .where(eq(invocations.id, id))
    .returning();
  if (!row) throw notFound.invocation(id);
  const files = await db.select().from(invocationFiles).where(eq(invocationFiles.invocationId, id));
  return toInvocationRecord(row, files);
}
