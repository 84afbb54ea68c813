import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './logger.ts';

/**
 * Everything a route module needs, built once at startup (services.ts) and passed to
 * each module's factory. Route modules never reach for globals.
 */
export interface AppContext {
  config: Config;
  database: Database;
  log: Logger;
  version: string;
  /** Boards connected right now (the agent hub fills this in). */
  boardsOnline(): number;
  /** Work to finish before the database closes (graceful shutdown), in order. */
  shutdownHooks: Array<() => Promise<void>>;
}

export interface AppEnv {
  Variables: {
    requestId: string;
  };
}
