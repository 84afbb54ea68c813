import { requireDeployable } from '../device-scripts/device-script-programs.ts';
import { z } from '@hono/zod-openapi';
import type { Clock } from '@mm/protocol';
import { ForbiddenError } from '../auth/errors.ts';
import { currentActor, requestAuth } from '../auth/request-auth.ts';
import { roleAllows } from '../auth/roles.ts';
import type { BoardLinks } from '../agent-link/board-links.ts';
import { DownloadsFolder } from '../downloads/downloads-folder.ts';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { OperationKindRegistry } from '../operations/kinds.ts';
import type { OperationObject } from '../operations/operation-object.ts';
import type { Operations } from '../operations/operations.ts';
import { PacName } from '../pacs/pac-schemas.ts';
import { requireInvocation } from '../invocations/invocations.ts';
import { recordContent } from '../invocations/invocation-files.ts';
import type { StoreContext } from '../store-context.ts';
import { RolloutEngine } from './rollout-engine.ts';
import { pgRolloutEngineStore } from './rollout-store.ts';
import { appRolloutStep, checkAppRolloutParams } from '../accelerators/app-rollouts.ts';
import { isRolloutClosed, toRolloutObject, type RolloutCreate, type RolloutObject, type RolloutRow, type RolloutStatus } from './rollout-object.ts';
import {
  boardRowsOf,
  changeStatus,
  findRolloutRow,
  insertRollout,
  listRolloutRows,
  matchingBoards,
  queuedStepOperations,
  rolloutKindOfStep,
  skipPending,
  reservedForOthers,
} from './rollout-store.ts';

export interface RolloutsDeps extends StoreContext {
  operations: Operations;
  kinds: OperationKindRegistry;
  agents: BoardLinks;
  bus: EventBus;
  clock: Clock;
  /** `power_cycle` steps (power/): started at once, not queued behind the board's work. */
  power?: { cycle(boardId: string): Promise<OperationObject> };
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 (64 lower-case hex digits)');

/** Rollouts that change boards (every kind but `execute`) are an admin's to create and steer. */
function requireAdminFor(kind: string): void {
  if (kind === 'execute') return;
  const role = requestAuth().principal.role;
  if (!roleAllows(role, 'admin')) throw new ForbiddenError(`A ${kind} rollout needs the admin role; you are ${role === 'admin' ? 'an' : 'a'} ${role}.`);
}

export const rolloutNotFound = (id: unknown) => new NotFoundError('rollout_not_found', `No rollout with id ${String(id)}.`);

/**
 * Rollouts (docs/rollouts.md): create (the matching boards fixed at creation), read, pause,
 * resume, cancel; the engine (rollout-engine.ts) moves them on.
 */
export class Rollouts {
  readonly engine: RolloutEngine;
  private readonly downloads: DownloadsFolder;

  constructor(private readonly ctx: RolloutsDeps) {
    this.downloads = new DownloadsFolder(ctx.config.packagesDir);
    this.engine = new RolloutEngine({
      store: pgRolloutEngineStore(ctx.database.db),
      bus: ctx.bus,
      clock: ctx.clock,
      log: ctx.log.child({ component: 'rollouts' }),
      replicaId: ctx.agents.replicaId,
      isReplicaAlive: (r) => ctx.agents.isReplicaAlive(r),
      createStep: (rollout, boardId) => this.createStep(rollout, boardId),
      reservedForOthers: (boardId, user) => reservedForOthers(ctx.database.db, boardId, user, new Date(ctx.clock.now())),
    });
  }

  start(): void {
    this.engine.start();
  }

  stop(): Promise<void> {
    return this.engine.stop();
  }

