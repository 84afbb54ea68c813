import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { boardNameTaken, notFound, ValidationError } from '../errors.ts';
import { MAX_LABELS } from './label-schema.ts';
import { sha256Hex } from '../http/auth.ts';
import type { Logger } from '../logger.ts';
import {
  deleteBoardRow,
  findBoard,
  findBoardByTokenHash,
  insertBoard,
  listBoardRows,
  relabelBoards,
  scriptsOfBoards,
  type BoardTarget,
  toBoardObject,
  updateBoard,
  type BoardFilters,
  type BoardLoad,
  type BoardObject,
  type BoardReservation,
  type BoardRow,
  type Presence,
} from './board-store.ts';

/**
 * What the Boards service asks of the rest of the control plane. services.ts hands in the
 * board links, the operations, the hub and the scheduler; boards/ imports none of them, so
 * every folder that works with boards may sit above it.
 */
export interface BoardsDeps {
  db: Db;
  log: Logger;
  /** A board session older than this is a board gone (BoardSessions.staleMs): the list's `status` filter. */
  sessionStaleMs: number;
  /** Where each board is linked: to this replica, or (presenceOf) to another (BoardLinks). */
  links: {
    presence(boardId: string): Presence;
    presenceOf(boardIds: string[]): Promise<Map<string, Presence>>;
  };
  /** The operation each board runs and how many wait for it; its work cancelled when it goes (Operations). */
  work: {
    boardLoads(boardIds: string[]): Promise<Map<string, BoardLoad>>;
    cancelOperationsOfBoard(boardId: string): Promise<void>;
  };
  /** Closes the links of a deleted board on every replica (AgentHub.revoke). */
  revoke(boardId: string): void;
  /** Its labels or maintenance changed: they decide which selector work it may take (FleetScheduler.boardChanged). */
  changed(): Promise<void>;
  /** The lease in force on each board (Reservations.ofBoards), if reservations are wired. */
  reservations?: { ofBoards(boardIds: string[]): Promise<Map<string, NonNullable<BoardReservation>>> };
}

export type BoardChange = Parameters<typeof updateBoard>[2];

/** The boards as the API shows them (docs/api.md, "Boards and operations"): registered, listed, changed, deleted. */
export class Boards {
  constructor(private readonly deps: BoardsDeps) {}

  /** A page of boards, oldest first, with how many match. */
  async list(page: { limit: number; offset: number }, filters: Omit<BoardFilters, 'sessionStaleMs'>): Promise<{ boards: BoardObject[]; total: number }> {
    const { rows, total } = await listBoardRows(this.deps.db, page, { ...filters, sessionStaleMs: this.deps.sessionStaleMs });
    return { boards: await this.show(rows), total };
  }

  /** The board's row; 404 `board_not_found` when there is none. */
  async require(id: string): Promise<BoardRow> {
    const row = await findBoard(this.deps.db, id);
    if (!row) throw notFound.board(id);
    return row;
  }

  async get(id: string): Promise<BoardObject> {
    return this.showOne(await this.require(id));
  }

  /** The board whose agent holds this token (never a pending one), or undefined. */
  byToken(token: string): Promise<BoardRow | undefined> {
    return findBoardByTokenHash(this.deps.db, sha256Hex(token));
  }

  /** Registers a board; its token is answered this once (only its sha256 is stored). */
  async register(name: string): Promise<{ board: BoardObject; token: string }> {
    // 32 random bytes: 256 bits, base64url (43 characters).
    const token = randomBytes(32).toString('base64url');
    const row = await insertBoard(this.deps.db, name, sha256Hex(token));
    if (row === 'name_taken') throw boardNameTaken(name);
    this.deps.log.info({ board_id: row.id, name: row.name }, 'board registered');
    return { board: await this.showOne(row), token };
  }

  /** A new name, the people's labels (the agent's `mm/` ones stay), maintenance. */
  async update(id: string, change: BoardChange): Promise<BoardObject> {
    if (change.power) {
      // The lab host must be another registered board (docs/power.md): a board cannot cut its own power.
      const controller = change.power.controller_board_id;
      const row = controller === id ? undefined : await findBoard(this.deps.db, controller);
      if (!row || row.pending) {
        const message = controller === id ? 'a board cannot be its own power controller' : `no registered board ${controller}`;
        throw new ValidationError([{ field: 'power.controller_board_id', message }]);
      }
    }
    const row = await updateBoard(this.deps.db, id, change);
    if (!row) throw notFound.board(id);
    if (row === 'name_taken') throw boardNameTaken(change.name ?? '');
    this.deps.log.info({ board_id: id, change }, 'board updated');
    if (change.labels !== undefined || change.maintenance !== undefined) await this.deps.changed();
    return this.showOne(row);
  }

  /**
   * Bulk labels: sets and removes labels on these boards (or every board a selector matches)
   * at once; the boards changed, oldest first. 400 when one would end with more than 32.
   */
  async relabel(target: BoardTarget, change: { set: Record<string, string>; remove: string[] }): Promise<BoardObject[]> {
    const rows = await relabelBoards(this.deps.db, target, change, MAX_LABELS);
    if ('tooMany' in rows) throw new ValidationError([{ field: 'set', message: `board ${rows.tooMany} would hold more than ${MAX_LABELS} labels` }], 'Nothing was changed.');
    this.deps.log.info({ boards: rows.length, ...change }, 'board labels changed');
    if (rows.length > 0) await this.deps.changed();
    return this.show(rows);
  }

  /** Its work ends, then its row and with it its token go, then any link of it is closed (4003). */
  async delete(id: string): Promise<void> {
    await this.require(id);
    // First, while the operations still name the board.
    await this.deps.work.cancelOperationsOfBoard(id);
    await deleteBoardRow(this.deps.db, id);
    this.deps.revoke(id);
    this.deps.log.info({ board_id: id }, 'board deleted');
  }

  /** Rows as the API shows them: presence wherever the board is linked (this replica or another), and its work. */
  async show(rows: BoardRow[]): Promise<BoardObject[]> {
    const ids = rows.map((r) => r.id);
    const [loads, presence, leases, scripts] = await Promise.all([
      this.deps.work.boardLoads(ids),
      this.deps.links.presenceOf(ids),
      this.deps.reservations?.ofBoards(ids) ?? new Map<string, NonNullable<BoardReservation>>(),
      scriptsOfBoards(this.deps.db, ids),
    ]);
    return rows.map((r) => {
      const load = loads.get(r.id);
      return toBoardObject(r, presence.get(r.id) ?? this.deps.links.presence(r.id), load?.running != null, load, leases.get(r.id) ?? null, scripts.get(r.id) ?? []);
    });
  }

  async showOne(row: BoardRow): Promise<BoardObject> {
    const [board] = await this.show([row]);
    return board!;
  }
}
