import { z } from '@hono/zod-openapi';
import type { AppList, AppRecord, DpuFacts } from '@mm/protocol';
import type { Db } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { OperationFailure, type OperationHelpers, type OperationKindRegistry } from '../operations/kinds.ts';
import type { ArchiveUploads } from '../pacs/archive-uploads.ts';
import { recordAccelerator } from '../accelerators/accelerator-facts.ts';
import type { BoardApps } from '../accelerators/accelerator-schemas.ts';

/**
 * The app operation kinds (docs/accelerators.md), run on the server while they hold their
 * board's queue slot (they wait for the board's other work, and it waits for them):
 *
 * - `app_query`: `app.query` on the agent; result `{ board_id, apps, active, dpu, vai_version, vart_target, reported_at }`.
 * - `app_load`: `app.load` (the agent unloads what holds the slot, loads, verifies by the
 *   listing, xdputil and vart.conf); fails with the agent's code (`app_not_found`,
 *   `no_empty_slot`, `app_load_failed`, `app_load_timeout`) and the tools' output in its log
 *   and message.
 * - `app_unload`: `app.unload`.
 * - `app_install`: `app.install` with an archive the route (or a rollout) holds as an `upload`
 *   source; a refused archive fails with `invalid_app_archive` and the agent's reason.
 *
 * Each answer's accelerator facts are stored as the board's (`facts.accelerator`, the `mm/`
 * labels) at once, before the agent's own `board.facts` follows.
 */

/** The agent's load bound is MM_APP_LOAD_TIMEOUT_S (60 s by default) per step; an unload, a load and the checks. */
const LOAD_TIMEOUT_MS = 15 * 60_000;
const QUERY_TIMEOUT_MS = 60_000;
/** Installing: the transfer at a floor of 1 MiB/s, the extraction, the wait for the listing. */
const installTimeoutMs = (size: number) => 120_000 + Math.ceil(size / (1024 * 1024)) * 1000;

export const AppLoadParams = z.object({ app: z.string().min(1).max(200) });
export const AppInstallParams = z.object({
  /** Absent for a rollout's step: the run offers the stored archive (`sha256`) to its board itself. */
  upload_id: z.string().min(1).optional(),
  sha256: z.string(),
  size: z.number().int().nonnegative(),
  filename: z.string(),
});

const noProgress = (phase: string) => ({ phase, bytes_done: 0, bytes_total: 0 });

export interface AppKindDeps {
  db: Db;
  archives: ArchiveUploads;
}

/** The board's apps as an operation's result and `GET /api/boards/<id>/apps/` show them. */
export function boardAppsOf(boardId: string, list: Pick<AppList, 'apps' | 'active' | 'accelerator'>, reportedAt: string | null): BoardApps {
  return {
    board_id: boardId,
    apps: list.apps,
    active: list.active,
    dpu: list.accelerator.dpu ?? null,
    vai_version: list.accelerator.vai_version ?? null,
    vart_target: list.accelerator.vart_target ?? null,
    reported_at: reportedAt,
  };
}