  /** One board's step: an ordinary operation named to the board, as the kind's single-board route makes it. */
  private createStep(rollout: RolloutRow, boardId: string) {
    const p = rollout.params;
    // The rollout's creator asks for each step: a board they hold runs it (docs/reservations.md).
    const operations = { create: (input: Parameters<Operations['create']>[0]) => this.ctx.operations.create({ ...input, createdBy: rollout.createdBy }) };
    switch (rollout.kind) {
      case 'execute':
        return operations.create({ kind: 'execute', boardId, invocationId: rollout.invocationId, params: repeatsOf(p) });
      case 'pac_activate':
        return operations.create({ kind: 'pac_activate', boardId, params: { pac: p.pac } });
      case 'pac_install':
        // No upload id: the run offers the stored archive to its board itself (pacs/pac-operations.ts).
        return operations.create({ kind: 'pac_install', boardId, params: { sha256: p.archive_sha256, size: p.size, filename: p.filename } });
      case 'agent_update':
        return operations.create({ kind: 'agent_update', boardId, params: { version: p.version } });
      case 'script_deploy':
        return operations.create({ kind: 'script_deploy', boardId, params: { script_id: p.script_id } });
      case 'app_install':
      case 'app_load':
        return operations.create(appRolloutStep(rollout.kind, p, boardId));
      case 'power_cycle':
        // A board without power settings fails its step `power_not_configured`; no command goes out.
        if (!this.ctx.power) throw new Error('no power service');
        return this.ctx.power.cycle(boardId);
      default:
        throw new Error(`unknown rollout kind ${rollout.kind}`);
    }
  }

  /** Checks the request for its kind; answers the params to store. */
  private async checkKind(input: RolloutCreate): Promise<Record<string, unknown>> {
    const params = input.params ?? {};
    const field = (name: string, message: string) => new ValidationError([{ field: `params.${name}`, message }]);
    if (input.kind !== 'execute' && (input.repeat !== undefined || input.warmup !== undefined)) {
      throw new ValidationError([{ field: input.repeat !== undefined ? 'repeat' : 'warmup', message: 'only for execute rollouts' }]);
    }
    if (input.kind !== 'execute') {
      requireAdminFor(input.kind);
      if (input.invocation_id !== undefined) throw new ValidationError([{ field: 'invocation_id', message: `only for execute rollouts` }]);
    }
    switch (input.kind) {
      case 'execute': {
        if (input.invocation_id === undefined) throw new ValidationError([{ field: 'invocation_id', message: 'required for an execute rollout' }]);
        await requireInvocation(this.ctx, input.invocation_id);
        // Repeats of each board's run (docs/results.md): in the rollout's params, handed to each execute.
        return { ...(input.repeat !== undefined && input.repeat !== 1 ? { repeat: input.repeat } : {}), ...(input.warmup ? { warmup: input.warmup } : {}) };
      }
      case 'pac_activate': {
        const pac = PacName.safeParse(params.pac);
        if (!pac.success) throw field('pac', 'required: the name of the PAC to activate');
        return { pac: pac.data };
      }
      case 'pac_install': {
        const sha = Sha256.safeParse(params.archive_sha256);
        if (!sha.success) throw field('archive_sha256', 'required: the sha256 of the PAC archive (.tar or .tar.gz)');
        // Pinned until the rollout row refers to it (create releases it): no sweep takes it meanwhile.
        const pinned = await this.ctx.files.pin(sha.data);
        const stat = pinned ? await this.ctx.files.stat(sha.data) : undefined;
        if (!stat) {
          if (pinned) this.ctx.files.release(sha.data);
          throw new NotFoundError('content_not_found', `The server holds no content with sha256 ${sha.data}: upload the archive first (POST /api/uploads/ with that sha256).`);
        }
        const filename = typeof params.filename === 'string' && params.filename.length > 0 && params.filename.length <= 255 ? params.filename : `${sha.data.slice(0, 12)}.tar.gz`;
        return { archive_sha256: sha.data, size: stat.size, filename };
      }
      case 'agent_update': {
        if (params.version !== undefined && (typeof params.version !== 'string' || params.version.length === 0 || params.version.length > 64)) {
          throw field('version', 'a version the control plane serves');
        }
        const files = await this.downloads.list();
        const served = [...new Set(files.filter((f) => f.kind === 'agent_package').map((f) => f.version!))];
        const version = (params.version as string | undefined) ?? served[0];
        if (!version || !served.includes(version)) {
          throw new NotFoundError('agent_version_not_found', `The control plane holds no agent package of version ${version ?? '(any)'} (it serves ${served.join(', ') || 'none'}).`);
        }
        return { version };
      }
      case 'script_deploy': {
        if (!this.ctx.kinds.isKnown('script_deploy')) {
          throw new BadRequestError('kind_not_supported', 'This control plane cannot deploy device scripts yet (no script_deploy operation kind).');
        }
        const id = z.string().uuid().safeParse(params.script_id);
        if (!id.success) throw field('script_id', 'required: the device script id (UUID)');
        // The same checks as a deploy to one board: the entry, its folder, its program.
        await requireDeployable(this.ctx.database.db, id.data);
        return { script_id: id.data };
      }
      case 'app_install':
      case 'app_load':
        return checkAppRolloutParams(input.kind, params, this.ctx.files);
      case 'power_cycle':
        return {};
    }
  }

