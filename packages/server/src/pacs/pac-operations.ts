import { systemClock, type Clock, type PacRecord } from '@mm/protocol';
import { ApiError, GatewayTimeoutError } from '../errors.ts';
import type { BoardLinks } from '../agent-link/board-links.ts';
import { recordActivePac } from '../boards/board-store.ts';
import type { Db } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import { OperationFailure, type OperationHelpers, type OperationKindRegistry } from '../operations/kinds.ts';
import type { ArchiveUploads } from './archive-uploads.ts';
import { ActivateParams, InstallParams, type PacInstallAnswer, type PacQueryAnswer } from './pac-schemas.ts';

/**
 * The PAC operation kinds (docs/api.md, "PACs"), run on the server while they hold their
 * board's queue slot, so they wait for the board's other work and the other work waits for
 * them (above all for a reboot):
 *
 * - `pac_query`: `pac.query` on the agent; result `{ board_id, pacs, active }`.
 * - `pac_activate`: `pac.activate` (the agent refuses an unlisted name with `pac_not_found`
 *   before running anything, then runs `xlnx-config -a`), then the verified reboot: the
 *   board is marked `rebooting` before `board.reboot` is sent, and the run waits for it to
 *   say hello with another boot id, queries again and succeeds only if the PAC is active.
 *   Failures: `pac_not_found`, the agent's `xlnx_config_*` codes (message = the command's
 *   output), `reboot_failed` (the agent refused the reboot), `reboot_timeout` (not back
 *   within MM_REBOOT_TIMEOUT_S), `reboot_not_observed` (back, or still there, with the boot
 *   id it had), `pac_not_active` (back with another PAC, or none, active).
 * - `pac_install`: `pac.install` with an archive the route holds as an `upload` source; the
 *   agent pulls it, installs it safely and queries again; result `{ board_id, pac, pacs, active }`.
 *   A refused archive fails with `invalid_pac_archive` and the agent's reason.
 *
 * Each query's `active` is stored as the board's `active_pac`, and its whole list as the
 * board's last known PACs (`GET /api/boards/<id>/pacs/`, pacs/pac-lists.ts).
 */

/** The agent's own `xlnx-config -q` timeout is 30 s. */
const QUERY_TIMEOUT_MS = 60_000;
/** The agent's `xlnx-config -a` timeout is 300 s (bootgen, boot partition writes); plus its query. */
const ACTIVATE_TIMEOUT_MS = 360_000;
const REBOOT_REQUEST_TIMEOUT_MS = 30_000;
/** Installing: the transfer at a floor of 1 MiB/s, the extraction, a query. */
const installTimeoutMs = (size: number) => 120_000 + Math.ceil(size / (1024 * 1024)) * 1000;

const noProgress = (phase: string) => ({ phase, bytes_done: 0, bytes_total: 0 });

export interface PacKindDeps {
  db: Db;
  agents: BoardLinks;
  bus: EventBus;
  archives: ArchiveUploads;
  rebootTimeoutMs: number;
  /** When a list was taken (the board's `pacs_listed_at`); default the system clock. */
  clock?: Clock;
}

