import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export type DbKind = 'embedded' | 'postgres';

/** The real PostgreSQL the suite also runs against, when one is configured (CI sets it). */
export const realDatabaseUrl = process.env.MM_TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;

/** Every database target this run covers: the embedded one always, the real one when configured. */
export const dbKinds: DbKind[] = realDatabaseUrl ? ['embedded', 'postgres'] : ['embedded'];

/**
 * For a test that needs the real PostgreSQL (replicas sharing one database, SQL straight into
 * its tables): whether it skips. With no real database configured (a machine with only Node
 * and npm) it prints one line saying what is skipped and why; with `MM_REQUIRE_POSTGRES=1`
 * (CI, `.ci/run`) the absence fails the file instead. Called where the suite is declared, so
 * a skipped suite runs none of its hooks:
 *
 *     describe.skipIf(skipWithoutRealDatabase('two replicas on one PostgreSQL'))('…', () => { … });
 */
export function skipWithoutRealDatabase(what: string): boolean {
  if (realDatabaseUrl) return false;
  if (process.env.MM_REQUIRE_POSTGRES === '1') {
    throw new Error(`${what} needs a real PostgreSQL, and MM_REQUIRE_POSTGRES=1: set DATABASE_URL (or MM_TEST_DATABASE_URL)`);
  }
  console.warn(`skipped: ${what} (needs a real PostgreSQL: set DATABASE_URL)`);
  return true;
}

/** Fails unless the real PostgreSQL is configured and answers (CI asks this before any test runs). */
export async function requireRealDatabase(): Promise<void> {
  if (!realDatabaseUrl) throw new Error('MM_REQUIRE_POSTGRES=1 but no real PostgreSQL is configured: set DATABASE_URL (or MM_TEST_DATABASE_URL)');
  const where = new URL(realDatabaseUrl);
  const sql = postgres(realDatabaseUrl, { max: 1, connect_timeout: 10, onnotice: () => {} });
  try {
    await sql`SELECT 1`;
  } catch (err) {
    throw new Error(`MM_REQUIRE_POSTGRES=1 but PostgreSQL at ${where.host}${where.pathname} does not answer: ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A fresh, empty database on the real server for one test server; dropped by the returned function. */
export async function createScratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!realDatabaseUrl) throw new Error('no real PostgreSQL configured (set DATABASE_URL or MM_TEST_DATABASE_URL)');
  const name = `mm_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(realDatabaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(realDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = postgres(realDatabaseUrl!, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
