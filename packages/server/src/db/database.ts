import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema.ts';

export type Schema = typeof schema;
/** The query builder both drivers share; code outside this folder sees only this. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  kind: 'postgres' | 'embedded';
  /** Resolves when a trivial query round-trips; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl: string | undefined;
  /** Folder of the embedded PostgreSQL (used when databaseUrl is unset). */
  embeddedDir: string;
  /** Tests: seed a fresh embedded database from a dump instead of running initdb. */
  embeddedSeed?: Blob;
}

export const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));
const initdbScript = fileURLToPath(new URL('./embedded-initdb.mjs', import.meta.url));

/**
 * PostgreSQL settings of the embedded database, after PGlite's own. PGlite keeps PostgreSQL's
 * default shared_buffers (128 MB), and in WebAssembly every page of it that was ever touched
 * stays resident; a development database of a few MB needs far less (the file reads behind it
 * are cached by the OS anyway). 16 MB took the idle server from ~425 MB to ~270 MB RSS
 * (bench/embedded-footprint.ts).
 */
export const embeddedStartParams = ['-c', 'shared_buffers=16MB'];

/**
 * PGlite, with V8 told to keep WebAssembly at its baseline compiler (Liftoff). By default V8
 * also recompiles PGlite's hot functions with its optimising compiler, and that code and the
 * compiler's memory stayed resident: ~60 MB of the idle server. Measured here, opening got
 * faster and inserts no slower without it (selects within the noise of a loaded machine): the
 * embedded database is for development. Process-wide, but only a process that opens the
 * embedded database sets it, before it compiles PGlite's module.
 */
async function loadPGlite(): Promise<typeof import('@electric-sql/pglite')> {
  v8.setFlagsFromString('--liftoff-only');
  return import('@electric-sql/pglite');
}

const exists = (file: string) => fs.stat(file).then(() => true, () => false);

/**
 * A new embedded database folder is made by a child process (embedded-initdb.mjs says why),
 * in a scratch folder renamed into place when complete: a start killed during initdb leaves
 * no half-made database behind to be opened as if it were whole, only a scratch folder that
 * the next start clears (one server per data folder: the data-dir lock).
 */
async function initEmbeddedDir(dir: string): Promise<void> {
  const scratch = `${dir}.initdb`;
  await fs.rm(scratch, { recursive: true, force: true });
  try {
    await promisify(execFile)(process.execPath, [initdbScript, scratch], { maxBuffer: 4 * 1024 * 1024 });
  } catch (e) {
    await fs.rm(scratch, { recursive: true, force: true });
    const err = e as { stderr?: string; message: string };
    throw new Error(`creating the embedded database in ${dir} failed: ${err.stderr?.trim() || err.message}`, { cause: e });
  }
  await fs.rename(scratch, dir);
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    const client = postgres(opts.databaseUrl, { max: 10, onnotice: () => {}, connect_timeout: 10 });
    const db = drizzle(client, { schema });
    await migrate(db, { migrationsFolder });
    return {
      db: db as unknown as Db,
      kind: 'postgres',
      ping: async () => {
        await db.execute(sql`select 1`);
      },
      close: () => client.end({ timeout: 5 }),
    };
  }
  const { PGlite } = await loadPGlite();
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  await fs.mkdir(path.dirname(opts.embeddedDir), { recursive: true });
  if (!opts.embeddedSeed && !(await exists(path.join(opts.embeddedDir, 'PG_VERSION')))) await initEmbeddedDir(opts.embeddedDir);
  const client = new PGlite(opts.embeddedDir, {
    startParams: [...PGlite.defaultStartParams, ...embeddedStartParams],
    ...(opts.embeddedSeed ? { loadDataDir: opts.embeddedSeed } : {}),
  });
  await client.waitReady;
  const db = drizzle(client, { schema });
  await migrate(db, { migrationsFolder });
  return {
    db: db as unknown as Db,
    kind: 'embedded',
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: () => client.close(),
  };
}

/** A migrated, empty embedded database as a dump, for tests that start many servers. */
export async function createEmbeddedSeed(): Promise<Blob> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const pg = new PGlite();
  await migrate(drizzle(pg, { schema }), { migrationsFolder });
  const dump = await pg.dumpDataDir('gzip');
  await pg.close();
  return dump;
}
