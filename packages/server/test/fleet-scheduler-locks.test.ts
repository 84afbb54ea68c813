/**
 * The fleet scheduler's assignment across replicas (fleet/scheduler-store.ts), on the real
 * PostgreSQL: several dispatchers, each with its own connection pool as a replica has, give
 * out the same waiting work to the same idle boards at once. Each operation must get one
 * board, each board at most one operation.
 *
 * How it was checked that this fails without the locks: with the
 * `pg_try_advisory_xact_lock` line of assignToBoard replaced by `select true as got`, the
 * board-per-operation assertion failed on each of the three rounds (boards given 2 to 4 operations).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type Db } from '../src/db/database.ts';
import { boards, boardSessions, operations } from '../src/db/schema.ts';
import { anyWaitingFor, clearStaleBusy, markIdleSince, PgSchedulerStore, type IdleBoardFilter } from '../src/fleet/scheduler-store.ts';
import { assignToBoard } from '../src/operations/store.ts';
import { rowsOf } from '../src/db/rows.ts';
import type { Operations } from '../src/operations/operations.ts';
import { createScratchDatabase, realDatabaseUrl } from '../../../test/support/databases.ts';

/** The scheduler store's idle-board walk (its reads need no Operations). */
const idleBoards = (db: Db, only?: IdleBoardFilter) =>
  new PgSchedulerStore({ db, operations: undefined as unknown as Operations, sessionStaleMs: 15_000, queueTimeoutMs: 60_000 }).idleBoards(only);


const REPLICAS = 4;
const BOARDS = 24;

