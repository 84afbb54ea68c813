/**
 * The fleet scheduler under load (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://… npx tsx bench/scheduler.ts [--boards 1000] [--ops 10000] [--replicas 3] [--combos 10] [--generators 2] [--rate 0] [--run-ms 0] [--prequeue] [--trace] [--server-entry <mm-server.mjs>]
 *
 * Needs the real PostgreSQL. Starts `--replicas` control planes (MM_REPLICA_ID fleet-1…N) on one
 * scratch database, inserts `--boards` boards straight into it with `--combos` label
 * combinations (`combo=c0…`), and links them all through bench/many-agents.ts's load
 * generator, here answering each op.start at once with a succeeded op.result (no files, no
 * run): what is measured is the scheduler and the operation lifecycle around it, not runners.
 * Then `--ops` executes with `board_selector: { combo: cK }` (round robin over the combos) are
 * posted through the replicas in turn, 32 at a time, and the bench waits until all ended.
 * `--rate N` paces the posts at N a second instead (still up to 32 in flight), to measure the
 * scheduler below the machine's saturation rather than the queue of a saturated machine.
 * `--run-ms N` makes each operation last N ms on its board on average (0.5–1.5×), so that work queues for boards
 * (with 1,000 boards and 30 s, the fleet takes ~33 a second): most operations then become
 * runnable when a board's previous one ends, which is the scheduler's everyday path.
 * `--prequeue` posts every operation before any board links, so that what is measured is the
 * drain of a full queue alone (each board's first operation then counts from its creation).
 *
 * Figures:
 * - runnable → assigned: per operation, `assigned_at − max(created_at, the end of the
 *   previous operation on the board it got)` (or the board's link time for its first one),
 *   i.e. from the moment the operation existed and its board was free; p50, p99, max;
 * - assignments per second across the replicas (first to last assignment), and per replica
 *   (which replica dispatched is not stored: the split is by the replica holding the board);
 * - database load during the drain (pg_stat_database of the scratch database): transactions,
 *   rows read (fetched + returned) and rows written, in all and per operation;
 * - what the replicas ask PostgreSQL (they reach it through bench/support/pg-count-proxy.ts):
 *   statements, round trips and transactions (`begin`s) per operation during the drain, and
 *   for ONE selector execute on a quiet fleet (before the load; best of 5), from its POST to its
 *   end, with the statements it took in order (`--trace` prints them).
 */
