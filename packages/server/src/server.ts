import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import type { AppContext } from './app-context.ts';
import { AgentHub } from './agent-link/hub.ts';
import { startBoardServices } from './agent-link/install.ts';
import { createApp, type App } from './app.ts';
import { InFlightRequests } from './http/in-flight.ts';
import type { Config } from './config.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { openDatabase } from './db/database.ts';
import { seedDeviceScripts } from './services/device-scripts-seed.ts';
import { refuseOpenServer } from './auth/open-server.ts';
import { createLogger, type Logger } from './logger.ts';
import { Operations } from './operations/operations.ts';
import { SERVER_VERSION } from './version.ts';
import path from 'node:path';
import fs from 'node:fs/promises';
import { ContentStore } from './storage/content-store.ts';
import { sweepContentStore } from './services/invocation-files.ts';

export interface StartServerOptions {
  config: Config;
  log?: Logger;
  /** Tests: seed the embedded database from a migrated dump (see test/support). */
  embeddedSeed?: Blob;
}

export interface RunningServer {
  url: string;
  port: number;
  ctx: AppContext;
  /** The Hono app it serves (tests compare its routes with the OpenAPI document). */
  app: App;
  /** Graceful stop: no new connections, settle running work, close the database. */
  close(): Promise<void>;
}

export async function startServer(opts: StartServerOptions): Promise<RunningServer> {
  const { config } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  const lock = lockDataDir(config.dataDir);
  let database;
  try {
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      embeddedDir: path.join(config.dataDir, 'pgdata'),
      ...(opts.embeddedSeed ? { embeddedSeed: opts.embeddedSeed } : {}),
    });
  } catch (e) {
    lock.release();
    throw e;
  }
  try {
    // First start of this database: the catalogue gets the GPIO motor script (once, ever).
    await seedDeviceScripts(database.db);
    await refuseOpenServer(config, database.db);
  } catch (e) {
    await database.close();
    lock.release();
    throw e;
  }

  const ctx: AppContext = {
    config,
    database,
    log,
    version: SERVER_VERSION,
    boardsOnline: () => 0,
    files: new ContentStore(path.join(config.dataDir, 'content')),
    agents: new AgentHub(),
    operations: new Operations(),
    shutdownHooks: [],
  };

  try {
    // The results folder and the content store exist from the start; leftovers of a crash go.
    await fs.mkdir(config.resultsDir, { recursive: true });
    await sweepContentStore(ctx);
    await startBoardServices(ctx);
  } catch (e) {
    await database.close();
    lock.release();
    throw e;
  }

  const app = createApp(ctx);
  const inFlight = new InFlightRequests();
  // WebSocket upgrades pass through app.fetch, so the agent route sees its headers.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  let server: ServerType;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve({ fetch: inFlight.wrap(app.fetch), port: config.port, hostname: config.host, websocket: { server: wss } }, (info) =>
      resolve(info),
    );
    server.once('error', reject);
  });
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
  log.info({ url, database: database.kind, data_dir: config.dataDir }, 'control plane listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const http = server as import('node:http').Server;
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections?.();
      for (const hook of ctx.shutdownHooks) {
        try {
          await hook();
        } catch (err) {
          log.warn({ err }, 'shutdown hook failed');
        }
      }
      for (const client of wss.clients) client.terminate();
      wss.close();
      // Requests still streaming after the hooks ran are cut: their handlers clean up on abort.
      const cut = setTimeout(() => http.closeAllConnections?.(), 2000);
      await stopped;
      clearTimeout(cut);
      // Handlers of cut requests are still cleaning up (partial files, transactions).
      if (!(await inFlight.settled(10_000))) log.warn({ requests: inFlight.size }, 'requests still running at shutdown');
      await database.close();
      lock.release();
      log.info('control plane stopped');
    })());

  return { url, port: address.port, ctx, app, close };
}
