import type { BoardRow } from '../boards/board-store.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Clock } from '@mm/protocol';
import type { AuditLog } from '../auth/audit.ts';
import type { ReenrollRequest } from '../db/schema.ts';
import { approveBoard, enrollFromAddress, type EnrollCall, type EnrollRequest, type EnrollResult } from './enroll.ts';
import {
  createProvisioningKey,
  deleteProvisioningKey,
  listProvisioningKeys,
  provisioningKeyNotFound,
  toProvisioningKeyObject,
  type NewProvisioningKey,
  type ProvisioningKeyObject,
} from './provisioning-keys.ts';

/**
 * Enrollment (docs/enrollment.md) as the routes use it: the provisioning keys admins make,
 * the exchange of a key for a board token, and the approval of a board a manual key left
 * pending. The rules themselves are in enroll.ts and provisioning-keys.ts.
 */
export class ProvisioningKeys {
  constructor(
    private readonly deps: {
      db: Db;
      log: Logger;
      audit: AuditLog;
      clock: Clock;
      /** Whether the board's agent is linked (online or rebooting) on any replica: a linked board is never unseated. */
      isLinked(boardId: string): Promise<boolean>;
    },
  ) {}

  /** A page of keys, newest first (never the keys themselves). */
  async list(page: { limit: number; offset: number }): Promise<{ keys: ProvisioningKeyObject[]; total: number }> {
    const { rows, total } = await listProvisioningKeys(this.deps.db, page);
    return { keys: rows.map(toProvisioningKeyObject), total };
  }

  /** Makes a key; `secret` is answered this once (only its hash is stored). */
  async create(k: NewProvisioningKey): Promise<{ key: ProvisioningKeyObject; secret: string }> {
    const { row, key } = await createProvisioningKey(this.deps.db, k);
    this.deps.log.info({ provisioning_key_id: row.id, name: row.name }, 'provisioning key created');
    return { key: toProvisioningKeyObject(row), secret: key };
  }

  /** Deletes a key (boards enrolled with it stay); 404 `provisioning_key_not_found`. */
  async delete(id: string): Promise<ProvisioningKeyObject> {
    const row = await deleteProvisioningKey(this.deps.db, id);
    if (!row) throw provisioningKeyNotFound(id);
    return toProvisioningKeyObject(row);
  }

  /**
   * An agent's key for a board token, or a pending board (401 for a key that does not work,
   * 429 for an address refused too often); refusals are audited, folded per address.
   */
  enroll(req: EnrollRequest, call: EnrollCall): Promise<EnrollResult> {
    const { db, audit, isLinked, clock } = this.deps;
    return enrollFromAddress({ db, audit, isLinked, now: () => new Date(clock.now()) }, req, call);
  }

  /** Approves a pending board, or a board's held re-enrolment (an approved one with none stays as it is); 404 `board_not_found`. */
  async approve(id: string): Promise<{ board: BoardRow; wasPending: boolean; reenroll: ReenrollRequest | null }> {
    const approved = await approveBoard(this.deps.db, id);
    if (!approved) throw notFound.board(id);
    if (approved.wasPending) this.deps.log.info({ board_id: id }, 'board approved');
    if (approved.reenroll) this.deps.log.info({ board_id: id, hostname: approved.reenroll.hostname }, 're-enrolment approved: the next enroll call gets a new token');
    return approved;
  }
}
