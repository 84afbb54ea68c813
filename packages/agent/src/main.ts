import { Agent } from './agent.ts';
import { CliError, HELP_TEXT, parseCli } from './cli.ts';
import { ConfigError, loadAgentConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { realBoardDriver, type BoardDriver } from './board/board-driver.ts';
import { simulatedDefaults } from './simulate/simulated-board.ts';
import { startSimulatedBoardDriver } from './simulate/simulated-board-driver.ts';
import { AGENT_VERSION } from './version.ts';
import { enroll, EnrollmentRefusedError } from './enroll/enroll.ts';
import { RESTART_FOR_UPDATE_CODE } from './update/agent-update.ts';

/** How long a stop may take before the agent exits anyway (under the unit's TimeoutStopSec=30, so this says why). */
const STOP_DEADLINE_MS = 25_000;

/** `mm-agent [--simulate]`: runs the agent until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let cli;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stderr.write(`mm-agent: ${err.message}\n`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(HELP_TEXT);
    return;
  }
  if (cli.version) {
    process.stdout.write(`${AGENT_VERSION}\n`);
    return;
  }

  let config;
  try {
    config = loadAgentConfig(process.env, { simulate: cli.simulate, ...(cli.simulate ? { simulatedDefaults } : {}) });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`mm-agent: ${err.message}\n`);
    process.exit(2);
  }

  const log = createLogger(config.logLevel);
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled rejection'));
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception: exiting');
    process.exit(1);
  });

  if (config.enrollment) {
    // No token yet: exchange the provisioning key for one (kept in the token file; the key is
    // never used again). SIGINT/SIGTERM while waiting for approval just exit.
    const abort = new AbortController();
    const quit = () => abort.abort();
    process.once('SIGINT', quit);
    process.once('SIGTERM', quit);
    try {
      config.boardToken = await enroll({
        serverUrl: config.serverUrl,
        enrollment: config.enrollment,
        log,
        maxDelayMs: config.reconnectMaxDelayMs,
        signal: abort.signal,
        // A real board's serial (FRU EEPROM) names it on the server; simulated boards go by host name and machine id.
        ...(config.simulate ? {} : { hostRoot: config.hostRoot }),
      });
    } catch (err) {
      if (abort.signal.aborted) process.exit(0);
      log.fatal({ err }, err instanceof EnrollmentRefusedError ? err.message : `cannot enroll: ${(err as Error).message}`);
      process.exit(err instanceof EnrollmentRefusedError ? 2 : 1);
    }
    config.enrollment = undefined;
    process.off('SIGINT', quit);
    process.off('SIGTERM', quit);
  }

  // The one place the board is chosen: the real one, or --simulate's stand-ins.
  let driver: BoardDriver | undefined;
  let agent: Agent;
  try {
    driver = config.simulate ? await startSimulatedBoardDriver(config, log) : realBoardDriver(config, log);
    // An update has switched versions: stop, then exit so the start script starts the new one.
    const requestRestart = () => {
      log.info({}, 'restarting into the updated version');
      agent.stop().finally(() => process.exit(RESTART_FOR_UPDATE_CODE));
    };
    agent = await Agent.create({ config, log, driver, requestRestart });
  } catch (err) {
    // Typically MM_AGENT_DIR cannot be created or written (permissions, read-only disk).
    log.fatal({ err, agent_dir: config.agentDir }, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
    await driver?.stop();
    process.exit(1);
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'stopping');
    // A stop that hangs must not keep the agent from being restarted: the journal holds what
    // it was doing, and the next start settles it.
    setTimeout(() => {
      log.error({ after_s: STOP_DEADLINE_MS / 1000 }, 'stopping did not finish in time; exiting');
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    agent.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'stopping failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  agent.start();
}

await main();
