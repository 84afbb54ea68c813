import http from 'node:http';
import { Readable } from 'node:stream';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationEvents, operations, rolloutBoards, rollouts } from '../src/db/schema.ts';
import { PRUNE_BATCH_ROWS, RetentionPruner } from '../src/retention/retention-pruner.ts';
import { recordContent, sweepOrphanContent } from '../src/invocations/invocation-files.ts';
import type { ContentStore } from '../src/storage/content-store.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

const DAY = 86_400_000;

/**
 * A GET on a connection of its own: the server and this test share one event loop, and a
 * reused keep-alive socket can meet the server's keep-alive timeout after a stall on this
 * loaded machine (ECONNRESET, a client-side race, not an unanswered request).
 */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

describe.each(dbKinds)('retention (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_RETENTION_DAYS: '90' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** An operation row as the operations service leaves it, dated `ageDays` back, with `events` log events. */
  async function operation(status: string, ageDays: number, events = 3): Promise<number> {
    const { db } = server.ctx.database;
    const at = new Date(Date.now() - ageDays * DAY);
    const final = ['succeeded', 'failed', 'cancelled'].includes(status);
    const [row] = await db
      .insert(operations)
      .values({ kind: 'execute', status, createdAt: at, startedAt: status === 'queued' ? null : at, finishedAt: final ? at : null })
      .returning({ id: operations.id });
    const id = row!.id;
    if (events > 0) {
      await db.execute(
        sql`insert into operation_events (operation_id, seq, type, data, created_at)
            select ${id}, g, 'log', jsonb_build_object('stream', 'stdout', 'text', 'line ' || g), ${at.toISOString()}::timestamptz
            from generate_series(1, ${events}) as g`,
      );
    }
    return id;
  }

  async function eventCount(opId: number): Promise<number> {
    const rows = await server.ctx.database.db.select({ id: operationEvents.id }).from(operationEvents).where(eq(operationEvents.operationId, opId));
    return rows.length;
  }

  async function existing(ids: number[]): Promise<number[]> {
    const rows = await server.ctx.database.db.select({ id: operations.id }).from(operations).where(inArray(operations.id, ids));
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }

  it('removes finished operations older than the retention with their events; never queued or running ones, nor recent ones', async () => {
    const oldDone = await operation('succeeded', 120);
    const oldFailed = await operation('failed', 91);
    const oldCancelled = await operation('cancelled', 400);
    const recentDone = await operation('succeeded', 89);
    const oldQueued = await operation('queued', 200);
    const oldRunning = await operation('running', 200);
    const counts = await server.ctx.retention.runOnce();
    expect(counts.operations).toBeGreaterThanOrEqual(3);
    expect(counts.operation_events).toBeGreaterThanOrEqual(9);
    expect(await existing([oldDone, oldFailed, oldCancelled, recentDone, oldQueued, oldRunning])).toEqual([recentDone, oldQueued, oldRunning]);
    expect(await eventCount(oldDone)).toBe(0);
    expect(await eventCount(recentDone)).toBe(3);
    expect(await eventCount(oldRunning)).toBe(3);
    expect((await server.api(`/api/operations/${oldDone}/`)).status).toBe(404);
    expect((await server.api(`/api/operations/${recentDone}/`)).status).toBe(200);
    const metrics = await (await server.api('/api/metrics/')).text();
    expect(metrics).toMatch(/mm_retention_pruned_total\{kind="operations"\} [3-9]/);
    expect(metrics).toMatch(/mm_retention_pruned_total\{kind="operation_events"\} (9|\d\d+)/);
  });

  /** A rollout row with `boards` boards; `finishedDaysAgo` null: still running. */
  async function rollout(status: string, finishedDaysAgo: number | null, boards = 3): Promise<number> {
    const { db } = server.ctx.database;
    const created = new Date(Date.now() - (finishedDaysAgo ?? 200) * DAY - 60_000);
    const [row] = await db
      .insert(rollouts)
      .values({ kind: 'pac_activate', status, boardSelector: { site: 'lab' }, params: { pac: 'p' }, createdAt: created, finishedAt: finishedDaysAgo === null ? null : new Date(Date.now() - finishedDaysAgo * DAY) })
      .returning({ id: rollouts.id });
    const id = row!.id;
    await db.insert(rolloutBoards).values(Array.from({ length: boards }, (_, i) => ({ rolloutId: id, position: i, boardName: `b${i}`, phase: 0, status: finishedDaysAgo === null ? 'running' : 'succeeded' })));
    return id;
  }

  async function rolloutState(ids: number[]): Promise<Array<[number, number]>> {
    const { db } = server.ctx.database;
    const kept = await db.select({ id: rollouts.id }).from(rollouts).where(inArray(rollouts.id, ids));
    const out: Array<[number, number]> = [];
    for (const { id } of kept.sort((a, b) => a.id - b.id)) {
      out.push([id, (await db.select({ p: rolloutBoards.position }).from(rolloutBoards).where(eq(rolloutBoards.rolloutId, id))).length]);
    }
    return out;
  }

  it('removes finished rollouts older than the retention with their boards; never running ones, nor recent ones', async () => {
    const oldDone = await rollout('succeeded', 120, 4);
    const oldAborted = await rollout('aborted', 95, 2);
    const recentFailed = await rollout('failed', 30);
    // Cancelled long ago but a step still ran until yesterday: finished_at is when it ended.
    const lateFinish = await rollout('cancelled', 1);
    const oldRunning = await rollout('running', null);
    const counts = await server.ctx.retention.runOnce();
    expect(counts.rollouts).toBeGreaterThanOrEqual(2);
    expect(counts.rollout_boards).toBeGreaterThanOrEqual(6);
    expect(await rolloutState([oldDone, oldAborted, recentFailed, lateFinish, oldRunning])).toEqual([
      [recentFailed, 3],
      [lateFinish, 3],
      [oldRunning, 3],
    ]);
    expect((await server.api(`/api/rollouts/${oldDone}/`)).status).toBe(404);
    expect((await server.api(`/api/rollouts/${recentFailed}/`)).status).toBe(200);
    const metrics = await (await server.api('/api/metrics/')).text();
    expect(metrics).toMatch(/mm_retention_pruned_total\{kind="rollouts"\} [2-9]/);
    expect(metrics).toMatch(/mm_retention_pruned_total\{kind="rollout_boards"\} ([6-9]|\d\d+)/);
    // With MM_RETENTION_DAYS=0 nothing goes.
    const ancient = await rollout('succeeded', 10_000);
    const keeper = new RetentionPruner({ db: server.ctx.database.db, log: server.ctx.log, retentionMs: 0, sweepContent: async () => 0 });
    expect((await keeper.runOnce()).rollouts).toBe(0);
    expect(await rolloutState([ancient])).toEqual([[ancient, 3]]);
  });

  it('keeps everything with MM_RETENTION_DAYS=0', async () => {
    const ancient = await operation('succeeded', 10_000);
    const keeper = new RetentionPruner({ db: server.ctx.database.db, log: server.ctx.log, retentionMs: 0, sweepContent: async () => 0 });
    expect(await keeper.runOnce()).toEqual({ operations: 0, operation_events: 0, content: 0, board_telemetry: 0, rollouts: 0, rollout_boards: 0, terminal_sessions: 0 });
    expect(await existing([ancient])).toEqual([ancient]);
    expect(await eventCount(ancient)).toBe(3);
  });

  it('collects stored content nothing records once it is past the grace period', async () => {
    const store = server.ctx.files as ContentStore;
    const orphan = await store.ingest(Readable.from([Buffer.from('nobody records this')]));
    await store.release(orphan.sha256);
    const pruner = new RetentionPruner({
      db: server.ctx.database.db,
      log: server.ctx.log,
      retentionMs: 90 * DAY,
      sweepContent: async () => (await sweepOrphanContent(server.ctx)).files,
    });
    expect((await pruner.runOnce()).content).toBe(0);
    expect(await store.has(orphan.sha256)).toBe(true);
    const zeroGrace = new RetentionPruner({
      db: server.ctx.database.db,
      log: server.ctx.log,
      retentionMs: 90 * DAY,
      sweepContent: async () => (await sweepOrphanContent(server.ctx, { orphanGraceMs: 0 })).files,
    });
    expect((await zeroGrace.runOnce()).content).toBe(1);
    expect(await store.has(orphan.sha256)).toBe(false);
  });

  it('keeps a PAC archive while a pac_install rollout names it; collects it once the rollout is pruned', async () => {
    const store = server.ctx.files as ContentStore;
    const archive = await store.ingest(Readable.from([Buffer.from(`an archive ${Date.now()}`)]));
    // As POST /api/rollouts/ does: recorded, then named by the rollout.
    await recordContent(server.ctx, archive.sha256, archive.size);
    await store.release(archive.sha256);
    const { db } = server.ctx.database;
    const [row] = await db
      .insert(rollouts)
      .values({ kind: 'pac_install', status: 'succeeded', boardSelector: {}, params: { archive_sha256: archive.sha256, size: archive.size, filename: 'a.tar.gz' }, finishedAt: new Date(Date.now() - 100 * DAY) })
      .returning({ id: rollouts.id });
    await sweepOrphanContent(server.ctx, { orphanGraceMs: 0 });
    expect(await store.has(archive.sha256)).toBe(true);
    const pruner = new RetentionPruner({
      db,
      log: server.ctx.log,
      retentionMs: 90 * DAY,
      sweepContent: async () => {
        const r = await sweepOrphanContent(server.ctx, { orphanGraceMs: 0 });
        return r.rows + r.files;
      },
    });
    const counts = await pruner.runOnce();
    expect(counts.rollouts).toBeGreaterThanOrEqual(1);
    expect(await rolloutState([row!.id])).toEqual([]);
    expect(await store.has(archive.sha256)).toBe(false);
  });

  it('prunes 20,000 events in small batches while the API keeps answering', async () => {
    const big = await operation('succeeded', 365, 20_000);
    const batches: number[] = [];
    const pruner = new RetentionPruner({
      db: server.ctx.database.db,
      log: server.ctx.log,
      retentionMs: 90 * DAY,
      sweepContent: async () => 0,
      onPruned: (k, n) => {
        if (k === 'operation_events') batches.push(n);
      },
    });
    let pruning = true;
    const latencies: number[] = [];
    const requests = (async () => {
      while (pruning) {
        const t0 = performance.now();
        expect(await freshGet(`${server.url}/api/operations/?limit=5`)).toBe(200);
        latencies.push(performance.now() - t0);
      }
    })();
    requests.catch(() => {}); // awaited below; a failure must not surface as unhandled meanwhile
    const t0 = performance.now();
    const counts = await pruner.runOnce().finally(() => {
      pruning = false;
    });
    const pruneMs = performance.now() - t0;
    await requests;
    expect(counts.operation_events).toBe(20_000);
    expect(await existing([big])).toEqual([]);
    expect(batches.length).toBeGreaterThanOrEqual(20_000 / PRUNE_BATCH_ROWS);
    expect(Math.max(...batches)).toBeLessThanOrEqual(PRUNE_BATCH_ROWS);
    // Requests were answered throughout, none waiting long behind the prune (a loose bound:
    // the machine is shared; one statement over all 20,000 rows would hold them far longer).
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
    console.log(`${kind}: pruned 20000 events in ${pruneMs.toFixed(0)} ms (${batches.length} batches); ${latencies.length} requests meanwhile, p50 ${latencies[Math.floor(latencies.length / 2)]?.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`);
    expect(latencies.length).toBeGreaterThanOrEqual(5);
    expect(latencies.at(-1)!).toBeLessThan(2000);
  });
});
