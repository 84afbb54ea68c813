/**
 * The fleet scheduler's queries under EXPLAIN (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://… npx tsx bench/scheduler-queries.ts [--boards 1000] [--ops 10000] [--combos 10] [--idle 10]
 *
 * Fills a scratch database as a busy fleet looks: `--boards` linked boards over `--combos`
 * label combinations, all but `--idle` of them running a selector operation, and `--ops`
 * selector operations waiting. Then runs each query of a pass (and of the sweep) with
 * EXPLAIN (ANALYZE, BUFFERS) and prints its time, shared buffers touched and rows it read, with
 * the idle-board query as it was before `boards_idle_idx` for comparison. Run it at two board
 * counts: a flat cost is the same figure at both.
 */
import postgres from 'postgres';
import { openDatabase } from '../packages/server/src/db/database.ts';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};

type Plan = { Plan: PlanNode; 'Execution Time': number };
type PlanNode = { 'Actual Rows'?: number; 'Actual Loops'?: number; 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number; 'Rows Removed by Filter'?: number; 'Node Type': string; Plans?: PlanNode[] };

/** Rows the plan's scans produced or threw away (what "rows read" means here), over all loops. */
function rowsRead(n: PlanNode): number {
  const own = /Scan/.test(n['Node Type']) ? ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1) : 0;
  return own + (n.Plans ?? []).reduce((s, p) => s + rowsRead(p), 0);
}

async function main(): Promise<void> {
  if (!realDatabaseUrl) throw new Error('bench/scheduler-queries.ts needs the real PostgreSQL (DATABASE_URL)');
  const boardCount = Number(arg('boards', '1000'));
  const opCount = Number(arg('ops', '10000'));
  const combos = Number(arg('combos', '10'));
  const idle = Number(arg('idle', '10'));
  const scratch = await createScratchDatabase();
  const database = await openDatabase({ databaseUrl: scratch.url, embeddedDir: '' });
  const pg = postgres(scratch.url, { max: 1, onnotice: () => {} });
  // Every value below is a number or a constant of this file: plain text queries.
  const run = (text: string) => pg.unsafe(text) as unknown as Promise<Array<Record<string, unknown>>>;
  try {
    await run(`insert into boards (name, token_hash, labels, idle_since)
      select 'b' || i, 'h' || i, jsonb_build_object('combo', 'c' || (i % ${combos})), now() - (i || ' seconds')::interval from generate_series(1, ${boardCount}) i`);
    await run(`insert into board_sessions (board_id, replica_id, connected_at) select id, 'r1', now() from boards`);
    // All but `idle` boards run a selector operation (and are flagged busy, as an assignment does).
    await run(`with busy as (select id, labels from boards order by name offset ${idle})
      insert into operations (kind, status, board_id, board_selector, assigned_at, started_at)
      select 'execute', 'running', id, labels, now(), now() from busy`);
    await run(`update boards set scheduler_busy = true where id in (select board_id from operations)`);
    await run(`insert into operations (kind, status, board_selector, priority, queue_deadline)
      select 'execute', 'queued', jsonb_build_object('combo', 'c' || (i % ${combos})), 0, now() + interval '1 day' from generate_series(1, ${opCount}) i`);
    await run(`vacuum analyze boards, board_sessions, operations`);
    const sel = `'${JSON.stringify({ combo: 'c3' })}'`;
    const idleBoard = (await run(`select id, labels from boards where not scheduler_busy limit 1`))[0]!;
    const busyFilter = `not exists (select 1 from board_reboots r where r.board_id = b.id and r.expires_at > now())
        and not exists (select 1 from operations o where o.board_id = b.id and o.status in ('queued', 'running'))`;
    const fresh = `s.heartbeat_at >= now() - interval '15 seconds'`;
    const queries: Array<[string, string]> = [
      [
        'idle boards of a selector, before (all boards of the combination, sorted)',
        `select b.id, b.labels from boards b join board_sessions s on s.board_id = b.id and ${fresh}
          where not b.pending and not b.maintenance and b.health <> 'bad' and b.labels @> ${sel}::jsonb and ${busyFilter}
          order by date_trunc('second', coalesce(b.idle_since, b.created_at)), random()`,
      ],
      [
        'idle boards of a selector, now (boards_idle_idx, limit 1)',
        `select b.id, b.labels from boards b join board_sessions s on s.board_id = b.id and ${fresh}
          where not b.pending and not b.maintenance and b.health <> 'bad' and not b.scheduler_busy and b.labels @> ${sel}::jsonb and ${busyFilter}
          order by coalesce(b.idle_since, b.created_at) limit 1`,
      ],
      [
        'all idle boards, before (full pass)',
        `select b.id, b.labels from boards b join board_sessions s on s.board_id = b.id and ${fresh}
          where not b.pending and not b.maintenance and b.health <> 'bad' and ${busyFilter}
          order by date_trunc('second', coalesce(b.idle_since, b.created_at)), random()`,
      ],
      [
        'all idle boards, now (full pass)',
        `select b.id, b.labels from boards b join board_sessions s on s.board_id = b.id and ${fresh}
          where not b.pending and not b.maintenance and b.health <> 'bad' and not b.scheduler_busy and ${busyFilter}
          order by coalesce(b.idle_since, b.created_at)`,
      ],
      [
        'waiting operation for a board (assignToBoard lookup)',
        `select o.id from operations o where o.status = 'queued' and o.board_id is null and o.board_selector is not null
          and o.board_selector <@ '${JSON.stringify(idleBoard['labels'])}'::jsonb order by o.priority desc, o.id limit 1`,
      ],
      [
        'distinct waiting selectors',
        `with recursive s(sel) as (
          (select board_selector from operations where status = 'queued' and board_id is null and board_selector is not null order by board_selector limit 1)
          union all
          select (select board_selector from operations where status = 'queued' and board_id is null and board_selector is not null and board_selector > s.sel order by board_selector limit 1)
          from s where s.sel is not null) select sel from s where sel is not null`,
      ],
      ['sweep: expired queued work', `select id from operations where status = 'queued' and queue_deadline <= now() order by queue_deadline limit 1000`],
      [
        'sweep: stranded assignments (select part)',
        `select o.id from operations o where o.status = 'queued' and o.board_selector is not null and o.board_id is not null
          and (exists (select 1 from boards b where b.id = o.board_id and (b.maintenance or b.health = 'bad'))
            or not exists (select 1 from board_sessions s where s.board_id = o.board_id and ${fresh}))`,
      ],
    ];
    console.log(`scheduler queries: ${boardCount} boards (${idle} idle, ${combos} combinations), ${opCount} waiting operations`);
    for (const [name, q] of queries) {
      const [row] = await run(`explain (analyze, buffers, format json) ${q}`);
      const plan = (row!['QUERY PLAN'] as Plan[])[0]!;
      const buffers = (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
      console.log(`  ${name}: ${plan['Execution Time'].toFixed(2)} ms, ${buffers} buffers, ${rowsRead(plan.Plan)} rows read`);
    }
  } finally {
    await pg.end();
    await database.close();
    await scratch.drop();
  }
}

await main();
process.exit(0);
