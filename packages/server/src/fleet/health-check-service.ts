import type { Db } from '../db/database.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { NewOperationInput } from '../operations/operations.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import {
  boardsForCheckNow,
  checksOfBoard,
  deleteHealthCheck,
  findHealthCheck,
  insertHealthCheck,
  listHealthChecks,
  newCheckRun,
  toHealthCheckObject,
  updateHealthCheck,
  type HealthCheckInput,
  type HealthCheckObject,
} from './health-checks.ts';

export const notFoundCheck = (id: unknown) => new NotFoundError('health_check_not_found', `No health check with id ${String(id)}.`);

export interface HealthChecksDeps {
  db: Db;
  /** MM_QUEUE_TIMEOUT_S in ms: a run waits at most this long for its board. */
  queueTimeoutMs: number;
  /** How old a board session's heartbeat may be for the board to count as online. */
  sessionStaleMs: number;
  /** 404 `invocation_not_found` for an invocation that does not exist (invocations/invocations.ts). */
  requireInvocation(id: number): Promise<unknown>;
  /** Creates a run (Operations.create). */
  createOperation(input: NewOperationInput): Promise<OperationObject>;
  /** A check was defined: the scheduler looks at the fleet again (FleetScheduler.kick). */
  defined(): void;
}

/** Health checks as the API shows them (docs/fleet.md): defined, listed, changed, deleted, run now on a board. */
export class HealthChecks {
  constructor(private readonly deps: HealthChecksDeps) {}

  async list(page: { limit: number; offset: number }): Promise<{ health_checks: HealthCheckObject[]; total: number }> {
    const { rows, total } = await listHealthChecks(this.deps.db, page);
    return { health_checks: rows.map(toHealthCheckObject), total };
  }

  /** The check; 404 `health_check_not_found` when there is none. */
  async require(id: number): Promise<HealthCheckObject> {
    const row = await findHealthCheck(this.deps.db, id);
    if (!row) throw notFoundCheck(id);
    return toHealthCheckObject(row);
  }

  async create(input: HealthCheckInput): Promise<HealthCheckObject> {
    await this.deps.requireInvocation(input.invocation_id);
    const row = await insertHealthCheck(this.deps.db, input);
    this.deps.defined();
    return toHealthCheckObject(row);
  }

  async update(id: number, input: Partial<HealthCheckInput>): Promise<HealthCheckObject> {
    await this.require(id);
    if (input.invocation_id !== undefined) await this.deps.requireInvocation(input.invocation_id);
    const row = await updateHealthCheck(this.deps.db, id, input);
    if (!row) throw notFoundCheck(id);
    return toHealthCheckObject(row);
  }

  async delete(id: number): Promise<void> {
    if (!(await deleteHealthCheck(this.deps.db, id))) throw notFoundCheck(id);
  }

  /** `POST /api/boards/<id>/health-check/`: a run of each check the board matches, queued ahead of its other work. */
  async runNow(boardId: string): Promise<OperationObject[]> {
    const out: OperationObject[] = [];
    for (const check of await checksOfBoard(this.deps.db, boardId)) out.push(await this.deps.createOperation(newCheckRun(check, boardId, this.deps.queueTimeoutMs)));
    return out;
  }

  /**
   * `POST /api/health-checks/<id>/run/`: a run of the check on every online board it matches
   * (in maintenance too: a check is how one learns a board is fit again); 409
   * `no_matching_board` when none is online. The check and its runs, for the audit.
   */
  async runCheckNow(id: number): Promise<{ check: HealthCheckObject; runs: OperationObject[] }> {
    const row = await findHealthCheck(this.deps.db, id);
    if (!row) throw notFoundCheck(id);
    const boardIds = await boardsForCheckNow(this.deps.db, this.deps.sessionStaleMs, row);
    if (boardIds.length === 0) {
      const pairs = Object.entries(row.boardSelector).map(([k, v]) => `${k}=${v}`).join(', ');
      throw new ConflictError('no_matching_board', `No online board matches the check's selector (${pairs || 'every board'}): nothing to run it on.`);
    }
    const runs: OperationObject[] = [];
    for (const boardId of boardIds) runs.push(await this.deps.createOperation(newCheckRun(row, boardId, this.deps.queueTimeoutMs)));
    return { check: toHealthCheckObject(row), runs };
  }
}
