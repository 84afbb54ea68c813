/**
 * Which queries of the retention pruner and the lists scan a big table, and what the indexes of
 * migration 0004 change (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/operation-indexes.ts
 *                [--operations 200000] [--invocations 10000] [--events-per-op 5]
 *
 * A scratch database, migrated; `--invocations` invocations, `--operations` operations (created
 * over the last 120 days, mostly finished, a few queued and running, six kinds, 100 boards) and
 * `--events-per-op` events each, filled by INSERT … SELECT. Then each statement is explained
 * (EXPLAIN ANALYZE, best of 3) twice: without the indexes the migration adds ("before") and
 * with them ("after"), The statements are those the code sends
 * (retention-pruner.ts; `GET /api/operations/` through store.ts listOperationRows: the page and
 * the count; `GET /api/invocations/` through invocations/invocations.ts), with literal values. Both runs after VACUUM ANALYZE, as autovacuum leaves a table at rest.
 * Timings on a shared machine are upper bounds: the load average is printed with them.
 */
import os from 'node:os';
import postgres from 'postgres';
import { openDatabase } from '../packages/server/src/db/database.ts';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const nOps = Number(arg('operations', '200000'));
const nInv = Number(arg('invocations', '10000'));
const eventsPerOp = Number(arg('events-per-op', '5'));
if (!realDatabaseUrl) {
  console.error('bench/operation-indexes.ts: set DATABASE_URL to a PostgreSQL server');
  process.exit(2);
}
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** The indexes migration 0004 adds (name → its definition), dropped for the "before" figures. */
const NEW_INDEXES: Record<string, string> = {
  operations_expiry_idx: `CREATE INDEX operations_expiry_idx ON operations USING btree (coalesce(finished_at, created_at))`,
  operations_status_idx: `CREATE INDEX operations_status_idx ON operations USING btree (status, id)`,
  operations_kind_idx: `CREATE INDEX operations_kind_idx ON operations USING btree (kind, id)`,
};

const FINAL = `status in ('succeeded', 'failed', 'cancelled')`;
const day = 86_400_000;
const now = Date.now();
/** First pruning after retention was set (a quarter of the rows expired) and the hourly pass after it (one hour's worth). */
const cutoffFirst = new Date(now - 90 * day).toISOString();
const cutoffHourly = new Date(now - 120 * day + 3_600_000).toISOString();

function statements(boardId: string, invocationId: number): Array<[string, string]> {
  const expired = (cutoff: string) => `${FINAL} and coalesce(finished_at, created_at) < '${cutoff}'::timestamptz`;
  return [
    ['retention: a batch of expired operations (first pass, 25 % expired)', `select id from operations where ${expired(cutoffFirst)} limit 500`],
    ['retention: a batch of expired operations (hourly pass, ~0.03 % expired)', `select id from operations where ${expired(cutoffHourly)} limit 500`],
    [
      'retention: a batch of their events (hourly pass)',
      `select id from operation_events where operation_id in (select id from operations where ${expired(cutoffHourly)}) limit 500`,
    ],
    ['retention: nothing left to prune (the last batch)', `select id from operations where ${expired(new Date(now - 200 * day).toISOString())} limit 500`],
    ['GET /api/operations/ (no filter): page', `select * from operations order by id desc limit 50`],
    ['GET /api/operations/ (no filter): count', `select count(*) from operations`],
    ['?status=running: page', `select * from operations where status = 'running' order by id desc limit 50`],
    ['?status=running: count', `select count(*) from operations where status = 'running'`],
    ['?status=failed: page', `select * from operations where status = 'failed' order by id desc limit 50`],
    ['?status=failed: count', `select count(*) from operations where status = 'failed'`],
    ['?kind=pac_activate: page', `select * from operations where kind = 'pac_activate' order by id desc limit 50`],
    ['?kind=pac_activate: count', `select count(*) from operations where kind = 'pac_activate'`],
    ['?kind=execute&status=queued: page', `select * from operations where kind = 'execute' and status = 'queued' order by id desc limit 50`],
    ['?board_id=…: page', `select * from operations where board_id = '${boardId}' order by id desc limit 50`],
    ['?board_id=…: count', `select count(*) from operations where board_id = '${boardId}'`],
    ['?invocation_id=…: page', `select * from operations where invocation_id = ${invocationId} order by id desc limit 50`],
    ['GET /api/invocations/: first page', `select * from invocations order by created_at desc, id desc limit 50 offset 0`],
    ['GET /api/invocations/: page 100', `select * from invocations order by created_at desc, id desc limit 50 offset 5000`],
    ['GET /api/invocations/: count', `select count(*) from invocations`],
    ['GET /api/invocations/?q=needle: page', `select * from invocations where name ilike '%needle%' order by created_at desc, id desc limit 50 offset 0`],
    ['GET /api/invocations/?q=needle: count', `select count(*) from invocations where name ilike '%needle%'`],
  ];
}

interface Plan {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: Plan[];
}

