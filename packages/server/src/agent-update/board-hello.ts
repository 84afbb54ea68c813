import { eq } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { boards } from '../db/schema.ts';

/** What an agent update reads of the board's row: when its live link said hello, and with which version. */
export interface BoardHello {
  connectedAt: Date | null;
  agentVersion: string | null;
}

/** Reads a board's last hello from its row (undefined: the board was deleted). */
export function boardHelloReader(db: Db): (boardId: string) => Promise<BoardHello | undefined> {
  return async (boardId) => {
    const [row] = await db.select({ connectedAt: boards.connectedAt, agentVersion: boards.agentVersion }).from(boards).where(eq(boards.id, boardId));
    return row;
  };
}
