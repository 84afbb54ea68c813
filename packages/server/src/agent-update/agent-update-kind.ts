import { systemClock, type Clock } from '@mm/protocol';
import { z } from 'zod';
import type { UploadRegistry } from '../agent-link/uploads.ts';
import { ApiError } from '../errors.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { BoardHello } from './board-hello.ts';
import { DownloadsFolder } from '../downloads/downloads-folder.ts';
import { OperationFailure, type OperationKindRegistry } from '../operations/kinds.ts';

export const AgentUpdateParams = z.object({ version: z.string().min(1) });

/** Receiving and unpacking the package: generous for a 35 MiB package on a slow link. */
const INSTALL_CALL_TIMEOUT_MS = 600_000;
/**
 * The board's own deadline is the timeout; the server waits this much longer for the
 * board to be back with one version or the other (the watchdog's rollback and restart).
 */
const ROLLBACK_GRACE_MS = 60_000;

export interface AgentUpdateDeps {
  /** The board's last hello, from its row (undefined: deleted); board-hello.ts reads it. */
  board(boardId: string): Promise<BoardHello | undefined>;
  /** `board.status` tells when the board says hello again (on any replica), `board.revoked` when it is deleted. */
  bus: EventBus;
  uploads: UploadRegistry;
  packagesDir: string;
  timeoutMs: number;
  /** The wait for the board's return (default: the system clock). */
  clock?: Clock;
}

/**
 * `agent_update` (docs/packages.md): holds the board's queue slot (so it starts after the
 * running operation and nothing starts during it), offers the package of the board's
 * architecture as an upload, has the agent install it beside the running version and switch
 * (`agent.update`), then waits for the board to say hello again (a `board.status` event, not
 * a poll): with the new version it succeeded; with the old one (the start script's watchdog
 * switched back), or not at all within the timeout and grace, it fails `update_rolled_back`.
 */
export function registerAgentUpdateKind(kinds: OperationKindRegistry, deps: AgentUpdateDeps): void {
  const folder = new DownloadsFolder(deps.packagesDir);
  const clock = deps.clock ?? systemClock;
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
      const before = (await deps.board(h.boardId))?.connectedAt?.getTime() ?? 0;
      // Watched from before the switch, so a hello that comes while the call is answered counts.
      const watch = watchHelloAfter(deps, h.boardId, before);
      try {
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
        // At the deadline, one last look at the row (a hello whose event was lost still counts).
        const row = (await within(clock, watch.seen, deps.timeoutMs + ROLLBACK_GRACE_MS, h.signal)) ?? (await watch.look());
        if (row?.agentVersion === version) {
          await h.log(`the board reconnected with ${version}\n`);
          return { board_id: h.boardId, version, previous_version: info.agent_version };
        }
        if (row) {
          throw new OperationFailure(
            'update_rolled_back',
            `Version ${version} did not come up on the board (it exited or did not reconnect in time): the board switched back to ${row.agentVersion ?? 'its previous version'} by itself.`,
            { board_id: h.boardId, version, previous_version: info.agent_version, running_version: row.agentVersion },
          );
        }
      } finally {
        watch.stop();
      }
      throw new OperationFailure(
        'update_rolled_back',
        `The board did not reconnect within ${Math.round((deps.timeoutMs + ROLLBACK_GRACE_MS) / 1000)} s of switching to ${version}; its start script switches back to ${info.agent_version} by itself.`,
        { board_id: h.boardId, version, previous_version: info.agent_version },
      );
    },
  });
}

/**
 * Watches for the board's next hello after `since` (its row's `connected_at` moving on):
 * `seen` resolves with the row then, or rejects `board_not_found` when the board is deleted.
 * `look` reads the row now: the row if the board said hello since, else null.
 */
function watchHelloAfter(deps: AgentUpdateDeps, boardId: string, since: number): { seen: Promise<BoardHello>; look(): Promise<BoardHello | null>; stop(): void } {
  let found!: (row: BoardHello) => void;
  let failed!: (err: unknown) => void;
  const seen = new Promise<BoardHello>((resolve, reject) => {
    found = resolve;
    failed = reject;
  });
  seen.catch(() => undefined);
  const look = async (): Promise<BoardHello | null> => {
    const row = await deps.board(boardId);
    if (!row) throw new OperationFailure('board_not_found', 'The board was deleted during the update.');
    return (row.connectedAt?.getTime() ?? 0) > since ? row : null;
  };
  const lookNow = () =>
    void look().then((row) => {
      if (row) found(row);
    }, failed);
  const stops = [
    deps.bus.subscribe('board.status', boardId, ({ status }) => {
      if (status === 'online') lookNow();
    }),
    deps.bus.subscribe('board.revoked', boardId, lookNow),
  ];
  return { seen, look, stop: () => stops.forEach((stop) => stop()) };
}

/** What `promise` gives within `ms`, or null; rejects with the signal's reason when it aborts first. */
function within<T>(clock: Clock, promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | null> {
  return new Promise<T | null>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const settle = () => {
      clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      settle();
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      settle();
      resolve(null);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        settle();
        resolve(value);
      },
      (err: unknown) => {
        settle();
        reject(err);
      },
    );
  });
}