describe.skipIf(!realDatabaseUrl)('fleet scheduler: assignment across replicas', () => {
  let scratch: { url: string; drop(): Promise<void> };
  const dbs: Database[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    dbs.push(await openDatabase({ databaseUrl: scratch.url, embeddedDir: '' }));
    for (let i = 1; i < REPLICAS; i++) dbs.push(await openDatabase({ databaseUrl: scratch.url, embeddedDir: '' }));
  }, 60_000);

  afterAll(async () => {
    for (const d of dbs) await d.close();
    await scratch?.drop();
  });

  const reset = async () => {
    const { db } = dbs[0]!;
    await db.execute(sql`truncate operations, board_sessions, boards cascade`);
    const rows = await db
      .insert(boards)
      .values(Array.from({ length: BOARDS }, (_, i) => ({ name: `b${i}`, tokenHash: `h${i}-${Math.random()}`, labels: { kind: i % 2 ? 'a' : 'b' } })))
      .returning();
    await db.insert(boardSessions).values(rows.map((b) => ({ boardId: b.id, replicaId: 'r', connectedAt: new Date(), heartbeatAt: sql`now()` })));
    return rows;
  };

  for (const round of [1, 2, 3]) {
    it(`round ${round}: ${REPLICAS} dispatchers at once: one board per operation, one operation per board`, async () => {
      await reset();
      const { db } = dbs[0]!;
      // More waiting work than boards: every board is wanted by every dispatcher.
      await db.insert(operations).values(
        Array.from({ length: BOARDS * 3 }, (_, i) => ({ kind: 'execute', status: 'queued', boardId: null, boardSelector: { kind: i % 2 ? 'a' : 'b' }, priority: i % 5 })),
      );
      const idle = await idleBoards(db);
      expect(idle).toHaveLength(BOARDS);
      // Every dispatcher walks the same boards in the same order, as replicas given the same trigger do.
      const assigned = (
        await Promise.all(
          dbs.map(async (d) => {
            const out = [];
            for (const board of idle) {
              const row = await assignToBoard(d.db, board);
              if (row) out.push(row);
            }
            return out;
          }),
        )
      ).flat();
      const perBoard = new Map<string, number>();
      for (const row of assigned) perBoard.set(row.boardId!, (perBoard.get(row.boardId!) ?? 0) + 1);
      expect([...perBoard.values()].filter((n) => n > 1)).toEqual([]);
      expect(new Set(assigned.map((r) => r.id)).size).toBe(assigned.length);
      // Every board got one: none was skipped for good because another dispatcher held it.
      expect(perBoard.size).toBe(BOARDS);
      const stored = rowsOf(await db.execute(sql`select board_id, count(*)::int as n from operations where board_id is not null group by board_id`));
      expect(stored).toHaveLength(BOARDS);
      expect(stored.every((r) => r['n'] === 1)).toBe(true);
      // A board's labels hold the selector of what it got; the highest priority went first.
      const byId = new Map(idle.map((b) => [b.id, b]));
      for (const row of assigned) expect(byId.get(row.boardId!)!.labels.kind).toBe(row.boardSelector!.kind);
      expect(Math.min(...assigned.map((r) => r.priority))).toBeGreaterThanOrEqual(2);
    });
  }

  it('an assigned board leaves the idle-board walk until its work ends; a limit stops the walk', async () => {
    const rows = await reset();
    const { db } = dbs[0]!;
    await db.insert(operations).values([{ kind: 'execute', status: 'queued', boardId: null, boardSelector: { kind: 'a' } }]);
    const candidates = await idleBoards(db, { selectors: [{ kind: 'a' }] });
    expect(candidates).toHaveLength(BOARDS / 2);
    expect(await idleBoards(db, { selectors: [{ kind: 'a' }], limit: 2 })).toHaveLength(2);
    const row = await assignToBoard(db, candidates[0]!);
    expect(row?.boardId).toBe(candidates[0]!.id);
    // Busy now: out of the walk (flag and work), still read by id (it is not idle: nothing comes back).
    expect((await idleBoards(db)).map((b) => b.id)).not.toContain(row!.boardId);
    expect(await idleBoards(db, { boardIds: [row!.boardId!] })).toEqual([]);
    // Its work ends: back in the walk, idle since now, so last among the idle ones (the others
    // have been idle for a while: idle_since keeps only the second, plus a random fraction).
    await db.execute(sql`update boards set idle_since = now() - interval '10 seconds' where id <> ${row!.boardId}`);
    await db.execute(sql`update operations set status = 'succeeded', finished_at = now() where id = ${row!.id}`);
    await markIdleSince(db, row!.boardId!);
    const after = await idleBoards(db);
    expect(after).toHaveLength(BOARDS);
    expect(after.at(-1)!.id).toBe(row!.boardId);
    // A flag left behind (an end not heard of) is cleared by the sweep once nothing runs there.
    await db.execute(sql`update boards set scheduler_busy = true where id = ${rows[1]!.id}`);
    expect((await idleBoards(db)).map((b) => b.id)).not.toContain(rows[1]!.id);
    expect(await clearStaleBusy(db)).toBe(1);
    expect((await idleBoards(db)).map((b) => b.id)).toContain(rows[1]!.id);
  });

  it('anyWaitingFor: work a board could take, not counting work another replica is assigning right now', async () => {
    await reset();
    const { db } = dbs[0]!;
    expect(await anyWaitingFor(db, { kind: 'a' })).toBe(false);
    const [op] = await db.insert(operations).values({ kind: 'execute', status: 'queued', boardId: null, boardSelector: { kind: 'a' } }).returning();
    expect(await anyWaitingFor(db, { kind: 'a', extra: 'x' })).toBe(true);
    expect(await anyWaitingFor(db, { kind: 'b' })).toBe(false);
    // Another replica holds the row (mid-assignment): nothing left for this pass to walk boards for.
    const other = dbs[1]!.db;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const tx = other.transaction(async (t) => {
      await t.execute(sql`select id from operations where id = ${op!.id} for update`);
      locked();
      await held;
    });
    await isLocked;
    expect(await anyWaitingFor(db, { kind: 'a' })).toBe(false);
    release();
    await tx;
    expect(await anyWaitingFor(db, { kind: 'a' })).toBe(true);
    // Given to a board: no longer waiting.
    await db.execute(sql`update operations set board_id = (select id from boards limit 1) where id = ${op!.id}`);
    expect(await anyWaitingFor(db, { kind: 'a' })).toBe(false);
  });
});
