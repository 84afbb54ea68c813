import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createEmbeddedSeed } from '@mm/server';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedSeedPath: string;
  }
}

/**
 * Creating an embedded PostgreSQL runs initdb (~3 s, ~700 MB); the suite does that once,
 * migrates it, and every test server starts from a copy of the dump.
 */
export default async function setup(project: TestProject) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-seed-'));
  const dump = await createEmbeddedSeed();
  const seedPath = path.join(dir, 'embedded-seed.tar.gz');
  await fs.writeFile(seedPath, Buffer.from(await dump.arrayBuffer()));
  project.provide('embeddedSeedPath', seedPath);
  return async () => {
    await fs.rm(dir, { recursive: true, force: true });
  };
}
