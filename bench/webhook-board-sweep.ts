/**
 * What the webhooks' board sweep (packages/server/src/webhooks/board-sweep.ts) costs with many
 * boards (run by hand, prints figures; not a test):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhook-board-sweep.ts [--boards 10000]
 *
 * A scratch database, migrated, with `--boards` boards, half of them linked (fresh sessions).
 * Timed (best of 3, wall clock): the first sweep (every board new: taken in bulk, nobody
 * subscribed), an idle sweep (nothing changed: what every replica pays every 5 s), a sweep after
 * every board said hello again (a server restart), and one after 100 boards changed health
 * with a subscription wanting it (100 events stored, one transaction each).
 * Timings on a shared machine are upper bounds: the load average is printed with them.
 */
import os from 'node:os';
import postgres from 'postgres';
import { openDatabase } from '../packages/server/src/db/database.ts';
import { sweepBoards } from '../packages/server/src/webhooks/board-sweep.ts';
import { storeEvent } from '../packages/server/src/webhooks/webhook-store.ts';
import { createScratchDatabase, realDatabaseUrl } from '../test/support/databases.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const nBoards = Number(arg('boards', '10000'));
if (!realDatabaseUrl) {
  console.error('bench/webhook-board-sweep.ts: set DATABASE_URL to a PostgreSQL server');
  process.exit(2);
}
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

const scratch = await createScratchDatabase();
const raw = postgres(scratch.url, { max: 1, onnotice: () => {} });
const database = await openDatabase({ databaseUrl: scratch.url, embeddedDir: '' });
try {
  const db = database.db;
  await raw.unsafe(`insert into boards (name, token_hash, last_seen_at, connected_at)
    select 'b' || i, md5(i::text), now() - interval '1 hour', now() - interval '1 hour' from generate_series(1, ${nBoards}) i`);
  await raw.unsafe(`insert into board_sessions (board_id, replica_id, connected_at, heartbeat_at)
    select id, 'r1', now(), now() from boards where (substr(name, 2)::int % 2) = 0`);
  await raw.unsafe('vacuum analyze');
  let events = 0;
  const emit = async (tx: typeof db, type: string, data: Record<string, unknown>, key: string) => {
    const r = await storeEvent(tx, type, data, { now: new Date(), retryForMs: 86_400_000 }, { key });
    if (r) events++;
    return r;
  };
  const opts = (wants: string[]) => ({ sessionStaleMs: 15_000, offlineGraceMs: 120_000, wants: (t: string) => wants.includes(t) });
  /** Best of `times`; a run that returns `{ ms }` says itself how long its timed part took. */
  const time = async (what: string, run: () => Promise<unknown>, times = 3) => {
    let best = Infinity;
    for (let i = 0; i < times; i++) {
      const t0 = performance.now();
      const took = await run();
      best = Math.min(best, took && typeof took === 'object' && 'ms' in took ? (took as { ms: number }).ms : performance.now() - t0);
    }
    console.log(`${what.padEnd(58)} ${best.toFixed(1).padStart(8)} ms   (load ${load()})`);
  };
  console.log(`${nBoards} boards, ${Math.floor(nBoards / 2)} linked; PostgreSQL at ${new URL(realDatabaseUrl).host}`);
  await time('first sweep: every board new, nobody subscribed', () => sweepBoards(db, opts([]), emit), 1);
  // As autovacuum would, after 10,000 new rows.
  await raw.unsafe('vacuum analyze');
  await time('idle sweep: nothing changed', () => sweepBoards(db, opts([]), emit));
  await time('every board said hello again (one sweep after)', async () => {
    await raw.unsafe(`update boards set connected_at = now()`);
    const t0 = performance.now();
    await sweepBoards(db, opts([]), emit);
    return { ms: performance.now() - t0 };
  });
  await raw.unsafe(`insert into webhook_subscriptions (url, events, secret_sealed) values ('https://example.org/', '["board.health_changed"]', 'x')`);
  await time('100 boards changed health, subscribed: 100 events', async () => {
    await raw.unsafe(`update boards set health = case when health = 'bad' then 'good' else 'bad' end where id in (select id from boards order by name limit 100)`);
    const t0 = performance.now();
    await sweepBoards(db, opts(['board.health_changed']), emit);
    return { ms: performance.now() - t0 };
  });
  console.log(`events stored: ${events}`);
} finally {
  await database.close();
  await raw.end();
  await scratch.drop();
}
