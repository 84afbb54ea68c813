import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anyCandidate, boardFingerprintFor, fittingBoards, preferBoardsWithRequiredApp, runNeedsOf, waitingRequiredApps } from '../src/accelerators/board-fit.ts';
import type { Db } from '../src/db/database.ts';
import { boards, boardSessions, invocationFiles, invocations, contents, operations, type ModelSummary } from '../src/db/schema.ts';
import { PgSchedulerStore, type IdleBoardFilter } from '../src/fleet/scheduler-store.ts';
import { assignToBoard } from '../src/operations/store.ts';
import type { Operations } from '../src/operations/operations.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

/** The scheduler store's idle-board walk (its reads need no Operations). */
const idleBoards = (db: Db, only?: IdleBoardFilter) =>
  new PgSchedulerStore({ db, operations: undefined as unknown as Operations, sessionStaleMs: 15_000, queueTimeoutMs: 60_000 }).idleBoards(only);


const B4096 = '0x101000016010407';
const B3136 = '0x101000016010406';

const model = (...fingerprints: Array<string | null>): ModelSummary => ({
  format: 'xmodel',
  dpu_subgraphs: fingerprints.map((fp, i) => ({ name: `subgraph_${i}`, dpu_fingerprint: fp, dpu_name: 'DPUCZDX8G' })),
  inputs: [],
});

/**
 * Which boards a model fits (accelerators/board-fit.ts), on both databases: the fragments the
 * execute route and the fleet scheduler share, and the scheduler's assignment with them.
 */
describe.each(dbKinds)('boards a model fits (%s database)', (kind) => {
  let server: TestServer;
  let db: Db;

  beforeAll(async () => {
    server = await startTestServer(kind);
    db = server.ctx.database.db;
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    await db.execute(sql`truncate operations, board_sessions, boards, invocation_files, invocations, contents cascade`);
  });

  /** A board with the accelerator labels and facts an agent would report. */
  async function board(name: string, accel: { fingerprint?: string; app?: string; remembered?: Record<string, string> }, labels: Record<string, string> = {}) {
    const apps = Object.entries(accel.remembered ?? {}).map(([app, fp]) => ({ name: app, type: 'XRT_FLAT', active: app === accel.app, dpu_fingerprint: fp }));
    const [row] = await db
      .insert(boards)
      .values({
        name,
        tokenHash: `${name}-${Math.random()}`,
        labels: { ...labels, ...(accel.fingerprint ? { 'mm/dpu-fingerprint': accel.fingerprint } : {}), ...(accel.app ? { 'mm/app': accel.app } : {}) },
        facts: { accelerator: { apps } },
      })
      .returning();
    await db.insert(boardSessions).values({ boardId: row!.id, replicaId: 'r', connectedAt: new Date(), heartbeatAt: sql`now()` });
    return row!;
  }

  async function invocation(name: string, weights?: ModelSummary, requiresApp?: string) {
    const [inv] = await db.insert(invocations).values({ name, requiresApp: requiresApp ?? null }).returning();
    if (weights) {
      const sha256 = `${inv!.id}`.padStart(64, '0');
      await db.insert(contents).values({ sha256, size: 1 });
      await db.insert(invocationFiles).values({ invocationId: inv!.id, kind: 'weights', filename: 'm.xmodel', size: 1, sha256, contentType: 'application/octet-stream', model: weights });
    }
    return inv!.id;
  }

  it("reads a model's needs", async () => {
    const inv = await invocation('two-dpus', model(B4096, B3136, null, B4096), 'app-a');
    expect(await runNeedsOf(db, inv)).toEqual({ fingerprints: [B3136, B4096], requiresApp: 'app-a' });
    expect(await runNeedsOf(db, await invocation('plain'))).toEqual({ fingerprints: [], requiresApp: null });
  });

  it("a board's fingerprint for a run: its label, or the one it showed with the app the run needs", async () => {
    const b = await board('b', { fingerprint: B4096, app: 'app-a', remembered: { 'app-a': B4096, 'app-b': B3136 } });
    expect(await boardFingerprintFor(db, b.id, await invocation('x', model(B4096)))).toEqual({ name: 'b', fingerprint: B4096 });
    expect((await boardFingerprintFor(db, b.id, await invocation('y', model(B4096), 'app-b')))!.fingerprint).toBe(B3136);
    expect((await boardFingerprintFor(db, b.id, await invocation('z', model(B4096), 'app-new')))!.fingerprint).toBeNull();
  });

  it('fitting boards and candidates: a known match fits; an unknown fingerprint is a candidate, not a fit', async () => {
    const fits = await board('fits', { fingerprint: B4096 }, { pool: 'p' });
    await board('other', { fingerprint: B3136 }, { pool: 'p' });
    const unknown = await board('unknown', {}, { pool: 'q' });
    const inv = await invocation('m', model(B4096));
    expect(await fittingBoards(db, inv)).toEqual([{ id: fits.id, name: 'fits' }]);
    expect(await anyCandidate(db, inv, { pool: 'p' })).toBe(true);
    expect(await anyCandidate(db, inv, { 'mm/dpu-fingerprint': B3136 })).toBe(false);
    expect(await anyCandidate(db, inv, { pool: 'q' })).toBe(true);
    expect(await anyCandidate(db, await invocation('cpu-only', model()), { 'mm/dpu-fingerprint': B3136 })).toBe(true);
    void unknown;
  });

  it("the scheduler gives selector work only to boards the model fits (or of unknown fingerprint)", async () => {
    const wrong = await board('wrong', { fingerprint: B3136 }, { pool: 'p' });
    const right = await board('right', { fingerprint: B4096 }, { pool: 'p' });
    const inv = await invocation('m', model(B4096));
    await db.insert(operations).values({ kind: 'execute', status: 'queued', boardId: null, invocationId: inv, boardSelector: { pool: 'p' } });
    const idle = await idleBoards(db);
    const wrongIdle = idle.find((b) => b.id === wrong.id)!;
    const rightIdle = idle.find((b) => b.id === right.id)!;
    // The wrong board is asked first and takes nothing; the right one takes it.
    expect(await assignToBoard(db, wrongIdle)).toBeUndefined();
    expect((await assignToBoard(db, rightIdle))?.boardId).toBe(right.id);
  });

  it('the scheduler walks boards that have a required app active first', async () => {
    await board('plain', { fingerprint: B4096, app: 'app-a' });
    const inv = await invocation('needs-b', model(B4096), 'app-b');
    await db.insert(operations).values({ kind: 'execute', status: 'queued', boardId: null, invocationId: inv, boardSelector: {} });
    const apps = await waitingRequiredApps(db);
    expect([...apps]).toEqual(['app-b']);
    const order = preferBoardsWithRequiredApp<{ id: string; labels: Record<string, string> }>(
      [
        { id: '1', labels: { 'mm/app': 'app-a' } },
        { id: '2', labels: {} },
        { id: '3', labels: { 'mm/app': 'app-b' } },
      ],
      apps,
    );
    expect(order.map((b) => b.id)).toEqual(['3', '1', '2']);
  });
});
