import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { createApp, type App } from './app.ts';
import { applyIdleTimeouts, headerDeadlineOptions } from './http/idle-timeout.ts';
import type { Config } from './config.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { openDatabase } from './db/database.ts';
import { InFlightRequests } from './http/in-flight.ts';
import { refuseOpenServer } from './auth/open-server.ts';
import { createLogger, type Logger } from './logger.ts';
import { createServices, type Services, type ServicesOptions } from './services.ts';
import { seedDeviceScripts } from './device-scripts/device-scripts-seed.ts';
import { seedWebcamProgram } from './device-scripts/webcam-program-seed.ts';

export interface StartServerOptions {
  config: Config;
  log?: Logger;
  /** Tests: seed the embedded database from a migrated dump (see test/support). */
  embeddedSeed?: Blob;
  /** Tests: more server-side operation kinds. */
  operationKinds?: ServicesOptions['operationKinds'];
  /** Tests of timing logic: the services' Clock (a ManualClock). */
  clock?: ServicesOptions['clock'];
}

export interface RunningServer {
  url: string;
  port: number;
  /** The services the routes use (tests reach into them). */
  ctx: Services;
  /** The Hono app it serves (tests compare its routes with the OpenAPI document). */
  app: App;
  /** Graceful stop: no new connections, settle running work, close the database. */
  close(): Promise<void>;
  /** What a close in progress is waiting for (logged when a shutdown takes too long). */
  closingStep(): string;
}

export async function startServer(opts: StartServerOptions): Promise<RunningServer> {
  const { config } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  // The lock guards the embedded database (one process per folder). With DATABASE_URL set,
  // several replicas may share MM_DATA_DIR (a shared volume): no lock.
  const lock = config.databaseUrl ? { release() {} } : lockDataDir(config.dataDir);
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

  let ctx: Services;
  try {
    ctx = await createServices(config, database, log, {
      ...(opts.operationKinds ? { operationKinds: opts.operationKinds } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  } catch (e) {
    await database.close();
    lock.release();
    throw e;
  }

  if (config.webcamProgram) {
    // Development: the webcam entry deployable at once (device-scripts/webcam-program-seed.ts).
    const given = await seedWebcamProgram(ctx, config.webcamProgram).catch((err: unknown) => {
      log.warn({ err, file: config.webcamProgram }, 'could not give the webcam entry its program');
      return [];
    });
    if (given.length > 0) log.info({ scripts: given, file: config.webcamProgram }, 'webcam entry given its program (MM_WEBCAM_PROGRAM)');
  }

  const app = createApp(ctx);
  const inFlight = new InFlightRequests();
  // WebSocket upgrades pass through app.fetch, so the agent route sees its headers.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  let server: ServerType;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve(
      {
        fetch: inFlight.wrap(app.fetch),
        port: config.port,
        hostname: config.host,
        websocket: { server: wss },
        // No total limit per request (Node's default is 300 s): see applyIdleTimeouts. Headers
        // keep a deadline of their own: `requestTimeout: 0` alone would also set it to 0.
        serverOptions: headerDeadlineOptions(config.httpHeadersTimeoutMs),
      },
      (info) => resolve(info),
    );
    applyIdleTimeouts(server as import('node:http').Server, config.httpIdleTimeoutMs);
    server.once('error', reject);
  });
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
  log.info({ url, database: database.kind, data_dir: config.dataDir }, 'control plane listening');

  let closing: Promise<void> | undefined;
  let closingStep = 'not closing';
  const close = () =>
    (closing ??= (async () => {
      const http = server as import('node:http').Server;
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections?.();
      try {
        await ctx.shutdown((name) => (closingStep = `services: ${name}`));
      } catch (err) {
        log.warn({ err }, 'services did not stop cleanly');
      }
      for (const client of wss.clients) client.terminate();
      wss.close();
      // Requests still streaming after the hooks ran are cut: their handlers clean up on abort.
      closingStep = 'HTTP connections';
      const cut = setTimeout(() => http.closeAllConnections?.(), 2000);
      await stopped;
      clearTimeout(cut);
      // Handlers of cut requests are still cleaning up (partial files, transactions).
      closingStep = 'requests still running';
      if (!(await inFlight.settled(10_000))) log.warn({ requests: inFlight.size }, 'requests still running at shutdown');
      closingStep = 'database';
      await database.close();
      lock.release();
      closingStep = 'stopped';
      log.info('control plane stopped');
    })());

  return { url, port: address.port, ctx, app, close, closingStep: () => closingStep };
}
