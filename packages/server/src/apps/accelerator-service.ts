import type { BoardLinks } from '../agent-link/board-links.ts';
import { findBoard } from '../boards/board-store.ts';
import type { Db } from '../db/database.ts';
import { ApiError, ConflictError, notFound } from '../errors.ts';
import type { BoardSelector } from '../boards/board-selector.ts';
import type { Logger } from '../logger.ts';
import { storedAccelerator } from '../boards/accelerator-labels.ts';
import type { BoardApps } from '../accelerators/accelerator-schemas.ts';
import { boardAppsOf } from './app-operations.ts';
import { anyCandidate, boardFingerprintFor, fittingBoards, runNeedsOf, type RunNeeds } from '../accelerators/board-fit.ts';

/** The pre-check of a load asks the board for its listing: the agent's own query bound is 20 s. */
const PRECHECK_TIMEOUT_MS = 30_000;

/**
 * The accelerator side of the control plane for routes and runs (docs/accelerators.md): the
 * board's apps as last reported, the checks an execute passes before anything is created or
 * moved, and what an execute's `op.start` carries for the agent's own checks.
 */
export class AcceleratorService {
  constructor(private readonly deps: { db: Db; agents: BoardLinks; log: Logger }) {}

  /** `GET /api/boards/<id>/apps/` without `refresh`: what the board last reported. */
  async boardApps(boardId: string): Promise<BoardApps> {
    const row = await findBoard(this.deps.db, boardId);
    if (!row) throw notFound.board(boardId);
    const accel = storedAccelerator(row.facts);
    if (!accel) return { board_id: boardId, apps: [], active: null, dpu: null, vai_version: null, vart_target: null, reported_at: null };
    return boardAppsOf(boardId, { apps: accel.apps, active: accel.apps.find((a) => a.active)?.name ?? null, accelerator: accel }, accel.reported_at ?? null);
  }

  /**
   * A load's "400 app_not_found before anything runs": the app must be one the board lists. A
   * connected board is asked now (a query changes nothing, so it runs outside the queue);
   * otherwise what it last reported decides. A board that cannot tell (no tools, no report)
   * is not refused here: the operation's own check fails it with the same code.
   */
  async refuseUnlistedApp(boardId: string, app: string): Promise<void> {
    let names: string[] | undefined;
    if (this.deps.agents.connection(boardId)) {
      try {
        names = (await this.deps.agents.call(boardId, 'app.query', {}, { timeoutMs: PRECHECK_TIMEOUT_MS })).apps.map((a) => a.name);
      } catch (err) {
        this.deps.log.debug({ err, board_id: boardId }, 'app pre-check: the board could not list its apps');
      }
    }
    if (names === undefined) {
      const row = await findBoard(this.deps.db, boardId);
      names = storedAccelerator(row?.facts)?.apps.map((a) => a.name);
    }
    if (names === undefined || names.includes(app)) return;
    throw new ApiError(
      400,
      'app_not_found',
      'Bad Request',
      `The board lists no app named ${JSON.stringify(app)} (it lists ${names.length > 0 ? names.join(', ') : 'none'}).`,
      [{ field: 'app', message: 'not an app the board lists' }],
      { board_id: boardId, apps: names },
    );
  }

  /**
   * An execute naming a board: 409 `dpu_fingerprint_mismatch` when the board's fingerprint for
   * the run is known and is none of the model's DPU subgraphs'. Nothing is created.
   */
  async checkNamedBoard(invocationId: number, boardId: string): Promise<void> {
    const needs = await runNeedsOf(this.deps.db, invocationId);
    if (needs.fingerprints.length === 0) return;
    const board = await boardFingerprintFor(this.deps.db, boardId, invocationId);
    if (!board || board.fingerprint === null || needs.fingerprints.includes(board.fingerprint)) return;
    const fitting = await fittingBoards(this.deps.db, invocationId);
    const app = needs.requiresApp && board ? ` with ${needs.requiresApp} loaded` : '';
    throw new ConflictError(
      'dpu_fingerprint_mismatch',
      `The model was compiled for DPU fingerprint ${needs.fingerprints.join(' or ')}; the board ${board.name} has ${board.fingerprint}${app}. ` +
        (fitting.length ? `Boards that fit: ${fitting.map((b) => b.name).join(', ')}.` : 'No registered board is known to fit.'),
      { model_fingerprints: needs.fingerprints, board_fingerprint: board.fingerprint, fitting_boards: fitting },
    );
  }

  /**
   * An execute with a selector whose boards all have a known fingerprint that fits no DPU
   * subgraph of the model: 400 `no_matching_board` with `reason: "dpu_fingerprint"`.
   */
  async checkSelector(invocationId: number, selector: BoardSelector): Promise<void> {
    const needs = await runNeedsOf(this.deps.db, invocationId);
    if (needs.fingerprints.length === 0) return;
    if (await anyCandidate(this.deps.db, invocationId, selector)) return;
    const fitting = await fittingBoards(this.deps.db, invocationId);
    throw new ApiError(
      400,
      'no_matching_board',
      'Bad Request',
      `No registered board with the labels ${JSON.stringify(selector)} has a DPU the model fits (it was compiled for ${needs.fingerprints.join(' or ')}).` +
        (fitting.length ? ` Boards that fit: ${fitting.map((b) => b.name).join(', ')}.` : ''),
      undefined,
      { reason: 'dpu_fingerprint', model_fingerprints: needs.fingerprints, fitting_boards: fitting },
    );
  }

  /** What an execute's `op.start` carries for the agent: the app to load first, the model's fingerprints. */
  async runNeeds(invocationId: number): Promise<RunNeeds> {
    return runNeedsOf(this.deps.db, invocationId);
  }
}
