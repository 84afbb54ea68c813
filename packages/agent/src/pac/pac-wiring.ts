import type { Agent } from '../agent.ts';
import { pacActivateHandler, pacInstallHandler, pacQueryHandler, readActivePac, type PacHandlerOptions } from './pac-rpc-handlers.ts';
import { openUploadStream } from './upload-stream.ts';
import { runReboot } from './xlnx-config.ts';

/**
 * How long after answering `board.reboot` the reboot starts: long enough for the answer to
 * leave (it is sent as soon as the handler resolves; the delay only orders things), short
 * next to anything a user waits for.
 */
export const REBOOT_AFTER_ANSWER_MS = 250;

/** What of the agent the PAC methods use. */
export type PacAgent = Pick<Agent, 'rpc' | 'board' | 'config' | 'simulatedBoard' | 'link' | 'log'>;

/**
 * The board's PAC side on an agent: the `pac.query`, `pac.activate`, `pac.install` and
 * `board.reboot` methods, and `hello.active_pac` from `xlnx-config -q`.
 *
 * With `--simulate` the commands are the simulated board's (its xlnx-config and PAC folder
 * come in through the config's defaults, its environment through `commandEnv`), and
 * `board.reboot` is the simulated reboot (SimulatedBoard.rebootSoon) instead of MM_REBOOT.
 */
export function registerPacMethods(agent: PacAgent): void {
  const { config, simulatedBoard } = agent;
  const options: PacHandlerOptions = {
    xlnxConfig: config.xlnxConfig,
    pacDir: config.pacDir,
    ...(simulatedBoard ? { env: simulatedBoard.commandEnv } : {}),
  };
  agent.board.activePac = () => readActivePac(options);
  agent.rpc
    .register('pac.query', pacQueryHandler(options))
    .register('pac.activate', pacActivateHandler(options))
    .register('pac.install', pacInstallHandler(options, async (uploadId, ctx) => openUploadStream(uploadId, ctx)))
    .register('board.reboot', rebootHandler(agent));
}

/**
 * `board.reboot`: answers `{ accepted: true }` first, then reboots (the link cannot carry an
 * answer once the machine goes down). A reboot command that fails leaves the board running
 * with the same boot id; the agent then drops its link and reconnects at once, so the server,
 * which waits for another boot id, sees the same one come back rather than waiting out
 * MM_REBOOT_TIMEOUT_S.
 */
function rebootHandler(agent: PacAgent) {
  let pending: NodeJS.Timeout | undefined;
  const log = agent.log.child({ component: 'reboot' });
  const reboot = async () => {
    pending = undefined;
    if (agent.simulatedBoard) {
      agent.simulatedBoard.rebootSoon(0);
      return;
    }
    log.warn({ command: agent.config.reboot }, 'rebooting the board');
    try {
      const { output } = await runReboot(agent.config.reboot);
      if (output.trim()) log.info({ output: output.trim() }, 'reboot command output');
    } catch (err) {
      log.error({ err }, 'the reboot command failed: the board keeps running; reconnecting so the server sees it');
      agent.link.dropConnection(1011, 'the reboot command failed');
    }
  };
  return async () => {
    // A second request while one is pending is the same reboot.
    pending ??= setTimeout(() => void reboot(), REBOOT_AFTER_ANSWER_MS);
    return { accepted: true as const };
  };
}
