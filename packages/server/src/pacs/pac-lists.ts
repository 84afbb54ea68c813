import type { Clock, PacRecord } from '@mm/protocol';
import { readStoredPacs } from '../boards/board-store.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../errors.ts';
import type { OperationFilters } from '../operations/store.ts';

/**
 * A list older than this is stale (docs/pacs.md, "The last known PACs"). PACs change through
 * this server (install, activate: both list them again) or by hand on the board, which only a
 * fresh query can see; a day bounds how long such a change goes unseen without a query per visit.
 */
export const PAC_LIST_MAX_AGE_S = 24 * 3600;

/** `GET /api/boards/<id>/pacs/`: the board's last known PACs, how old they are, and whether to ask again. */
export interface StoredPacs {
  board_id: string;
  /** null: never listed. */
  pacs: PacRecord[] | null;
  active: string | null;
  listed_at: string | null;
  age_s: number | null;
  stale: boolean;
  /** Why it is stale (one sentence), or null. */
  stale_reason: string | null;
  /** A `pac_query` of this board that is queued or running (it will refresh the list), or null. */
  query_operation_id: number | null;
}

export interface PacListsDeps {
  db: Db;
  clock: Clock;
  operations: { list(filters: OperationFilters, page: { limit: number; offset: number }): Promise<{ operations: Array<{ id: number }> }> };
}

/**
 * The board's last known PACs (issue 39): every `pac_query` (and install, and an activation's
 * check) stores the list it got on the board's row, so a visit shows them without asking the
 * board. Stale when never listed, listed before the board's current connection (it may have
 * rebooted into other PACs, or been changed while away), or older than PAC_LIST_MAX_AGE_S.
 */
export class PacLists {
  constructor(private readonly deps: PacListsDeps) {}

  async of(boardId: string): Promise<StoredPacs> {
    // Read through the boards' store, which owns the row (it writes the list: recordActivePac).
    const row = await readStoredPacs(this.deps.db, boardId);
    if (!row) throw notFound.board(boardId);
    const pending = await this.pendingQuery(boardId);
    const now = this.deps.clock.now();
    const ageS = row.listedAt ? Math.max(0, Math.round((now - row.listedAt.getTime()) / 1000)) : null;
    const staleReason =
      row.pacs === null || row.listedAt === null
        ? 'never listed'
        : row.connectedAt && row.connectedAt > row.listedAt
          ? 'listed before the board last connected'
          : ageS! > PAC_LIST_MAX_AGE_S
            ? `listed more than ${PAC_LIST_MAX_AGE_S / 3600} h ago`
            : null;
    return {
      board_id: boardId,
      pacs: row.pacs ?? null,
      active: row.active,
      listed_at: row.listedAt ? row.listedAt.toISOString() : null,
      age_s: ageS,
      stale: staleReason !== null,
      stale_reason: staleReason,
      query_operation_id: pending,
    };
  }

  /** A pac_query of the board that is running, else the oldest queued one, or null. */
  private async pendingQuery(boardId: string): Promise<number | null> {
    for (const status of ['running', 'queued'] as const) {
      const { operations } = await this.deps.operations.list({ boardId, kind: 'pac_query', status }, { limit: 1, offset: 0 });
      if (operations[0]) return operations[0].id;
    }
    return null;
  }
}
