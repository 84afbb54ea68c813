import type { Db } from '../db/database.ts';
import { ConflictError, notFound } from '../errors.ts';
import { ForbiddenError } from '../auth/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { roleAllows } from '../auth/roles.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import { toIncidentObject, type IncidentObject } from './incident-object.ts';
import { POWER_KINDS, type PowerAction } from './power-kinds.ts';
import { boardPowerOf, incidentsOf } from './power-store.ts';

/**
 * Who besides an admin may switch a board's power. The default lets nobody else; the
 * reservations module plugs in here (its holder of the board may), through
 * `Power.useAccess` in the composition root (services.ts).
 */
export interface PowerAccess {
  mayControl(principal: Principal, boardId: string): Promise<boolean>;
}

export const ADMINS_ONLY: PowerAccess = { mayControl: async () => false };

export interface PowerDeps {
  db: Db;
  operations: { runNow(input: { kind: string; boardId: string; params?: Record<string, unknown> }): Promise<OperationObject> };
}

/** Power control (docs/power.md): a board's power operations and its incidents. */
export class Power {
  private access: PowerAccess = ADMINS_ONLY;

  constructor(private readonly deps: PowerDeps) {}

  /** Who else may switch power (e.g. the holder of a reservation). */
  useAccess(access: PowerAccess): void {
    this.access = access;
  }

  /** 403 unless the caller is an admin or the access rule lets them (the reservation holder). */
  async requireControl(principal: Principal, boardId: string): Promise<void> {
    if (roleAllows(principal.role, 'admin')) return;
    if (await this.access.mayControl(principal, boardId)) return;
    throw new ForbiddenError("Switching a board's power needs the admin role (or the board's reservation).");
  }

  /**
   * Starts `power_on`, `power_off` or `power_cycle` at once (it does not wait in the board's
   * queue: the board may be off or hung). 404 for no such board, 409 `power_not_configured`.
   */
  async control(boardId: string, action: PowerAction): Promise<OperationObject> {
    const board = await boardPowerOf(this.deps.db, boardId);
    if (!board) throw notFound.board(boardId);
    if (!board.power) {
      throw new ConflictError('power_not_configured', `Board ${board.name} has no power controller: set \`power\` (lab host, PDU, port) with PATCH /api/boards/${boardId}/ first.`);
    }
    return this.deps.operations.runNow({ kind: POWER_KINDS[action], boardId, params: { action } });
  }

  /** A rollout's `power_cycle` step: started at once; a board without power settings fails it `power_not_configured`. */
  cycle(boardId: string): Promise<OperationObject> {
    return this.deps.operations.runNow({ kind: POWER_KINDS.cycle, boardId, params: { action: 'cycle' } });
  }

  /** The board's incidents, newest first. */
  async incidents(boardId: string, limit = 100): Promise<IncidentObject[]> {
    if (!(await boardPowerOf(this.deps.db, boardId))) throw notFound.board(boardId);
    return (await incidentsOf(this.deps.db, boardId, limit)).map(toIncidentObject);
  }
}
