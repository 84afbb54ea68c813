import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createEmbeddedSeed } from '@mm/server';
import { requireRealDatabase } from './databases.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedSeedPath: string;
  }
}

interface SharedSeed {
  /** The dump's path, once written. */
  path: Promise<string>;
  /** Projects whose teardown has not run yet. */
  users: number;
}

/**
 * The projects that run this setup (vitest.config.ts) share one seed in the vitest process:
 * each loads this module afresh, so the seed is kept on `globalThis`.
 */
const SHARED = Symbol.for('mm.test.embeddedSeed');
type WithSeed = typeof globalThis & { [SHARED]?: SharedSeed };

async function writeSeed(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-seed-'));
  const dump = await createEmbeddedSeed();
  const seedPath = path.join(dir, 'embedded-seed.tar.gz');
  await fs.writeFile(seedPath, Buffer.from(await dump.arrayBuffer()));
  return seedPath;
}

/**
 * Creating an embedded PostgreSQL runs initdb (~3 s, ~700 MB); the suite does that once,
 * migrates it, and every test server starts from a copy of the dump.
 */
export default async function setup(project: TestProject) {
  // CI (MM_REQUIRE_POSTGRES=1): an unreachable PostgreSQL fails the run here, before any test.
  if (process.env.MM_REQUIRE_POSTGRES === '1') await requireRealDatabase();
  const holder = globalThis as WithSeed;
  const shared = (holder[SHARED] ??= { path: writeSeed(), users: 0 });
  shared.users += 1;
  project.provide('embeddedSeedPath', await shared.path);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await fs.rm(path.dirname(await shared.path), { recursive: true, force: true });
  };
}