/** Registers `pac_query`, `pac_activate` and `pac_install` (see above). */
export function registerPacKinds(kinds: OperationKindRegistry, deps: PacKindDeps): void {
kinds.register('pac_query', {
  // A query changes nothing: safe to run again after a server restart.
  onServerRestart: 'requeue',
  async run(_op, h): Promise<PacQueryAnswer> {
    h.progress(noProgress('query'));
    const { pacs, active } = await query(deps, h);
    await h.log(describePacs(pacs, active));
    return { board_id: h.boardId, pacs, active };
  },
});

kinds.register('pac_activate', {
  async run(op, h) {
    const { pac } = ActivateParams.parse(op.params);

    h.progress(noProgress('activate'));
    await h.log(`activating ${pac} (xlnx-config -a)\n`);
    let activation;
    try {
      activation = await h.call('pac.activate', { pac }, { timeoutMs: ACTIVATE_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof ApiError) await h.log(`${agentMessage(err)}\n`, 'stderr');
      throw asOperationFailure(err);
    }
    if (activation.output) await h.log(activation.output.endsWith('\n') ? activation.output : `${activation.output}\n`, 'stdout');

    const { bootId, previousBootId } = await rebootAndWait(deps, h);
    await h.log(`the board is back (boot id ${previousBootId ?? 'unknown'} → ${bootId}); checking the active PAC\n`);

    h.progress(noProgress('verify'));
    const { pacs, active } = await query(deps, h);
    await h.log(describePacs(pacs, active));
    const state = { board_id: h.boardId, pac, active, pacs, boot_id: bootId, previous_boot_id: previousBootId };
    if (active !== pac) {
      throw new OperationFailure(
        'pac_not_active',
        `The board rebooted but reports ${active === null ? 'no PAC' : JSON.stringify(active)} active, not ${JSON.stringify(pac)}.`,
        state,
      );
    }
    return state;
  },
});

kinds.register('pac_install', {
  async run(op, h): Promise<PacInstallAnswer> {
    const params = InstallParams.parse(op.params);
    // A rollout's step (no upload id): the archive stays stored for the other boards; offered to this one for this run.
    const offered = params.upload_id === undefined ? deps.archives.offerStored(h.boardId, params.sha256) : undefined;
    const uploadId = params.upload_id ?? offered!.id;
    try {
      if (offered && !(await deps.archives.isStored(params.sha256))) {
        throw new OperationFailure('upload_gone', 'The server no longer holds the PAC archive; upload it again.');
      }
      if (!offered && !deps.archives.isHeld(uploadId)) {
        // Only after a server restart: the archive was not kept.
        throw new OperationFailure('upload_gone', 'The uploaded archive is no longer held by the server (it restarted); upload it again.');
      }
      h.progress({ phase: 'install', bytes_done: 0, bytes_total: params.size });
      await h.log(`installing ${params.filename} (${params.size} bytes)\n`);
      let installed;
      try {
        installed = await h.call('pac.install', { upload_id: uploadId }, { timeoutMs: installTimeoutMs(params.size) });
      } catch (err) {
        if (err instanceof ApiError) await h.log(`${agentMessage(err)}\n`, 'stderr');
        throw asOperationFailure(err);
      }
      h.progress({ phase: 'install', bytes_done: params.size, bytes_total: params.size });
      await recordActivePac(deps.db, h.boardId, installed.active, { pacs: installed.pacs, at: new Date((deps.clock ?? systemClock).now()) });
      await h.log(`installed ${installed.pac}\n${describePacs(installed.pacs, installed.active)}`);
      return { board_id: h.boardId, pac: installed.pac, pacs: installed.pacs, active: installed.active };
    } finally {
      if (offered) offered.release();
      else await deps.archives.release(uploadId);
    }
  },
});
}

/** `pac.query` on the board; its `active` becomes the board's `active_pac`. */
async function query(deps: PacKindDeps, h: OperationHelpers): Promise<{ pacs: PacRecord[]; active: string | null }> {
  try {
    const answer = await h.call('pac.query', {}, { timeoutMs: QUERY_TIMEOUT_MS });
    await recordActivePac(deps.db, h.boardId, answer.active, { pacs: answer.pacs, at: new Date((deps.clock ?? systemClock).now()) });
    return answer;
  } catch (err) {
    if (err instanceof ApiError) await h.log(`${agentMessage(err)}\n`, 'stderr');
    throw asOperationFailure(err);
  }
}

/**
 * The verified reboot: `rebooting` first (the hub holds the board's queue and watches for a
 * hello with another boot id), then `board.reboot`, then the wait. A hello with the old boot
 * id means the board did not reboot: the wait ends at once with `reboot_not_observed`.
 */
async function rebootAndWait(deps: PacKindDeps, h: OperationHelpers): Promise<{ bootId: string; previousBootId: string | null }> {
  const { agents, rebootTimeoutMs } = deps;
  const { boardId } = h;
  const previousBootId = agents.liveBootId(boardId);
  h.progress(noProgress('reboot'));
  const { back } = h.expectReboot();

  const stopWatching = deps.bus.subscribe('board.status', boardId, ({ status, bootId }) => {
    // The note carries the boot id of the hello: the board may have come back through another
    // replica, where this one has no link to read it from.
    const seen = bootId ?? agents.liveBootId(boardId);
    if (status !== 'online' || previousBootId === null || seen !== previousBootId) return;
    agents.endRebootWait(
      boardId,
      new OperationFailure('reboot_not_observed', `The board reconnected with the boot id it had (${previousBootId}): it did not reboot.`),
    );
  });
  try {
    if (h.signal.aborted) {
      // Cancelled before anything was sent: the board is not rebooting after all.
      agents.endRebootWait(boardId, new Error('cancelled before the reboot'));
      throw h.signal.reason instanceof Error ? h.signal.reason : new Error('cancelled');
    }
    await h.log('rebooting the board\n');
    try {
      await h.call('board.reboot', {}, { timeoutMs: REBOOT_REQUEST_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof ApiError && err.status === 502) {
        // The agent answered, and refused: nothing will reboot.
        agents.endRebootWait(boardId, err);
        await h.log(`${agentMessage(err)}\n`, 'stderr');
        throw new OperationFailure('reboot_failed', `The board did not accept the reboot: ${agentMessage(err)}`);
      }
      if (!(err instanceof ApiError)) throw err; // cancelled: the board may be going down, the wait stays
      // No answer, or the link dropped first: the board may well be going down. Wait for it.
      await h.log(`no answer to the reboot request (${err.code}); waiting for the board\n`);
    }
    await h.log(`waiting for the board to come back (at most ${Math.round(rebootTimeoutMs / 1000)} s)\n`);
    const { bootId } = await back;
    return { bootId, previousBootId };
  } catch (err) {
    // Still connected with the old boot id when the wait timed out: it never went down.
    if (err instanceof GatewayTimeoutError && previousBootId !== null && agents.liveBootId(boardId) === previousBootId) {
      throw new OperationFailure('reboot_not_observed', `The board did not reboot within ${Math.round(rebootTimeoutMs / 1000)} s: it is still connected with the boot id it had (${previousBootId}).`);
    }
    throw err;
  } finally {
    stopWatching();
  }
}

/** Errors the agent answered with keep their code; the message loses the `method: ` prefix. */
function asOperationFailure(err: unknown): unknown {
  if (err instanceof ApiError && err.status === 502 && err.code !== 'bad_agent_response') {
    return new OperationFailure(err.code, agentMessage(err));
  }
  return err;
}

/** An RPC error's message without the `pac.install: ` prefix the hub puts in front. */
function agentMessage(err: ApiError): string {
  return err.message.replace(/^(?:pac\.\w+|board\.reboot): /, '');
}

/** The query as log lines: `* name (board: assets)` for the active one. */
export function describePacs(pacs: PacRecord[], active: string | null): string {
  if (pacs.length === 0) return 'no PAC configurations on the board\n';
  const lines = pacs.map((p) => `${p.active ? '*' : ' '} ${p.name}  (${p.board}: ${p.assets_dir})`);
  lines.push(active === null ? 'no PAC is active' : `active: ${active}`);
  return `${lines.join('\n')}\n`;
}