export function registerAppKinds(kinds: OperationKindRegistry, deps: AppKindDeps): void {
  kinds.register('app_query', {
    // A query changes nothing: safe to run again after a server restart.
    onServerRestart: 'requeue',
    async run(_op, h): Promise<BoardApps> {
      h.progress(noProgress('query'));
      const list = await call(h, () => h.call('app.query', {}, { timeoutMs: QUERY_TIMEOUT_MS }));
      await recordAccelerator(deps.db, h.boardId, list.accelerator);
      await h.log(describeApps(list.apps, list.accelerator.dpu));
      return boardAppsOf(h.boardId, list, new Date().toISOString());
    },
  });

  kinds.register('app_load', {
    async run(op, h) {
      const { app } = AppLoadParams.parse(op.params);
      h.progress(noProgress('load'));
      await h.log(`loading ${app}\n`);
      const answer = await call(h, () => h.call('app.load', { app }, { timeoutMs: LOAD_TIMEOUT_MS }));
      if (answer.output) await h.log(answer.output.endsWith('\n') ? answer.output : `${answer.output}\n`, 'agent');
      await recordAccelerator(deps.db, h.boardId, answer.accelerator);
      await h.log(describeApps(answer.apps, answer.dpu));
      return {
        ...boardAppsOf(h.boardId, answer, new Date().toISOString()),
        app: answer.app,
        loaded: answer.loaded,
        slot: answer.slot,
        unloaded: answer.unloaded,
      };
    },
  });

  kinds.register('app_unload', {
    async run(_op, h) {
      h.progress(noProgress('unload'));
      const answer = await call(h, () => h.call('app.unload', {}, { timeoutMs: LOAD_TIMEOUT_MS }));
      if (answer.output) await h.log(answer.output.endsWith('\n') ? answer.output : `${answer.output}\n`, 'agent');
      await recordAccelerator(deps.db, h.boardId, answer.accelerator);
      await h.log(describeApps(answer.apps, answer.accelerator.dpu));
      return { ...boardAppsOf(h.boardId, answer, new Date().toISOString()), unloaded: answer.unloaded };
    },
  });

  kinds.register('app_install', {
    async run(op, h) {
      const params = AppInstallParams.parse(op.params);
      // A rollout's step (no upload id): the archive stays stored for the other boards; offered to this one for this run.
      const offered = params.upload_id === undefined ? deps.archives.offerStored(h.boardId, params.sha256) : undefined;
      const uploadId = params.upload_id ?? offered!.id;
      try {
        if (offered && !(await deps.archives.isStored(params.sha256))) {
          throw new OperationFailure('upload_gone', 'The server no longer holds the app archive; upload it again.');
        }
        if (!offered && !deps.archives.isHeld(uploadId)) {
          throw new OperationFailure('upload_gone', 'The uploaded archive is no longer held by the server (it restarted); upload it again.');
        }
        h.progress({ phase: 'install', bytes_done: 0, bytes_total: params.size });
        await h.log(`installing ${params.filename} (${params.size} bytes)\n`);
        const answer = await call(h, () => h.call('app.install', { upload_id: uploadId }, { timeoutMs: installTimeoutMs(params.size) }));
        h.progress({ phase: 'install', bytes_done: params.size, bytes_total: params.size });
        await recordAccelerator(deps.db, h.boardId, answer.accelerator);
        await h.log(
          `installed ${answer.app} (${answer.shell_type}, ${answer.files} files, ${answer.bytes} bytes)${answer.replaced ? ', replacing the one there' : ''}\n` +
            (answer.listed ? '' : 'the board does not list it yet (dfx-mgrd may not have noticed it; is it running?)\n') +
            describeApps(answer.apps, answer.accelerator.dpu),
        );
        return { ...boardAppsOf(h.boardId, answer, new Date().toISOString()), app: answer.app, files: answer.files, bytes: answer.bytes, shell_type: answer.shell_type, listed: answer.listed, replaced: answer.replaced };
      } finally {
        if (offered) offered.release();
        else await deps.archives.release(uploadId);
      }
    },
  });
}

/** An RPC whose failure the agent answered: logged, and the operation fails with the agent's code. */
async function call<T>(h: OperationHelpers, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError && err.status === 502 && err.code !== 'bad_agent_response') {
      const message = err.message.replace(/^app\.\w+: /, '');
      await h.log(`${message}\n`, 'stderr');
      throw new OperationFailure(err.code, message);
    }
    throw err;
  }
}

/** The listing as log lines: `* name (type, slot 0)` for the active one. */
export function describeApps(apps: AppRecord[], dpu: DpuFacts | null | undefined): string {
  if (apps.length === 0) return 'the board lists no apps\n';
  const lines = apps.map((a) => `${a.active ? '*' : ' '} ${a.name}  (${a.type}${a.active ? `, slot ${a.slot ?? 0}` : ''}${a.dpu_fingerprint ? `, DPU ${a.dpu_fingerprint}` : ''})`);
  lines.push(dpu ? `DPU: ${dpu.arch} ${dpu.fingerprint}` : 'DPU: none reported');
  return `${lines.join('\n')}\n`;
}
