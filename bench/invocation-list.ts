/**
 * The invocation list at scale on a real PostgreSQL (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/invocation-list.ts [--rows 10000,100000]
 *
 * For each row count: a scratch database, the control plane in this process on it, the
 * `invocations` table filled by one INSERT (every 1000th row named `needle-…`), then
 * - EXPLAIN (ANALYZE, BUFFERS) of the statements `GET /api/invocations/` runs (the count
 *   and the page, ordered newest first, with and without a `q` search), first and last page;
 * - the route's answer time over HTTP on loopback (median and max of 20, bearer token).
 * The dashboard's own time to results (Chromium) is measured by
 * packages/dashboard/test/scale.browser.test.ts. Timings on a loaded machine are upper
 * bounds: the load average is printed with them.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { loadConfig, startServer } from '@mm/server';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';

const TOKEN = 'bench-invocation-list-token';
const rowCounts = (process.argv[process.argv.indexOf('--rows') + 1] && process.argv.includes('--rows')
  ? process.argv[process.argv.indexOf('--rows') + 1]!
  : '10000,100000'
)
  .split(',')
  .map(Number);
if (!realDatabaseUrl) {
  console.error('bench/invocation-list.ts: set DATABASE_URL to a PostgreSQL server');
  process.exit(2);
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const rows of rowCounts) {
  const scratch = await createScratchDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-list-'));
  const server = await startServer({ config: loadConfig({ PORT: '0', MM_DATA_DIR: dataDir, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', MM_API_TOKEN: TOKEN }) });
  const sql = postgres(scratch.url, { max: 1, onnotice: () => {} });
  try {
    const t0 = performance.now();
    await sql`INSERT INTO invocations (name, description, created_at, updated_at)
      SELECT CASE WHEN i % 1000 = 0 THEN 'needle-' || i ELSE 'run-' || lpad(i::text, 6, '0') END,
             'seeded invocation ' || i, now() - (${rows} - i) * interval '1 second', now() - (${rows} - i) * interval '1 second'
      FROM generate_series(0, ${rows - 1}) AS i`;
    await sql`ANALYZE invocations`;
    console.log(`\n=== ${rows} invocations (seeded in ${Math.round(performance.now() - t0)} ms; load ${load()}) ===`);

    const explain = async (label: string, text: string, params: unknown[]) => {
      const plan = await sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params as never[]);
      const lines = plan.map((r) => String((r as Record<string, unknown>)['QUERY PLAN']));
      console.log(`\n-- ${label}\n${lines.filter((l) => !/^\s*(Buffers|Planning:)/.test(l)).join('\n')}`);
    };
    const page = 'SELECT * FROM invocations WHERE ($1::text IS NULL OR name ILIKE $1) ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET $2';
    await explain('count, all', 'SELECT count(*) FROM invocations', []);
    await explain('first page, all', 'SELECT * FROM invocations ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET 0', []);
    await explain('last page, all', `SELECT * FROM invocations ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET ${rows - 50}`, []);
    await explain('count, q=needle', 'SELECT count(*) FROM invocations WHERE name ILIKE $1', ['%needle%']);
    await explain('first page, q=needle', page, ['%needle%', 0]);

    const timeRoute = async (query: string) => {
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const s = performance.now();
        const res = await fetch(new URL(`/api/invocations/?${query}`, server.url), { headers: { authorization: `Bearer ${TOKEN}` } });
        if (res.status !== 200) throw new Error(`${query}: ${res.status}`);
        await res.arrayBuffer();
        times.push(performance.now() - s);
      }
      return `median ${median(times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`;
    };
    console.log('\n-- GET /api/invocations/ over HTTP (20 each)');
    console.log(`first page        ${await timeRoute('limit=50')}`);
    console.log(`last page         ${await timeRoute(`limit=50&offset=${rows - 50}`)}`);
    console.log(`search q=needle   ${await timeRoute('limit=50&q=needle')}`);
    console.log(`search q=12345    ${await timeRoute('limit=50&q=12345')}`);
    console.log(`(load ${load()})`);
  } finally {
    await sql.end();
    await server.close();
    await scratch.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
