import type { BoardLinks } from '../agent-link/board-links.ts';
import type { Database } from '../db/database.ts';
import { findBoard, someBoardIds } from '../boards/board-store.ts';
import { BadRequestError, boardOffline, notFound, ServiceUnavailableError } from '../errors.ts';

/**
 * The board a request means (docs/api.md: `board_id?` may be left out when exactly one board is
 * registered). None registered → 503 `no_board`; several and none named → 400
 * `board_required`; an unknown id → 404 `board_not_found`.
 */
export async function resolveBoardId(ctx: { database: Database }, boardId: string | undefined): Promise<string> {
  const { db } = ctx.database;
  if (boardId !== undefined) {
    if (!(await findBoard(db, boardId))) throw notFound.board(boardId);
    return boardId;
  }
  const ids = await someBoardIds(db, 2);
  if (ids.length === 0) throw new ServiceUnavailableError('no_board', 'No board is registered (POST /api/boards/ registers one).');
  if (ids.length > 1) throw new BadRequestError('board_required', 'Several boards are registered: name one with board_id.');
  return ids[0]!;
}

/**
 * Operations are only accepted for a board that is connected (or rebooting, which holds its
 * queue until it is back): a POST for an offline board answers 503 `board_offline` and
 * starts nothing. Work already queued for a board that goes offline waits for it.
 */
export async function requireReachable(ctx: { agents: Pick<BoardLinks, 'statusAnywhere'> }, boardId: string): Promise<void> {
  // Linked to this replica or another one (board_sessions).
  if ((await ctx.agents.statusAnywhere(boardId)) === 'offline') {
    throw boardOffline(boardId);
  }
}

/** resolveBoardId + requireReachable: the board an operation-starting POST will use. */
export async function boardForOperation(ctx: { database: Database; agents: Pick<BoardLinks, 'statusAnywhere'> }, boardId: string | undefined): Promise<string> {
  const id = await resolveBoardId(ctx, boardId);
  await requireReachable(ctx, id);
  return id;
}
