import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export type DbKind = 'embedded' | 'postgres';

/** The real PostgreSQL the suite also runs against, when one is configured (CI sets it). */
export const realDatabaseUrl = process.env.MM_TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;

/** Every database target this run covers: the embedded one always, the real one when configured. */
export const dbKinds: DbKind[] = realDatabaseUrl ? ['embedded', 'postgres'] : ['embedded'];

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