  async create(input: RolloutCreate): Promise<RolloutObject> {
    const params = await this.checkKind(input);
    const archive = input.kind === 'pac_install' || input.kind === 'app_install' ? (params as { archive_sha256: string; size: number }) : undefined;
    if (!archive) return this.insert(input, params);
    // The archive (uploaded on its own, or some invocation's file) is recorded so the orphan
    // sweep leaves it; from then on the rollout row keeps it (invocations/invocation-files.ts).
    try {
      await recordContent(this.ctx, archive.archive_sha256, archive.size);
      return await this.insert(input, params);
    } finally {
      // A refused rollout leaves the row unreferenced: the next retention sweep takes it, so
      // a corrected request meanwhile needs no second upload.
      this.ctx.files.release(archive.archive_sha256);
    }
  }

  private async insert(input: RolloutCreate, params: Record<string, unknown>): Promise<RolloutObject> {
    const include = { maintenance: input.include_maintenance ?? false, bad: input.include_bad ?? false };
    const { members, leftOut } = await matchingBoards(this.ctx.database.db, input.board_selector, include);
    if (members.length === 0) {
      const held = leftOut.length
        ? ` ${leftOut.length} matching board${leftOut.length === 1 ? ' is' : 's are'} held (${leftOut.map((b) => `${b.board_name}: ${b.reason}`).join(', ')}); include them with ${[...new Set(leftOut.map((b) => (b.reason === 'bad' ? '`include_bad: true`' : '`include_maintenance: true`')))].join(' and ')}.`
        : '';
      throw new BadRequestError('no_matching_board', `No registered board matches the selector ${JSON.stringify(input.board_selector)}.${held}`);
    }
    const row = await insertRollout(
      this.ctx.database.db,
      {
        kind: input.kind,
        boardSelector: input.board_selector,
        invocationId: input.invocation_id ?? null,
        params,
        batchSize: input.batch_size ?? null,
        batchIntervalS: input.batch_interval_s ?? 0,
        abort: input.abort ?? null,
        createdBy: currentActor(),
        leftOut,
      },
      members,
    );
    this.ctx.log.info({ rollout_id: row.id, kind: row.kind, boards: members.length, left_out: leftOut.length }, 'rollout created');
    // The first phase starts before the answer, so it shows its steps queued.
    this.engine.kick(row.id);
    await this.engine.settled(row.id);
    return this.require(row.id);
  }

  async get(id: number): Promise<RolloutObject | undefined> {
    const row = await findRolloutRow(this.ctx.database.db, id);
    if (!row) return undefined;
    return toRolloutObject(row, (await boardRowsOf(this.ctx.database.db, [id])).get(id) ?? []);
  }

  async require(id: number): Promise<RolloutObject> {
    const r = await this.get(id);
    if (!r) throw rolloutNotFound(id);
    return r;
  }

  async list(filters: { status?: RolloutStatus | undefined; kind?: string | undefined }, page: { limit: number; offset: number }) {
    const { rows, total } = await listRolloutRows(this.ctx.database.db, filters, page);
    const boards = await boardRowsOf(this.ctx.database.db, rows.map((r) => r.id));
    return { rollouts: rows.map((r) => toRolloutObject(r, boards.get(r.id) ?? [])), total };
  }

