import { ConfigError, loadConfig, type Config } from './config.ts';
import { DataDirLockedError } from './data-dir-lock.ts';
import { OpenServerRefusedError } from './auth/errors.ts';
import { createLogger } from './logger.ts';
import { startServer } from './server.ts';

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`mm-server: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
}

const config = configOrExit();

// `mm-server create-user <username> --role admin`: make a user, print its password once, exit.
if (process.argv[2] === 'create-user') {
  const { createUserCommand } = await import('./auth/create-user-command.ts');
  process.exit(await createUserCommand(process.argv.slice(3), config));
}

// `mm-server dev-board --file <path>`: `pnpm start`'s simulated board, registered in the database.
if (process.argv[2] === 'dev-board') {
  const { devBoardCommand } = await import('./dev/dev-board-command.ts');
  process.exit(await devBoardCommand(process.argv.slice(3), config));
}

const log = createLogger(config.logLevel, config.logFormat);
/** How long a graceful stop may take before the process exits anyway (systemd's own default is 90 s). */
const SHUTDOWN_DEADLINE_MS = 60_000;
// A background promise that fails (e.g. a write while the database is away) is logged, not fatal:
// the services retry what must land; exiting would lose everything in flight.
process.on('unhandledRejection', (reason) => {
  log.error({ err: reason }, 'unhandled promise rejection (kept running)');
});
try {
  const server = await startServer({ config, log });
  let signals = 0;
  const stop = (signal: string) => {
    if (++signals > 1) process.exit(1);
    log.info({ signal }, 'shutting down');
    // A graceful stop that hangs (a database connection that never answers, say) must not
    // keep the process, and the port, forever: what it held recovers at the next start.
    setTimeout(() => {
      log.error({ step: server.closingStep(), after_s: SHUTDOWN_DEADLINE_MS / 1000 }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} catch (e) {
  if (e instanceof DataDirLockedError) {
    console.error(`mm-server: ${e.message}`);
    process.exit(3);
  }
  if (e instanceof OpenServerRefusedError) {
    console.error(`mm-server: ${e.message}`);
    process.exit(2);
  }
  log.fatal({ err: e }, 'startup failed');
  process.exit(1);
}
