import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@mm/server';

/**
 * The embedded database as `pnpm start` opens it: a new folder is made by initdb in a child
 * process (into a scratch folder renamed into place), then opened with the small footprint's
 * settings (docs/perf/scale.md). The rest of the suite loads a migrated dump instead of running initdb.
 */
describe('the embedded database on a new data folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-embedded-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is made by initdb in a child process, opened with 16 MB of shared buffers, and keeps its data', { timeout: 240_000 }, async () => {
    const embeddedDir = path.join(dir, 'pgdata');
    // What a start killed during initdb leaves: its scratch folder, half made.
    await fs.mkdir(`${embeddedDir}.initdb`);
    await fs.writeFile(`${embeddedDir}.initdb/PG_VERSION`, 'half made');

    const first = await openDatabase({ databaseUrl: undefined, embeddedDir });
    try {
      expect(first.kind).toBe('embedded');
      const shown = (await first.db.execute(sql`show shared_buffers`)) as unknown as { rows: Array<{ shared_buffers: string }> };
      expect(shown.rows[0]?.shared_buffers).toBe('16MB');
      await first.db.execute(sql`insert into boards (name, token_hash) values ('kept', 'hash-of-kept')`);
    } finally {
      await first.close();
    }
    // The scratch folder became the database: nothing else beside it.
    expect((await fs.readdir(dir)).sort()).toEqual(['pgdata']);
    expect(await fs.readFile(path.join(embeddedDir, 'PG_VERSION'), 'utf8')).toMatch(/^\d+/);

    const again = await openDatabase({ databaseUrl: undefined, embeddedDir });
    try {
      const rows = (await again.db.execute(sql`select name from boards where token_hash = 'hash-of-kept'`)) as unknown as { rows: Array<{ name: string }> };
      expect(rows.rows.map((r) => r.name)).toEqual(['kept']);
    } finally {
      await again.close();
    }
  });
});