  /** The output video one board's `execute` step produced (kept per board, invocations/invocation-files.ts). */
  async outputOf(id: number, boardId: string): Promise<{ sha256: string; size: number; filename: string; contentType: string; at: Date }> {
    const rollout = await this.require(id);
    const step = rollout.boards.find((b) => b.board_id === boardId);
    if (!step) throw new NotFoundError('board_not_in_rollout', `Board ${boardId} is not one of rollout ${id}'s boards.`);
    const op = step.operation_id === null ? undefined : await this.ctx.operations.get(step.operation_id);
    const video = (op?.result as { output_video?: { sha256?: unknown; size?: unknown; filename?: unknown; content_type?: unknown } } | null)?.output_video;
    if (!op || rollout.kind !== 'execute' || !video || typeof video.sha256 !== 'string' || typeof video.size !== 'number' || !(await this.ctx.files.has(video.sha256))) {
      throw new NotFoundError('output_not_found', `Board ${boardId} has no output video in rollout ${id}.`);
    }
    return {
      sha256: video.sha256,
      size: video.size,
      filename: typeof video.filename === 'string' ? video.filename : 'output.mp4',
      contentType: typeof video.content_type === 'string' ? video.content_type : 'video/mp4',
      at: new Date(op.finished_at ?? op.created_at),
    };
  }

  /** Holds the next phase (steps already started go on). */
  async pause(id: number): Promise<RolloutObject> {
    await this.move(id, ['running'], 'paused');
    return this.require(id);
  }

  async resume(id: number): Promise<RolloutObject> {
    await this.move(id, ['paused'], 'running');
    this.engine.kick(id);
    await this.engine.settled(id);
    return this.require(id);
  }

  /** Steps not started are skipped, queued step operations cancelled; running ones finish. */
  async cancel(id: number): Promise<RolloutObject> {
    await this.move(id, ['running', 'paused'], 'cancelled');
    const db = this.ctx.database.db;
    await skipPending(db, id, new Date(this.ctx.clock.now()));
    for (const opId of await queuedStepOperations(db, id)) {
      try {
        await this.ctx.operations.cancel(opId);
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    this.engine.kick(id);
    await this.engine.settled(id);
    return this.require(id);
  }

  /**
   * A rollout's step is cancelled with the rights its rollout needs (issue 46): an operator
   * could otherwise cancel an admin's PAC rollout one `POST /api/operations/<id>/cancel/` at
   * a time, though the rollout's own pause and cancel refuse it.
   */
  async requireStepCancelRights(operationId: number): Promise<void> {
    const kind = await rolloutKindOfStep(this.ctx.database.db, operationId);
    if (kind !== undefined) requireAdminFor(kind);
  }

  private async move(id: number, from: RolloutStatus[], to: RolloutStatus): Promise<void> {
    const db = this.ctx.database.db;
    const current = await findRolloutRow(db, id);
    if (!current) throw rolloutNotFound(id);
    requireAdminFor(current.kind);
    const moved = await changeStatus(db, id, from, to);
    if (moved) {
      this.ctx.bus.publish('rollout.changed', id, { rolloutId: id });
      return;
    }
    const row = await findRolloutRow(db, id);
    if (!row) throw rolloutNotFound(id);
    if (isRolloutClosed(row.status)) throw new ConflictError('rollout_finished', `Rollout ${id} has ended (${row.status}).`);
    throw new ConflictError(to === 'running' ? 'rollout_not_paused' : 'rollout_not_running', `Rollout ${id} is ${row.status}.`);
  }
}

/** `repeat`/`warmup` of an execute rollout's params, for each board's execute. */
function repeatsOf(p: Record<string, unknown>): Record<string, unknown> {
  return { ...(typeof p.repeat === 'number' ? { repeat: p.repeat } : {}), ...(typeof p.warmup === 'number' ? { warmup: p.warmup } : {}) };
}
