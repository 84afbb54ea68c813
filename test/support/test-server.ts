import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, startServer, type RunningServer, type StartServerOptions } from '@mm/server';
import { createScratchDatabase, type DbKind } from './databases.ts';

type ScratchDatabase = Awaited<ReturnType<typeof createScratchDatabase>>;

export interface TestServer extends RunningServer {
  dataDir: string;
  kind: DbKind;
  /** The scratch database on the real server (postgres kind only). */
  scratchDatabase: ScratchDatabase | undefined;
  /** fetch() against the server, path relative to its URL. */
  api(pathname: string, init?: RequestInit): Promise<Response>;
  /** Stops the server and removes its data (and its scratch database). */
  stop(): Promise<void>;
}

let seed: Blob | undefined;
async function embeddedSeed(): Promise<Blob> {
  seed ??= new Blob([await fs.readFile(inject('embeddedSeedPath'))]);
  return seed;
}

export interface TestServerOptions {
  /** Restart tests: stop() leaves the data folder and the scratch database for a later server. */
  keep?: boolean;
  /** Restart tests: run on this kept scratch database instead of a new one (dropped on stop unless kept). */
  scratchDatabase?: ScratchDatabase;
  /** More server-side operation kinds to register. */
  operationKinds?: StartServerOptions['operationKinds'];
  /** Tests of timing logic: the server's Clock (a ManualClock). */
  clock?: StartServerOptions['clock'];
}

/**
 * Starts the real control plane in this process on a free port, with its own data folder
 * and its own database (embedded, or a scratch database on the real server).
 */
export async function startTestServer(
  kind: DbKind,
  env: Record<string, string> = {},
  opts: TestServerOptions = {},
): Promise<TestServer> {
  const dataDir = env.MM_DATA_DIR ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'mm-test-')));
  const scratch = kind === 'postgres' ? (opts.scratchDatabase ?? (await createScratchDatabase())) : undefined;
  // A data folder that already holds an embedded database (a restart) keeps it.
  const hasEmbeddedDb = await fs.access(path.join(dataDir, 'pgdata')).then(() => true, () => false);
  const config = loadConfig({
    PORT: '0',
    MM_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(scratch ? { DATABASE_URL: scratch.url } : { DATABASE_URL: '' }),
    ...env,
  });
  const server = await startServer({
    config,
    ...(opts.operationKinds ? { operationKinds: opts.operationKinds } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(kind === 'embedded' && !hasEmbeddedDb ? { embeddedSeed: await embeddedSeed() } : {}),
  });
  return {
    ...server,
    dataDir,
    kind,
    scratchDatabase: scratch,
    api: (pathname, init) => fetch(new URL(pathname, server.url), init),
    async stop() {
      await server.close();
      if (opts.keep) return;
      await scratch?.drop();
      if (!env.MM_DATA_DIR) await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
