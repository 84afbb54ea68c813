import { z } from 'zod';
import type { ScriptState } from '@mm/protocol';
import type { AgentHub } from '../agent-link/hub.ts';
import type { UploadRegistry } from '../agent-link/uploads.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { OperationFailure, type OperationKindRegistry } from '../operations/kinds.ts';
import { getDeviceScript } from './script-catalogue.ts';
import { recordBoardScripts, scriptProgramOf } from './device-script-programs.ts';
import { remoteDirRefusal } from './remote-dir.ts';

export { isInsideRoot, remoteDirRefusal } from './remote-dir.ts';

/** The operation kinds of device scripts on a board (docs/device-scripts.md). */
export const SCRIPT_CONTROL_KINDS = { start: 'script_start', stop: 'script_stop', restart: 'script_restart' } as const;
export type ScriptAction = keyof typeof SCRIPT_CONTROL_KINDS;

export const ScriptOperationParams = z.object({ script_id: z.string().uuid() });

/** Receiving the program and waiting for its port: the transfer gets this on top of the health timeout. */
const TRANSFER_ALLOWANCE_MS = 120_000;

export interface ScriptOperationDeps {
  db: Db;
  hub: AgentHub;
  uploads: UploadRegistry;
  healthTimeoutS: number;
  /** MM_SCRIPT_STABLE_S: after answering, the script must stay up this long (no exit, no restart). */
  stableS?: number;
  log: Logger;
}

/**
 * Registers `script_deploy`, `script_start`, `script_stop` and `script_restart`: each holds
 * the board's queue slot and makes one `script.*` call over the board's link; the program
 * travels by sha256 as an upload the agent pulls unless its cache holds it. Also stores the
 * script states the agents report (in their hello and in `scripts.state`).
 */
export function registerScriptOperations(kinds: OperationKindRegistry, deps: ScriptOperationDeps): void {
  const healthTimeoutMs = deps.healthTimeoutS * 1000;
  const stableS = deps.stableS ?? 0;
  // The board holds the call this much longer while it watches the script stay up.
  const callTimeoutMs = (extraMs: number) => healthTimeoutMs * 2 + stableS * 2000 + extraMs;

  // The board's device scripts as it runs them (an older agent sends none in its hello: what is stored stays).
  deps.hub.handleHellos(async (conn, hello) => {
    if (!hello.scripts) return;
    await recordBoardScripts(deps.db, conn.boardId, hello.scripts).catch((err: unknown) => conn.log.warn({ err }, "could not record the board's scripts"));
  });
  deps.hub.handleMessages(['scripts.state'], (conn, message) => {
    if (message.type !== 'scripts.state') return;
    recordBoardScripts(deps.db, conn.boardId, message.scripts).catch((err: unknown) => conn.log.warn({ err }, "could not record the board's scripts"));
  });

  kinds.register('script_deploy', {
    async run(op, h) {
      const { script_id } = ScriptOperationParams.parse(op.params);
      const script = await getDeviceScript(deps.db, script_id);
      const program = await scriptProgramOf(deps.db, script_id, script.version);
      if (!program) {
        throw new OperationFailure('script_program_not_found', `${script.name} has no program for version ${script.version}: upload one first (PUT /api/device-scripts/${script_id}/file/).`);
      }
      h.progress({ phase: 'check', bytes_done: 0, bytes_total: program.size });
      const info = await h.call('agent.info', {});
      const refusal = remoteDirRefusal(script.remote_dir, info.scripts_root);
      if (refusal) throw new OperationFailure('script_dir_refused', refusal);
      await h.log(`deploying ${script.name} ${script.version} (${program.size} bytes, sha256 ${program.sha256}) to ${script.remote_dir}/${script.script_filename}, port ${script.port}\n`);
      h.progress({ phase: 'deploy', bytes_done: 0, bytes_total: program.size });
      const handle = deps.uploads.registerBlob(program.sha256, { boardId: h.boardId });
      try {
        const r = await h.call(
          'script.deploy',
          {
            script_id,
            name: script.name,
            version: script.version,
            filename: script.script_filename,
            remote_dir: script.remote_dir,
            port: script.port,
            sha256: program.sha256,
            size: program.size,
            upload_id: handle.id,
            health_timeout_s: deps.healthTimeoutS,
            ...(stableS > 0 ? { stable_s: stableS } : {}),
          },
          { timeoutMs: callTimeoutMs(TRANSFER_ALLOWANCE_MS) },
        );
        await h.log(`${r.pulled ? 'sent the program' : 'the board held the program already'}; ${script.name} ${r.script.version} is ${r.script.state} on port ${r.script.port}\n`);
        h.progress({ phase: 'done', bytes_done: program.size, bytes_total: program.size });
        return { board_id: h.boardId, script_id, version: script.version, path: r.path, previous_version: r.previous_version, state: r.script };
      } catch (err) {
        await h.log(`deploy failed: ${err instanceof Error ? err.message : String(err)}\n`, 'stderr');
        throw err;
      } finally {
        handle.release();
      }
    },
  });

  for (const [action, kind] of Object.entries(SCRIPT_CONTROL_KINDS) as Array<[ScriptAction, string]>) {
    kinds.register(kind, {
      async run(op, h) {
        const { script_id } = ScriptOperationParams.parse(op.params);
        const r = await h.call(
          'script.control',
          { script_id, action, health_timeout_s: deps.healthTimeoutS, ...(stableS > 0 ? { stable_s: stableS } : {}) },
          { timeoutMs: callTimeoutMs(30_000) },
        );
        await h.log(`${action}: ${r.script.name} ${r.script.version} is ${r.script.state}\n`);
        return { board_id: h.boardId, script_id, state: r.script satisfies ScriptState };
      },
    });
  }
}
