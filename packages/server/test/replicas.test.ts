/**
 * Two control planes in this process on one real PostgreSQL database (docs/replicas.md):
 * the claim of a board's next operation under its advisory lock, presence and agent RPCs
 * for a board linked to the other replica, operation events and cancels across replicas,
 * and the event bus healing a dropped notification and a lost listening connection.
 */
import { CloseCode } from '@mm/protocol';
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { takeSseBlocks, type SseBlock } from '../../../test/support/sse.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { boardCalls, boardSessions, operationEvents, operations, relayEvents, relaySubscriptions } from '../src/db/schema.ts';
import type { OperationEvent } from '../src/operations/operation-event.ts';
import { claimNextQueued, insertOperation } from '../src/operations/store.ts';
import { replicaAppName } from '../src/events/pg-event-bus.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

function post(server: TestServer, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return server.api(path, {
    method: 'POST',
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Reads an event stream's blocks as they come (a test's view of what went over the wire). */
function readSse(res: Response): { blocks: SseBlock[]; waitFor(match: (b: SseBlock) => boolean, from?: number): Promise<number>; close(): Promise<void> } {
  const blocks: SseBlock[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) return;
      const taken = takeSseBlocks(buffer + value);
      buffer = taken.rest;
      blocks.push(...taken.blocks);
    }
  })();
  return {
    blocks,
    waitFor: (match, from = 0) =>
      eventually(
        () => {
          const i = blocks.findIndex((b, j) => j >= from && match(b));
          expect(i).toBeGreaterThanOrEqual(0);
          return i;
        },
        20_000,
        50,
      ),
    close: async () => {
      await reader.cancel().catch(() => {});
      await pump;
    },
  };
}

const upstream = (state: string) => (b: SseBlock) => b.event === 'upstream' && b.data !== undefined && (JSON.parse(b.data) as { state: string }).state === state;