import { type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';
import { serverCluster, type ServerCluster, type ServerProcess } from '../test/support/processes.ts';
import { insertBoards, startGenerators, waitAllLinked } from './many-agents.ts';
import { startPgCountProxy, type PgCounts } from './support/pg-count-proxy.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const say = (line: string) => console.log(line);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  if (!realDatabaseUrl) throw new Error('bench/scheduler.ts needs the real PostgreSQL (DATABASE_URL)');
  const boardCount = Number(arg('boards', '1000'));
  const opCount = Number(arg('ops', '10000'));
  const replicaCount = Number(arg('replicas', '3'));
  const combos = Number(arg('combos', '10'));
  const generators = Number(arg('generators', '2'));
  const rate = Number(arg('rate', '0'));
  const runMs = Number(arg('run-ms', '0'));
  const prequeue = process.argv.includes('--prequeue');
  // Another checkout's server (e.g. a commit before a change, unpacked with `git archive`), to compare.
  const serverEntry = process.argv.includes('--server-entry') ? arg('server-entry', '') : undefined;
  const scratch = await createScratchDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-sched-'));
  const clusters: ServerCluster[] = [];
  const servers: ServerProcess[] = [];
  const children: ChildProcess[] = [];
  const sql = postgres(scratch.url, { max: 2, onnotice: () => {} });
  // The replicas talk to PostgreSQL through a counting proxy; the bench's own queries go direct.
  const proxy = await startPgCountProxy(scratch.url);
  const trace = process.argv.includes('--trace');
  const tally = (c: PgCounts) => ({ statements: c.statements, roundTrips: c.roundTrips, begins: c.executed.filter((t) => /^\s*begin/i.test(t)).length });
  // Statements of the background every replica runs whatever the operations (sessions, webhooks' board
  // sweep, relays, rollouts' sweep, reservations' pass, power incidents, retention): left out of the one-operation count.
  // (The reservations' pass by its own statements: the assignment's SQL names `reservations` too.)
  const BACKGROUND = /board_sessions|webhook|relay_|rollout|camera|board_calls|board_reboots|board_incidents|"reservations"|select least\(\s*\(select min\(ends_at\) from reservations|retention|pg_stat_activity|audit_events|users"/i;
  try {
    say(`fleet scheduler: ${boardCount} boards (${combos} label combinations), ${opCount} operations, ${replicaCount} replicas; load ${os.loadavg()[0]!.toFixed(2)}`);
    for (let r = 1; r <= replicaCount; r++) {
      const cluster = await serverCluster(
        'embedded',
        { DATABASE_URL: proxy.url, MM_DATA_DIR: dataDir, MM_REPLICA_ID: `fleet-${r}`, ...(process.env.MM_SCHEDULER_SWEEP_S ? { MM_SCHEDULER_SWEEP_S: process.env.MM_SCHEDULER_SWEEP_S } : {}) },
        [],
        ...(serverEntry ? [serverEntry] : []),
      );
      clusters.push(cluster);
      servers.push(await cluster.start());
    }
    const tokens = await insertBoards(scratch.url, boardCount);
    await sql`update boards b set labels = jsonb_build_object('combo', 'c' || (substring(name from 6)::int % ${combos}))`;
    const linkBoards = async () => {
      const totals = startGenerators(
        servers.map((s) => s.url),
        tokens,
        generators,
        children,
        { answerOps: true, runMs },
      );
      const linkMs = await waitAllLinked(totals, boardCount, performance.now(), 'linking', say);
      say(`  all ${boardCount} boards linked in ${(linkMs / 1000).toFixed(1)} s`);
    };
    if (!prequeue) await linkBoards();
    const [inv] = await sql<Array<{ id: number }>>`insert into invocations (name) values ('bench') returning id`;

    // One selector execute on a quiet fleet, from its POST to its end (best of 5: a sweep may fall in one).
    if (!prequeue) {
      let best: (ReturnType<typeof tally> & { ours: string[]; texts: string[] }) | undefined;
      for (let k = 0; k < 5; k++) {
        await new Promise((r) => setTimeout(r, 300));
        proxy.reset();
        const res = await servers[0]!.api(`/api/invocations/${inv!.id}/execute/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', prefer: 'respond-async' },
          body: JSON.stringify({ board_selector: { combo: 'c0' } }),
        });
        const { id } = (await res.json()) as { id: number };
        for (;;) {
          const [row] = await sql`select status from operations where id = ${id}`;
          if (row && !['queued', 'running'].includes(String(row['status']))) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await new Promise((r) => setTimeout(r, 300)); // what the end sets off (markIdle, the next pass)
        const c = proxy.counts();
        // The background's own transactions: a `begin` right before a background statement, and its `commit`.
        const ours = c.executed.filter((text, i, all) => {
          if (BACKGROUND.test(text)) return false;
          if (/^\s*(begin|commit)/i.test(text)) return !BACKGROUND.test(all[i + 1] ?? '') && !BACKGROUND.test(all[i - 1] ?? '');
          return true;
        });
        const t = { ...tally(c), ours, texts: c.executed };
        if (!best || t.ours.length < best.ours.length) best = t;
      }
      const txs = best!.ours.filter((x) => /^\s*begin/i.test(x)).length;
      say(`  one selector execute, quiet fleet, POST to end (best of 5): ${best!.ours.length} statements of the operation (${txs} transactions) among ${best!.statements} sent by the replicas meanwhile`);
      if (trace) for (const t of best!.ours) say(`      ${t.replace(/\s+/g, ' ').slice(0, 160)}`);
      await sql`delete from operation_events`;
      await sql`delete from operations`;
    }

    const tableReads = () => sql<Array<{ relname: string; reads: string; scans: string }>>`select relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text as reads,
      (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text as scans from pg_stat_user_tables where relname in ('boards', 'operations', 'board_sessions', 'operation_events')`;
    const tablesBefore = await tableReads();
    const sentAt = new Map<number, number>();
    const [before] = await sql`select xact_commit + xact_rollback as xacts, tup_fetched + tup_returned as reads, tup_inserted + tup_updated + tup_deleted as writes from pg_stat_database where datname = current_database()`;
    proxy.reset();
    const started = performance.now();
    let next = 0;
    let refused = 0;
    const post = async () => {
      for (;;) {
        const i = next++;
        if (i >= opCount) return;
        if (rate > 0) {
          const due = started + (i / rate) * 1000;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        }
        const server = servers[i % servers.length]!;
        const sent = Date.now();
        const res = await server.api(`/api/invocations/${inv!.id}/execute/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', prefer: 'respond-async' },
          body: JSON.stringify({ board_selector: { combo: `c${i % combos}` } }),
        });
        if (res.status !== 202) {
          refused++;
          await res.arrayBuffer();
        } else sentAt.set(((await res.json()) as { id: number }).id, sent);
      }
    };
    await Promise.all(Array.from({ length: 32 }, post));
    const postedMs = performance.now() - started;
    const postsEndedAt = Date.now();
    say(`  posted ${opCount} in ${(postedMs / 1000).toFixed(1)} s (${refused} refused)`);
    if (prequeue) await linkBoards();
    for (;;) {
      const [{ open }] = (await sql`select count(*)::int as open from operations where status in ('queued', 'running')`) as unknown as [{ open: number }];
      if (open === 0) break;
      if (performance.now() - started > 1_800_000) throw new Error(`${open} operations still open after 30 min`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const drainMs = performance.now() - started;
    const drainCounts = tally(proxy.counts());
    await new Promise((r) => setTimeout(r, 1000)); // pg_stat counters are flushed on a delay
    const tablesAfter = await tableReads();
    const [after] = await sql`select xact_commit + xact_rollback as xacts, tup_fetched + tup_returned as reads, tup_inserted + tup_updated + tup_deleted as writes from pg_stat_database where datname = current_database()`;

    const rows = await sql<Array<{ id: number; wait_ms: number; assigned_ms: number; prev_end_ms: number | null }>>`
      with runs as (
        select o.id, o.board_id, o.created_at, o.assigned_at,
          lag(o.finished_at) over (partition by o.board_id order by o.assigned_at) as prev_end
        from operations o where o.assigned_at is not null)
      select r.id, extract(epoch from (r.assigned_at - greatest(r.created_at, coalesce(r.prev_end, r.created_at)))) * 1000 as wait_ms,
        extract(epoch from r.assigned_at) * 1000 as assigned_ms, extract(epoch from r.prev_end) * 1000 as prev_end_ms from runs r`;
    const waits = rows.map((r) => Number(r.wait_ms)).sort((a, b) => a - b);
    // Wall clock: from the moment the client sent the POST (or the board's previous run ended) to the assignment.
    const wall = rows
      .filter((r) => sentAt.has(Number(r.id)))
      .map((r) => Number(r.assigned_ms) - Math.max(sentAt.get(Number(r.id))!, r.prev_end_ms === null ? 0 : Number(r.prev_end_ms)))
      .sort((a, b) => a - b);
    const waitsAll = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${xs.at(-1)?.toFixed(1)} ms`;
    const [span] = await sql`select extract(epoch from max(assigned_at) - min(assigned_at)) as s, count(*)::int as n,
      count(*) filter (where status = 'succeeded')::int as ok from operations`;
    const [phases] = await sql`select
        percentile_cont(0.5) within group (order by extract(epoch from started_at - assigned_at) * 1000) as claim_ms,
        percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at) * 1000) as run_ms
      from operations where assigned_at is not null`;
    const perReplica = await sql`select s.replica_id, count(*)::int as n from operations o join board_sessions s on s.board_id = o.board_id group by 1 order by 1`;
    const d = (k: string) => Number(after![k]) - Number(before![k]);
    say(`  drained in ${(drainMs / 1000).toFixed(1)} s; ${span!.n} operations, ${span!.ok} succeeded`);
    say(`  runnable → assigned, database timestamps: ${waitsAll(waits)} (${waits.length} assignments)`);
    // Split by what made the operation runnable: its creation (a board was idle) or the end of a
    // board's previous operation (it waited for a board).
    const byFreed = rows.filter((r) => r.prev_end_ms !== null && Number(r.prev_end_ms) > Number(r.assigned_ms) - Number(r.wait_ms) - 1);
    const freedWaits = byFreed.map((r) => Number(r.wait_ms)).sort((a, b) => a - b);
    const freedIds = new Set(byFreed.map((r) => r.id));
    const newWaits = rows.filter((r) => !freedIds.has(r.id)).map((r) => Number(r.wait_ms)).sort((a, b) => a - b);
    if (freedWaits.length) say(`    of them, runnable when a board's previous operation ended: ${waitsAll(freedWaits)} (${freedWaits.length})`);
    const quiet = byFreed.filter((r) => Number(r.assigned_ms) > postsEndedAt).map((r) => Number(r.wait_ms)).sort((a, b) => a - b);
    if (quiet.length) say(`      and assigned after the last POST (nothing but the drain going on): ${waitsAll(quiet)} (${quiet.length})`);
    if (newWaits.length) {
      const why = prequeue ? 'each board’s first, posted before any board linked: this is the posting and linking time' : 'a board was idle';
      say(`    of them, runnable when created (${why}): ${waitsAll(newWaits)} (${newWaits.length})`);
    }
    say(`  runnable → assigned, wall clock from the POST being sent: ${waitsAll(wall)}`);
    say(`  after assignment (p50): claimed and started ${Number(phases!.claim_ms).toFixed(1)} ms later, ended ${Number(phases!.run_ms).toFixed(1)} ms after that (the generator answers ${runMs > 0 ? `after ${runMs} ms` : 'at once'})`);
    say(`  assignments/s across ${replicaCount} replicas: ${(Number(span!.n) / Number(span!.s)).toFixed(0)} (first to last assignment, ${Number(span!.s).toFixed(1)} s)`);
    say(`  by the replica holding the board: ${perReplica.map((r) => `${r.replica_id} ${r.n}`).join(', ')}`);
    say(`  database during the drain: ${d('xacts')} transactions (${(d('xacts') / opCount).toFixed(1)}/op), ${d('reads')} rows read (${(d('reads') / opCount).toFixed(0)}/op), ${d('writes')} rows written (${(d('writes') / opCount).toFixed(1)}/op)`);
    say(`  statements the replicas sent during the drain: ${(drainCounts.statements / opCount).toFixed(1)}/op, ${(drainCounts.roundTrips / opCount).toFixed(1)} round trips/op, ${(drainCounts.begins / opCount).toFixed(1)} transactions/op`);
    const tableLine = tablesAfter.map((t) => {
      const b = tablesBefore.find((x) => x.relname === t.relname);
      const reads = Number(t.reads) - Number(b?.reads ?? 0);
      const scans = Number(t.scans) - Number(b?.scans ?? 0);
      return `${t.relname} ${(scans / opCount).toFixed(1)} scans, ${(reads / opCount).toFixed(0)} rows`;
    });
    say(`  per operation by table (pg_stat_user_tables, scans = index + sequential): ${tableLine.join('; ')}`);
    say(`  load ${os.loadavg()[0]!.toFixed(2)}`);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await sql.end();
    await proxy.close();
    for (const c of clusters) await c.cleanup().catch(() => {});
    await scratch.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