/** The plan's scans, e.g. "Seq Scan operations", "Index Scan operations_status_idx". */
function scans(plan: Plan, out: string[] = []): string[] {
  if (/Scan/.test(plan['Node Type'])) out.push(`${plan['Node Type']} ${plan['Index Name'] ?? plan['Relation Name'] ?? ''}`.trim());
  for (const p of plan.Plans ?? []) scans(p, out);
  return out;
}

async function explainAll(sql: postgres.Sql, list: Array<[string, string]>): Promise<Map<string, { ms: number; scans: string }>> {
  const out = new Map<string, { ms: number; scans: string }>();
  for (const [name, text] of list) {
    let best = Infinity;
    let plan: Plan | undefined;
    for (let i = 0; i < 3; i++) {
      const [row] = await sql.unsafe(`explain (analyze, format json) ${text}`);
      const result = (row as unknown as { 'QUERY PLAN': Array<{ Plan: Plan; 'Execution Time': number }> })['QUERY PLAN'][0]!;
      if (result['Execution Time'] < best) {
        best = result['Execution Time'];
        plan = result.Plan;
      }
    }
    out.set(name, { ms: best, scans: [...new Set(scans(plan!))].join(', ') });
  }
  return out;
}

const scratch = await createScratchDatabase();
const sql = postgres(scratch.url, { max: 1, onnotice: () => {} });
try {
  // Migrated as the server does it.
  await (await openDatabase({ databaseUrl: scratch.url, embeddedDir: '' })).close();
  const t0 = performance.now();
  await sql.unsafe(`insert into boards (name, token_hash) select 'board-' || g, md5('board-' || g) from generate_series(1, 100) g`);
  await sql.unsafe(
    `insert into invocations (name, created_at, updated_at)
     select case when g % 1000 = 0 then 'needle-' || g else 'run-' || g end,
            now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval
     from generate_series(1, ${nInv}) g`,
  );
  // Oldest first (ids grow with time); the last 20 queued, the 5 before them running.
  await sql.unsafe(
    `insert into operations (kind, status, board_id, invocation_id, created_at, started_at, finished_at)
     select (array['transfer','execute','execute','execute','pac_query','pac_activate'])[1 + g % 6],
            case when g > ${nOps} - 20 then 'queued' when g > ${nOps} - 25 then 'running'
                 else (array['succeeded','succeeded','succeeded','succeeded','succeeded','succeeded','succeeded','failed','failed','cancelled'])[1 + g % 10] end,
            (select id from boards order by name offset (g % 100) limit 1),
            1 + g % ${nInv},
            t, t, case when g > ${nOps} - 25 then null else t + interval '30 seconds' end
     from (select g, now() - ((${nOps} - g) * (120.0 * 86400 / ${nOps}) || ' seconds')::interval as t
           from generate_series(1, ${nOps}) g) s`,
  );
  await sql.unsafe(
    `insert into operation_events (operation_id, seq, type, data, created_at)
     select o.id, s, 'log', '{"stream":"stdout","data":"a line\\n"}'::jsonb, o.created_at
     from operations o, generate_series(1, ${eventsPerOp}) s`,
  );
  const [board] = await sql<Array<{ board_id: string }>>`select board_id from operations where board_id is not null limit 1`;
  console.log(`filled ${nInv} invocations, ${nOps} operations, ${nOps * eventsPerOp} events in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${load()})`);

  const list = statements(board!.board_id, Math.floor(nInv / 2));
  const existing = new Set((await sql<Array<{ indexname: string }>>`select indexname from pg_indexes where schemaname = 'public'`).map((r) => r.indexname));
  for (const name of Object.keys(NEW_INDEXES)) await sql.unsafe(`drop index if exists ${name}`);
  // As autovacuum leaves a table at rest (the visibility map set: index-only scans possible).
  await sql.unsafe('vacuum analyze');
  const before = await explainAll(sql, list);
  const tIdx = performance.now();
  for (const def of Object.values(NEW_INDEXES)) await sql.unsafe(def);
  await sql.unsafe('vacuum analyze');
  console.log(
    `indexes ${Object.keys(NEW_INDEXES).join(', ')} built in ${((performance.now() - tIdx) / 1000).toFixed(1)} s` +
      ` (${Object.keys(NEW_INDEXES).filter((n) => existing.has(n)).length} of them came with the migrations) (load ${load()})`,
  );
  const after = await explainAll(sql, list);
  const sizes = await sql<Array<{ name: string; mb: string }>>`
    select c.relname as name, round(pg_relation_size(c.oid) / 1048576.0, 1)::text as mb
    from pg_class c where c.relname = any(${['operations', 'operation_events', 'invocations', ...Object.keys(NEW_INDEXES)]})`;
  console.log(`sizes (MB): ${sizes.map((s) => `${s.name} ${s.mb}`).join(', ')}`);
  console.log('');
  console.log('| statement | before: ms, scans | after: ms, scans |');
  console.log('|---|---|---|');
  for (const [name] of list) {
    const b = before.get(name)!;
    const a = after.get(name)!;
    console.log(`| ${name} | ${b.ms.toFixed(2)} ms, ${b.scans} | ${a.ms.toFixed(2)} ms, ${a.scans} |`);
  }
  console.log(`\n(load ${load()})`);
} finally {
  await sql.end();
  await scratch.drop();
}