describe.skipIf(skipWithoutRealDatabase('two replicas on one database'))('two replicas on one PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let one: TestServer;
  let two: TestServer;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    // A reboot wait short enough that a missed outcome shows as reboot_timeout within the test.
    const env = { MM_CANCEL_GRACE_S: '30', MM_REBOOT_TIMEOUT_S: '20' };
    one = await startTestServer('postgres', { MM_REPLICA_ID: 'replica-one', ...env }, { scratchDatabase: scratch, keep: true });
    two = await startTestServer('postgres', { MM_REPLICA_ID: 'replica-two', ...env }, { scratchDatabase: scratch, keep: true });
  });

  afterAll(async () => {
    await two?.stop();
    await one?.stop();
    await scratch?.drop();
  });

  it('claims at most one operation of a board however many claims race, from two connection pools', async () => {
    const b = await registerBoard(one, 'claims');
    for (let i = 0; i < 3; i++) await insertOperation(one.ctx.database.db, { kind: 'transfer', boardId: b.id, invocationId: null, params: {} });
    const dbs = [one.ctx.database.db, two.ctx.database.db];
    const claims = await Promise.all(Array.from({ length: 16 }, (_, i) => claimNextQueued(dbs[i % 2]!, b.id, 'test')));
    const claimed = claims.filter((c) => c !== undefined);
    expect(claimed).toHaveLength(1);
    const running = await json(await two.api(`/api/operations/?board_id=${b.id}&status=running`));
    expect(running.total).toBe(1);
    // The oldest one, FIFO.
    const all = await json(await two.api(`/api/operations/?board_id=${b.id}`));
    expect(claimed[0]!.id).toBe(Math.min(...all.operations.map((o: { id: number }) => o.id)));
  });

  it('shows a board linked to the other replica online, and offline once its link closes', async () => {
    const b = await registerBoard(one, 'presence');
    const agent = await FakeAgent.online(one.url, b.token);
    await eventually(async () => expect((await json(await two.api(`/api/boards/${b.id}/`))).status).toBe('online'), 10_000, 50);
    const listed = await json(await two.api('/api/boards/'));
    expect(listed.boards.find((x: { id: string }) => x.id === b.id).status).toBe('online');
    await agent.close();
    await eventually(async () => expect((await json(await two.api(`/api/boards/${b.id}/`))).status).toBe('offline'), 10_000, 50);
  });

  it('counts a session whose replica stopped refreshing it as offline, and removes it', async () => {
    const b = await registerBoard(one, 'stale-session');
    const db = one.ctx.database.db;
    // Left by a replica killed a minute ago.
    await db.insert(boardSessions).values({ boardId: b.id, replicaId: 'replica-killed', connectedAt: new Date(Date.now() - 120_000), heartbeatAt: new Date(Date.now() - 60_000) });
    expect((await json(await two.api(`/api/boards/${b.id}/`))).status).toBe('offline');
    await two.ctx.sessions.beat();
    expect(await db.select().from(boardSessions).where(eq(boardSessions.boardId, b.id))).toEqual([]);
  });

  it('a claim of its own that landed after the link closed counts for nothing on that replica (no moment back online)', async () => {
    const b = await registerBoard(one, 'late-claim');
    const agent = await FakeAgent.online(one.url, b.token);
    await agent.close();
    await eventually(async () => expect((await json(await one.api(`/api/boards/${b.id}/`))).status).toBe('offline'), 10_000, 50);
    // What a claim slower than its link's close leaves (its release follows, or the next heartbeat).
    const db = one.ctx.database.db;
    await db.insert(boardSessions).values({ boardId: b.id, replicaId: 'replica-one', connectedAt: new Date(), heartbeatAt: sql`now()` });
    expect((await json(await one.api(`/api/boards/${b.id}/`))).status).toBe('offline');
    expect(await one.ctx.sessions.holder(b.id)).toBeUndefined();
    await one.ctx.sessions.beat();
    expect(await db.select().from(boardSessions).where(eq(boardSessions.boardId, b.id))).toEqual([]);
  });

  it('a board that says hello to the other replica closes its older link here (replaced)', async () => {
    const b = await registerBoard(one, 'moving');
    const first = await FakeAgent.online(one.url, b.token);
    await eventually(async () => expect(await two.ctx.agents.statusAnywhere(b.id)).toBe('online'), 10_000, 50);
    // The same board reaches the other replica (a balancer moved it; the old link is half dead).
    const second = await FakeAgent.online(two.url, b.token);
    expect(await first.closed).toBe(CloseCode.replaced);
    expect(two.ctx.agents.isLocal(b.id)).toBe(true);
    await eventually(() => expect(one.ctx.agents.isLocal(b.id)).toBe(false), 10_000, 50);
    // The session row is the new link's: the old link's close did not remove it.
    const [row] = await one.ctx.database.db.select().from(boardSessions).where(eq(boardSessions.boardId, b.id));
    expect(row?.replicaId).toBe('replica-two');
    await second.close();
  });

  it('calls agent RPCs on a board linked to the other replica, errors mapped as on its own', async () => {
    const b = await registerBoard(one, 'remote-rpc');
    const agents = two.ctx.agents;
    await expect(agents.call(b.id, 'agent.info', {})).rejects.toMatchObject({ status: 503, code: 'board_offline' });
    const agent = await FakeAgent.online(one.url, b.token);
    await eventually(async () => expect(await agents.statusAnywhere(b.id)).toBe('online'), 10_000, 50);

    const ok = agents.call(b.id, 'agent.info', {});
    const req1 = await agent.next('rpc.request');
    expect(req1).toMatchObject({ method: 'agent.info', params: {} });
    agent.send({ type: 'rpc.response', id: req1.id, ok: true, result: { agent_version: '1', boot_id: 'boot-1', uptime_s: 5 } });
    expect(await ok).toEqual({ agent_version: '1', boot_id: 'boot-1', uptime_s: 5 });

    const failing = agents.call(b.id, 'pac.activate', { pac: 'nope' });
    const req2 = await agent.next('rpc.request', (m) => m.id !== req1.id);
    agent.send({ type: 'rpc.response', id: req2.id, ok: false, error: { code: 'pac_not_found', message: 'no PAC nope' } });
    await expect(failing).rejects.toMatchObject({ status: 502, code: 'pac_not_found' });

    await expect(agents.call(b.id, 'agent.info', {}, { timeoutMs: 300 })).rejects.toMatchObject({ status: 504, code: 'board_timeout' });
    // Answered and expired calls leave no rows.
    await eventually(async () => {
      const [row] = await two.ctx.database.db.select({ n: count() }).from(boardCalls);
      expect(row!.n).toBe(0);
    }, 10_000, 100);
    await agent.close();
  });

  it('runs work asked of the other replica on the board linked here; its events and a cancel go across', async () => {
    const b = await registerBoard(two, 'remote-work');
    const agent = await FakeAgent.online(one.url, b.token);
    await eventually(async () => expect(await two.ctx.agents.statusAnywhere(b.id)).toBe('online'), 10_000, 50);
    const inv = await createInvocation(two, 'remote-work');

    // Asked of `two`: `one` holds the link and sends op.start.
    const res = await post(two, `/api/invocations/${inv}/transfer/`, { board_id: b.id }, { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const op = await json(res);
    const seen: OperationEvent[] = [];
    const unsubscribe = two.ctx.operations.events.subscribe(op.id, (e) => seen.push(e));
    const start = await agent.next('op.start');
    expect(start.op_id).toBe(op.id);
    agent.send({ type: 'op.log', op_id: op.id, stream: 'stdout', data: 'hello from the board\n' });
    await eventually(() => expect(seen.some((e) => e.type === 'log' && (e.data as { data: string }).data.includes('hello from the board'))).toBe(true), 10_000, 50);

    // Cancelled through `two`: `one` tells the board.
    const waiting = two.ctx.operations.waitForEnd(op.id, 20_000);
    const cancel = await post(two, `/api/operations/${op.id}/cancel/`);
    expect(cancel.status).toBe(202);
    await agent.next('op.cancel', (m) => m.op_id === op.id);
    agent.send({ type: 'op.result', outcome: agent.outcome(op.id, 'cancelled') });
    const ended = await waiting;
    expect(ended).toMatchObject({ id: op.id, status: 'cancelled' });
    unsubscribe();
    // Events in order, each once, the end last.
    const seqs = seen.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seen.at(-1)!.type).toBe('end');
    await agent.close();
  });

  it('a PAC activation whose board comes back through the other replica with the same boot id ends reboot_not_observed', async () => {
    const b = await registerBoard(one, 'same-boot-elsewhere');
    const first = await FakeAgent.online(one.url, b.token, { boot_id: 'boot-kept' });
    await eventually(async () => expect(await two.ctx.agents.statusAnywhere(b.id)).toBe('online'), 10_000, 50);

    // Asked of `two`; `one` holds the link and runs the activation.
    const res = await post(two, '/api/pacs/activate/', { board_id: b.id, pac: 'sample' }, { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const op = await json(res);
    const activate = await first.next('rpc.request', (m) => m.method === 'pac.activate');
    first.send({ type: 'rpc.response', id: activate.id, ok: true, result: { output: 'activated\n' } });
    const reboot = await first.next('rpc.request', (m) => m.method === 'board.reboot');
    first.send({ type: 'rpc.response', id: reboot.id, ok: true, result: { accepted: true } });
    await eventually(async () => expect((await json(await two.api(`/api/boards/${b.id}/`))).status).toBe('rebooting'), 10_000, 50);

    // It "reboots" without rebooting, and the balancer sends it to the other replica.
    await first.close();
    const second = await FakeAgent.online(two.url, b.token, { boot_id: 'boot-kept' });
    const ended = await eventually(
      async () => {
        const o = await json(await one.api(`/api/operations/${op.id}/`));
        expect(o.status).not.toMatch(/^(queued|running)$/);
        return o;
      },
      30_000,
      100,
    );
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'reboot_not_observed' } });
    // The board takes work again on the replica it is linked to now.
    await eventually(async () => expect((await json(await two.api(`/api/boards/${b.id}/`))).status).toBe('online'), 10_000, 50);
    await second.close();
  });

  it('stream clients fed by a replica that died hear upstream down when its session expires, then up from the new holder', async () => {
    const b = await registerBoard(two, 'ghost-held');
    const db = two.ctx.database.db;
    // Linked to a replica that will die without a word: only its board_sessions row says so.
    await db.insert(boardSessions).values({ boardId: b.id, replicaId: 'replica-ghost', connectedAt: new Date(), bootId: 'boot-1', heartbeatAt: sql`now()` });
    const { scripts } = await json(await two.api('/api/device-scripts/?device_type=gpio'));
    const script = scripts[0] as { id: string; port: number };
    const res = await two.api(`/api/device-scripts/${script.id}/stream/?board_id=${b.id}`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const client = readSse(res);
    const remote = two.ctx.deviceRelay.remoteStreams!;
    try {
      // `two` asked for the stream; the ghost's upstream says it is up.
      await eventually(async () => {
        const wants = await db.select().from(relaySubscriptions).where(and(eq(relaySubscriptions.boardId, b.id), eq(relaySubscriptions.replicaId, 'replica-two')));
        expect(wants).toHaveLength(1);
      }, 10_000, 50);
      await db.insert(relayEvents).values({ boardId: b.id, scriptId: script.id, frame: Buffer.from('event: upstream\ndata: {"state":"up"}\n\n'), state: 'up' });
      await remote.refresh();
      const up = await client.waitFor(upstream('up'));

      // The ghost stops refreshing its row: once stale, no replica holds the link.
      await db.update(boardSessions).set({ heartbeatAt: sql`now() - interval '1 minute'` }).where(eq(boardSessions.boardId, b.id));
      await remote.refresh();
      const down = await client.waitFor(upstream('down'), up + 1);
      expect(JSON.parse(client.blocks[down]!.data!)).toMatchObject({ state: 'down', message: "no replica holds the board's link" });

      // The board links to `one`, which takes the upstream over: up, then the script's events.
      const agent = await FakeAgent.online(one.url, b.token);
      const subscribe = await agent.next('sse.subscribe', (m) => m.port === script.port);
      agent.send({ type: 'sse.status', sub_id: subscribe.sub_id, state: 'open' });
      const upAgain = await client.waitFor(upstream('up'), down + 1);
      agent.send({ type: 'sse.event', sub_id: subscribe.sub_id, id: '7', event: 'state', data: '{"motion":"stop"}' });
      await client.waitFor((blk) => blk.event === 'state' && blk.id === '7', upAgain + 1);
      await agent.close();
    } finally {
      await client.close();
    }
  });

  it('settles a server-side run of a replica that is gone, at the second look (its kind says how)', async () => {
    const b = await registerBoard(one, 'orphans');
    const db = one.ctx.database.db;
    const ghost = await insertOperation(db, { kind: 'pac_activate', boardId: b.id, invocationId: null, params: { pac: 'x' }, runnerReplica: 'replica-gone' });
    const alive = await insertOperation(db, { kind: 'pac_activate', boardId: b.id, invocationId: null, params: { pac: 'y' }, runnerReplica: 'replica-two' });
    await db.update(operations).set({ status: 'running', startedAt: new Date() }).where(inArray(operations.id, [ghost.id, alive.id]));
    await one.ctx.operations.settleOrphanedRuns();
    // Once is not enough: a replica reconnecting its listener is not taken for dead.
    expect((await one.ctx.operations.get(ghost.id))?.status).toBe('running');
    await one.ctx.operations.settleOrphanedRuns();
    expect(await one.ctx.operations.get(ghost.id)).toMatchObject({ status: 'failed', error: { code: 'server_restarted' } });
    // replica-two is alive (its listening connection is open): its run is left alone.
    expect((await one.ctx.operations.get(alive.id))?.status).toBe('running');
    await one.ctx.operations.finish(alive.id, 'cancelled', null, { code: 'cancelled', message: 'test over' });
  });

  it('heals a dropped notification with the next one, and a lost listening connection with a resync', async () => {
    const b = await registerBoard(one, 'bus');
    const op = await insertOperation(one.ctx.database.db, { kind: 'transfer', boardId: b.id, invocationId: null, params: {} });
    const seen: number[] = [];
    const unsubscribe = two.ctx.bus.subscribe('operation.event', op.id, ({ event }) => seen.push(event.seq));
    one.ctx.operations.events.startNew(op.id);
    await one.ctx.operations.events.append(op.id, 'log', { stream: 'server', data: 'one\n' });
    await eventually(() => expect(seen).toEqual([1]), 10_000, 20);

    // Stored without a notification (as if it was lost): the next notification brings both.
    const silently = (seq: number) =>
      one.ctx.database.db.insert(operationEvents).values({ operationId: op.id, seq, type: 'log', data: { stream: 'server', data: `${seq}\n` } });
    await silently(2);
    await silently(3);
    one.ctx.bus.publish('operation.event', op.id, { operationId: op.id, event: { seq: 3, type: 'log', data: { stream: 'server', data: '3\n' } } });
    await eventually(() => expect(seen).toEqual([1, 2, 3]), 10_000, 20);

    // Stored, never notified: nothing arrives…
    await silently(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen).toEqual([1, 2, 3]);
    // …until `two` loses its listening connection and catches up once it listens again.
    const admin = postgres(scratch.url, { max: 1, onnotice: () => {} });
    try {
      const killed = await admin`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${replicaAppName('replica-two')}`;
      // One, or two on a loaded machine: a listener found silent is replaced, and the old one
      // takes up to a second to end (pg-event-bus.ts, checkListener).
      expect(killed.length).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.end();
    }
    await eventually(() => expect(seen).toEqual([1, 2, 3, 4]), 30_000, 50);
    unsubscribe();
  });
});
