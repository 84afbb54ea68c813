import type { AcceleratorFacts } from '@mm/protocol';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards } from '../db/schema.ts';
import { agentLabelsFromFacts } from '../boards/board-facts.ts';
import { mergeLabels } from '../boards/board-selector.ts';
import { withAccelerator } from '../boards/accelerator-labels.ts';

/**
 * Stores what an app operation found (the RPC's fresh accelerator facts) as the board's
 * `facts.accelerator` and its labels, under the board's row lock (people's labels kept).
 */
export async function recordAccelerator(db: Db, boardId: string, accelerator: AcceleratorFacts): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ facts: boards.facts, labels: boards.labels }).from(boards).where(eq(boards.id, boardId)).for('update');
    if (!row) return;
    const facts = withAccelerator(row.facts ?? {}, accelerator);
    await tx.update(boards).set({ facts, labels: mergeLabels(row.labels, agentLabelsFromFacts(facts)) }).where(eq(boards.id, boardId));
  });
}
