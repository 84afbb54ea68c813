import { systemClock, type Clock, type TimerHandle } from '@mm/protocol';
import type { BoardDriver } from '../board/board-driver.ts';
import type { ToolChildren } from '../board/tool-children.ts';
import type { Logger } from '../logger.ts';
import type { RpcRegistry } from '../rpc/rpc-registry.ts';
import { pacActivateHandler, pacInstallHandler, pacQueryHandler, type PacHandlerOptions } from './pac-rpc-handlers.ts';
import { openUploadStream } from './upload-stream.ts';

/**
 * How long after answering `board.reboot` the reboot starts: long enough for the answer to
 * leave (it is sent as soon as the handler resolves; the delay only orders things), short
 * next to anything a user waits for.
 */
export const REBOOT_AFTER_ANSWER_MS = 250;

/** What the PAC methods use of the agent. */
export interface PacWiring {
  rpc: RpcRegistry;
  driver: BoardDriver;
  /** Drops the link so it reconnects (after a reboot command that failed). */
  dropConnection(code: number, reason: string): void;
  log: Logger;
  /** The pause before a reboot and the commands' time limits (default: the system clock). */
  clock?: Clock;
  /** The agent's running tools (xlnx-config is ended with them when the agent stops). */
  children?: ToolChildren;
}

/** How the PAC commands run on this board: its xlnx-config, PAC folder and environment. */
export function pacCommandOptions(driver: BoardDriver, children?: ToolChildren): PacHandlerOptions {
  return { xlnxConfig: driver.xlnxConfig, pacDir: driver.pacDir, ...(driver.commandEnv ? { env: driver.commandEnv } : {}), ...(children ? { children } : {}) };
}

/**
 * The board's PAC side on an agent: the `pac.query`, `pac.activate`, `pac.install` and
 * `board.reboot` methods, run by the board driver's xlnx-config and reboot (the real
 * board's, or the simulated one's).
 */
export function registerPacMethods(wiring: PacWiring): void {
  const options = { ...pacCommandOptions(wiring.driver, wiring.children), ...(wiring.clock ? { clock: wiring.clock } : {}) };
  wiring.rpc
    .register('pac.query', pacQueryHandler(options))
    .register('pac.activate', pacActivateHandler(options))
    .register('pac.install', pacInstallHandler(options, async (uploadId, ctx) => openUploadStream(uploadId, ctx)))
    .register('board.reboot', rebootHandler(wiring));
}

/**
 * `board.reboot`: answers `{ accepted: true }` first, then reboots (the link cannot carry an
 * answer once the machine goes down). A reboot command that fails leaves the board running
 * with the same boot id; the agent then drops its link and reconnects at once, so the server,
 * which waits for another boot id, sees the same one come back rather than waiting out
 * MM_REBOOT_TIMEOUT_S.
 */
function rebootHandler(wiring: PacWiring) {
  let pending: TimerHandle | undefined;
  const clock = wiring.clock ?? systemClock;
  const log = wiring.log.child({ component: 'reboot' });
  const reboot = async () => {
    pending = undefined;
    try {
      await wiring.driver.reboot();
    } catch (err) {
      log.error({ err }, 'the reboot command failed: the board keeps running; reconnecting so the server sees it');
      wiring.dropConnection(1011, 'the reboot command failed');
    }
  };
  return async () => {
    // A second request while one is pending is the same reboot.
    pending ??= clock.setTimeout(() => void reboot(), REBOOT_AFTER_ANSWER_MS);
    return { accepted: true as const };
  };
}
