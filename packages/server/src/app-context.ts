import type { HttpBindings } from '@hono/node-server';
import type { AgentHub } from './agent-link/hub.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './logger.ts';
import type { Operations } from './operations/operations.ts';
import type { ContentStore } from './storage/content-store.ts';

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
  /** Content-addressed file store (`MM_DATA_DIR/content`): invocation files and what boards return. */
  files: ContentStore;
  /**
   * Cancels the invocation's queued or running operations (the operations module sets it);
   * awaited before an invocation is deleted.
   */
  cancelOperationsOf?: (invocationId: number) => Promise<void>;
  /** The boards' agent links: presence, RPC (`agents.call`), streams, reboot watches. */
  agents: AgentHub;
  /** Operations: create, wait, cancel, list; the per-board queue (operations/operations.ts). */
  operations: Operations;
  /** Work to finish before the database closes (graceful shutdown), in order. */
  shutdownHooks: Array<() => Promise<void>>;
}

export interface AppEnv {
  /** The raw Node request/response (streamed uploads read `c.env.incoming`). */
  Bindings: HttpBindings;
  Variables: {
    requestId: string;
  };
}
