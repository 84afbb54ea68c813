import { eq } from 'drizzle-orm';
import type { AppContext } from '../app-context.ts';
import { boards } from '../db/schema.ts';

/**
 * Stores the active PAC a query just reported as the board's `active_pac` (hello sets it
 * too, as the agent saw it when it connected; a later query is the fresher truth).
 */
export async function recordActivePac(ctx: AppContext, boardId: string, active: string | null): Promise<void> {
  await ctx.database.db.update(boards).set({ activePac: active }).where(eq(boards.id, boardId));
}

/** The boot id the board's live connection said hello with, if it is connected. */
export function liveBootId(ctx: AppContext, boardId: string): string | null {
  return ctx.agents.connection(boardId)?.hello?.boot_id ?? null;
}
