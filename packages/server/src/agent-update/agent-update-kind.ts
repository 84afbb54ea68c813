import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { BoardLinks } from '../agent-link/board-links.ts';
import { findBoard } from '../agent-link/board-store.ts';
import type { UploadRegistry } from '../agent-link/uploads.ts';
import type { Db } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { DownloadsFolder } from '../downloads/downloads-folder.ts';
import { OperationFailure, type OperationKindRegistry } from '../operations/kinds.ts';

export const AgentUpdateParams = z.object({ version: z.string().min(1) });

/** Receiving and unpacking the package: generous for a 35 MiB package on a slow link. */
const INSTALL_CALL_TIMEOUT_MS = 600_000;
/** How often the run looks at the board's row and presence while it restarts. */
const POLL_MS = 500;
/**
 * The board's own deadline is the timeout; the server waits this much longer for the
 * board to be back with one version or the other (the watchdog's rollback and restart).
 */
const ROLLBACK_GRACE_MS = 60_000;

export interface AgentUpdateDeps {
  db: Db;
  agents: BoardLinks;
  uploads: UploadRegistry;
  packagesDir: string;
  timeoutMs: number;
}

/**
 * `agent_update` (docs/packages.md): holds the board's queue slot (so it starts after the
 * running operation and nothing starts during it), offers the package of the board's
 * architecture as an upload, has the agent install it beside the running version and switch
 * (`agent.update`), then waits for the board to say hello again: with the new version it
 * succeeded; with the old one (the start script's watchdog switched back), or not at all
 * within the timeout and grace, it fails `update_rolled_back`.
 */
export function registerAgentUpdateKind(kinds: OperationKindRegistry, deps: AgentUpdateDeps): void {
  const folder = new DownloadsFolder(deps.packagesDir);
  kinds.register('agent_update', {
    async run(op, h) {
      const { version } = AgentUpdateParams.parse(op.params);
      h.progress({ phase: 'check', bytes_done: 0, bytes_total: 0 });
      const info = await h.call('agent.info', {});
      const arch = info.arch ?? 'amd64';
      if (info.agent_version === version) {
        await h.log(`the board already runs ${version}\n`);
        return { board_id: h.boardId, version, previous_version: version };
      }
      const pkg = await folder.agentPackage(version, arch);
      if (!pkg) throw new OperationFailure('agent_package_not_found', `The control plane holds no ${arch} agent package of version ${version} (in MM_PACKAGES_DIR).`);
      await h.log(`updating the agent from ${info.agent_version} to ${version}: sending ${pkg.name} (${pkg.size} bytes, sha256 ${pkg.sha256})\n`);
      h.progress({ phase: 'install', bytes_done: 0, bytes_total: pkg.size });
      const before = (await findBoard(deps.db, h.boardId))?.connectedAt?.getTime() ?? 0;
      const handle = deps.uploads.register(pkg.path, { boardId: h.boardId });
      try {
        await h.call('agent.update', { upload_id: handle.id, version, sha256: pkg.sha256, confirm_within_s: Math.ceil(deps.timeoutMs / 1000) }, { timeoutMs: INSTALL_CALL_TIMEOUT_MS });
      } catch (err) {
        if (err instanceof ApiError) await h.log(`the agent refused the update: ${err.message}\n`, 'stderr');
        throw err;
      } finally {
        handle.release();
      }
      await h.log('installed beside the running version and switched; waiting for the board to reconnect\n');
      h.progress({ phase: 'restart', bytes_done: pkg.size, bytes_total: pkg.size });
      const deadline = Date.now() + deps.timeoutMs + ROLLBACK_GRACE_MS;
      while (Date.now() < deadline) {
        await sleep(POLL_MS, undefined, { signal: h.signal });
        const row = await findBoard(deps.db, h.boardId);
        if (!row) throw new OperationFailure('board_not_found', 'The board was deleted during the update.');
        const presence = (await deps.agents.presenceOf([h.boardId])).get(h.boardId) ?? deps.agents.presence(h.boardId);
        if (presence.status !== 'online' || (row.connectedAt?.getTime() ?? 0) <= before) continue;
        if (row.agentVersion === version) {
          await h.log(`the board reconnected with ${version}\n`);
          return { board_id: h.boardId, version, previous_version: info.agent_version };
        }
        throw new OperationFailure(
          'update_rolled_back',
          `Version ${version} did not come up on the board (it exited or did not reconnect in time): the board switched back to ${row.agentVersion ?? 'its previous version'} by itself.`,
          { board_id: h.boardId, version, previous_version: info.agent_version, running_version: row.agentVersion },
        );
      }
      throw new OperationFailure(
        'update_rolled_back',
        `The board did not reconnect within ${Math.round((deps.timeoutMs + ROLLBACK_GRACE_MS) / 1000)} s of switching to ${version}; its start script switches back to ${info.agent_version} by itself.`,
        { board_id: h.boardId, version, previous_version: info.agent_version },
      );
    },
  });
}
