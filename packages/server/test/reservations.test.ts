/**
 * Reservations end to end through the API (docs/reservations.md), on both databases, with
 * the server's clock a ManualClock: the fair queue, leases ending by themselves, selector
 * work and rollout steps keeping off others' boards, and work naming a held board waiting.
 */
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { lockBoard } from '../src/db/board-lock.ts';
import type { Db } from '../src/db/database.ts';
import type { OperationKind } from '../src/operations/kinds.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from './support/accounts.ts';
import { FakeAgent } from './support/fake-agent.ts';

const HOUR = 3600;
/** A server-side kind that ends at once: who may run on a board is all these tests look at. */
const testKinds: Record<string, OperationKind> = { test_noop: { run: async () => ({ ran: true }) } };

describe.each(dbKinds)('reservations (%s database)', (kind) => {
  let server: TestServer;
  let clock: ManualClock;
  const users: Record<string, TestUser> = {};
  const boards: Record<string, { id: string; token: string }> = {};
  const agents: Record<string, FakeAgent> = {};
  const as = (u: string) => (u === 'admin' ? bearer(ADMIN_TOKEN) : bearer(users[u]!.token));
  const reserve = async (u: string, body: Record<string, unknown>) => {
    const res = await call(server, 'POST', '/api/reservations/', as(u), body);
    return { status: res.status, body: await json(res) };
  };
  const get = async (id: number) => json(await call(server, 'GET', `/api/reservations/${id}/`, as('admin')));
  const board = async (name: string) => json(await call(server, 'GET', `/api/boards/${boards[name]!.id}/`, as('admin')));
  const advance = async (seconds: number) => {
    clock.advance(seconds * 1000);
    await server.ctx.reservations.idle();
    await server.ctx.reservations.pass();
    // A long jump of the clock ends the keep-alive sockets idle past MM_HTTP_IDLE_TIMEOUT_S on
    // the server's side: let the client see them close before the next request.
    await new Promise((r) => setTimeout(r, 300));
    // The jump may also have ended agent links as silent (their heartbeat timeout is on this clock): link them again.
    for (const [name, b] of Object.entries(boards)) {
      if ((await board(name)).status !== 'offline') continue;
      await agents[name]?.close().catch(() => {});
      agents[name] = await FakeAgent.online(server.url, b.token);
    }
  };
  /** The operation once it has ended (real time: the server's waits run on its ManualClock). */
  const ended = (id: number) =>
    eventually(async () => {
      const op = await server.ctx.operations.get(id);
      expect(['succeeded', 'failed', 'cancelled']).toContain(op?.status);
      return op;
    }, 60_000);

  beforeAll(async () => {
    clock = new ManualClock(Date.now(), { jumps: true });
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN, MM_RESERVATION_MAX_S: String(8 * HOUR) }, { clock, operationKinds: testKinds });
    for (const [name, role] of [['alice', 'operator'], ['bob', 'operator'], ['carol', 'operator'], ['dave', 'operator'], ['eve', 'operator'], ['vic', 'viewer']] as const) {
      users[name] = await makeUser(server, name, role);
    }
    for (const [name, labels] of [['b1', { lab: 'x' }], ['b2', { lab: 'x' }]] as const) {
      const b = await json(await call(server, 'POST', '/api/boards/', as('admin'), { name }));
      boards[name] = b;
      expect((await call(server, 'PATCH', `/api/boards/${b.id}/`, as('admin'), { labels })).status).toBe(200);
      agents[name] = await FakeAgent.online(server.url, b.token);
    }
  }, 180_000);
  afterAll(async () => {
    for (const a of Object.values(agents)) await a.close().catch(() => {});
    await server?.stop();
  });

  it('refuses viewers, bad requests and leases over MM_RESERVATION_MAX_S', async () => {
    expect((await reserve('vic', { board_id: boards.b1!.id, duration_s: 60 })).status).toBe(403);
    expect((await reserve('alice', { board_id: boards.b1!.id, duration_s: 8 * HOUR + 1 })).status).toBe(400);
    expect((await reserve('alice', { board_id: boards.b1!.id, board_selector: { lab: 'x' }, duration_s: 60 })).status).toBe(400);
    expect((await reserve('alice', { board_selector: { lab: 'nowhere' }, duration_s: 60 })).body.code).toBe('no_matching_board');
    expect((await reserve('alice', { board_id: '00000000-0000-4000-8000-000000000000', duration_s: 60 })).status).toBe(404);
    expect((await json(await call(server, 'GET', '/api/reservations/', as('vic')))).total).toBe(0);
  });

  it('a fair queue: first come first served per line, with positions and estimates; leases end by themselves', async () => {
    const t0 = clock.now();
    const a = await reserve('alice', { board_id: boards.b1!.id, duration_s: HOUR, note: 'bring-up' });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ status: 'active', board_id: boards.b1!.id, user: 'alice', note: 'bring-up', ends_at: new Date(t0 + HOUR * 1000).toISOString() });
    expect((await board('b1')).reservation).toEqual({ id: a.body.id, user: 'alice', ends_at: a.body.ends_at });
    expect((await board('b2')).reservation).toBeNull();
    // Holding it already: renew instead.
    expect((await reserve('alice', { board_id: boards.b1!.id, duration_s: 60 })).body.code).toBe('already_reserved');

    // Any idle board with lab=x: b2.
    const b = await reserve('bob', { board_selector: { lab: 'x' }, duration_s: 2 * HOUR });
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({ status: 'active', board_id: boards.b2!.id, board_name: 'b2' });

    // Both held: the next ones wait, in order.
    const c = await reserve('carol', { board_selector: { lab: 'x' }, duration_s: HOUR, wait_s: 4 * HOUR });
    const d = await reserve('dave', { board_selector: { lab: 'x' }, duration_s: HOUR, wait_s: 4 * HOUR });
    const e = await reserve('eve', { board_id: boards.b1!.id, duration_s: HOUR, wait_s: 4 * HOUR });
    expect([c.status, d.status, e.status]).toEqual([202, 202, 202]);
    expect(c.body).toMatchObject({ status: 'waiting', position: 1, estimated_start_at: a.body.ends_at });
    expect(d.body).toMatchObject({ status: 'waiting', position: 2, estimated_start_at: b.body.ends_at });
    expect(e.body).toMatchObject({ status: 'waiting', position: 1, estimated_start_at: a.body.ends_at });

    // Only the holder (or an admin) renews or releases.
    expect((await call(server, 'POST', `/api/reservations/${b.body.id}/renew/`, as('carol'), { duration_s: 60 })).status).toBe(403);
    expect((await call(server, 'DELETE', `/api/reservations/${b.body.id}/`, as('carol'))).status).toBe(403);

    // Bob releases b2: the oldest waiting request it satisfies (carol) takes it at once.
    expect((await call(server, 'DELETE', `/api/reservations/${b.body.id}/`, as('bob'))).status).toBe(204);
    expect(await get(b.body.id)).toMatchObject({ status: 'ended', end_reason: 'released', ended_by: 'bob' });
    expect(await get(c.body.id)).toMatchObject({ status: 'active', board_id: boards.b2!.id });
    expect(await get(d.body.id)).toMatchObject({ status: 'waiting', position: 1 });

    // Alice's lease ends by itself: dave (older than eve) takes b1, eve waits on.
    await advance(HOUR - 1);
    expect((await get(a.body.id)).status).toBe('active');
    await advance(1);
    expect(await get(a.body.id)).toMatchObject({ status: 'ended', end_reason: 'expired' });
    expect(await get(d.body.id)).toMatchObject({ status: 'active', board_id: boards.b1!.id, user: 'dave' });
    expect(await get(e.body.id)).toMatchObject({ status: 'waiting', position: 1 });
    const mine = await json(await call(server, 'GET', '/api/reservations/?mine=1&status=active', as('dave')));
    expect(mine.reservations.map((r: { id: number }) => r.id)).toEqual([d.body.id]);

    // Renewal moves the end; a lease that has ended cannot be renewed.
    const renewed = await json(await call(server, 'POST', `/api/reservations/${d.body.id}/renew/`, as('dave'), { duration_s: 2 * HOUR }));
    expect(renewed.ends_at).toBe(new Date(clock.now() + 2 * HOUR * 1000).toISOString());
    expect((await call(server, 'POST', `/api/reservations/${a.body.id}/renew/`, as('alice'), { duration_s: 60 })).status).toBe(409);

    // An admin breaks dave's lease (audited): eve's turn.
    expect((await call(server, 'DELETE', `/api/reservations/${d.body.id}/`, as('admin'))).status).toBe(204);
    expect(await get(d.body.id)).toMatchObject({ status: 'ended', end_reason: 'broken', ended_by: 'MM_API_TOKEN' });
    expect(await get(e.body.id)).toMatchObject({ status: 'active', board_id: boards.b1!.id });
    const audit = await json(await call(server, 'GET', '/api/audit/?action=reservation.break', as('admin')));
    expect(audit.events).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'reservation.break' })]));

    // A waiting request withdrawn ends `cancelled`; a wait past wait_s ends by itself.
    const f = await reserve('alice', { board_id: boards.b1!.id, duration_s: 60 });
    expect((await call(server, 'DELETE', `/api/reservations/${f.body.id}/`, as('alice'))).status).toBe(204);
    expect((await get(f.body.id)).end_reason).toBe('cancelled');
    const g = await reserve('alice', { board_id: boards.b1!.id, duration_s: 60, wait_s: 30 });
    await advance(31);
    expect(await get(g.body.id)).toMatchObject({ status: 'ended', end_reason: 'wait_timeout' });

    // Clean up: every lease ends.
    await advance(8 * HOUR);
    expect((await json(await call(server, 'GET', '/api/reservations/?status=active', as('admin')))).total).toBe(0);
    expect((await board('b1')).reservation).toBeNull();
  }, 240_000);

  it('a release hands the board to the next in line even while its queue holds the board\'s lock for a moment', async () => {
    const held = await reserve('bob', { board_id: boards.b2!.id, duration_s: HOUR });
    const b1held = await reserve('dave', { board_id: boards.b1!.id, duration_s: HOUR });
    const next = await reserve('carol', { board_selector: { lab: 'x' }, duration_s: HOUR, wait_s: HOUR });
    expect([held.status, b1held.status, next.status]).toEqual([201, 201, 202]);
    // What the board's queue claim and the scheduler do the moment a board is freed: hold its
    // lock in a transaction of their own. The grant waits for it rather than giving up.
    let unlock!: () => void;
    const locked = new Promise<void>((r) => (unlock = r));
    let holding!: () => void;
    const isHeld = new Promise<void>((r) => (holding = r));
    const holder = server.ctx.database.db.transaction(async (tx) => {
      await lockBoard(tx as unknown as Db, boards.b2!.id);
      holding();
      await locked;
    });
    await isHeld;
    const released = call(server, 'DELETE', `/api/reservations/${held.body.id}/`, as('bob'));
    setTimeout(unlock, 300);
    expect((await released).status).toBe(204);
    await holder;
    expect(await get(next.body.id)).toMatchObject({ status: 'active', board_id: boards.b2!.id, user: 'carol' });
    await advance(HOUR);
    expect((await json(await call(server, 'GET', '/api/reservations/?status=active', as('admin')))).total).toBe(0);
  }, 120_000);

  it('others\' selector work keeps off a held board; work naming it waits until the lease ends; the holder\'s runs', async () => {
    const ops = server.ctx.operations;
    const lease = await reserve('alice', { board_id: boards.b1!.id, duration_s: HOUR });
    const lease2 = await reserve('alice', { board_id: boards.b2!.id, duration_s: 2 * HOUR });
    expect([lease.status, lease2.status]).toEqual([201, 201]);

    // Bob's work naming b1 waits, queued (not refused); alice's own runs meanwhile.
    const bobs = await ops.create({ kind: 'test_noop', boardId: boards.b1!.id, createdBy: 'bob' });
    const alices = await ops.create({ kind: 'test_noop', boardId: boards.b1!.id, createdBy: 'alice' });
    expect((await ended(alices.id))?.status).toBe('succeeded');
    expect((await ops.get(bobs.id))?.status).toBe('queued');

    // Bob's selector work: no board (both held by alice). Alice's selector work: one of hers.
    const bobSel = await ops.create({ kind: 'test_noop', boardId: null, boardSelector: { lab: 'x' }, createdBy: 'bob' });
    server.ctx.scheduler.kick({ selector: { lab: 'x' } });
    await server.ctx.scheduler.idle();
    await server.ctx.scheduler.dispatch();
    expect(await ops.get(bobSel.id)).toMatchObject({ status: 'queued', board_id: null });
    // Its `waiting` says why: both matching boards are held by someone else (alice), not idle.
    const shown = await json(await call(server, 'GET', `/api/operations/${bobSel.id}/`, as('bob')));
    expect(shown.waiting).toMatchObject({ matching: 2, online: 2, idle: 0, reserved: 2, reason: '2 boards match: 2 reserved by someone else.' });
    const aliceSel = await ops.create({ kind: 'test_noop', boardId: null, boardSelector: { lab: 'x' }, createdBy: 'alice' });
    await server.ctx.scheduler.dispatch();
    expect((await ended(aliceSel.id))?.status).toBe('succeeded');
    expect((await ops.get(bobSel.id))?.board_id).toBeNull();

    // b1's lease ends (its ends_at passes): bob's named work runs, and his selector work finds a board.
    await advance(HOUR);
    expect((await ended(bobs.id))?.status).toBe('succeeded');
    await eventually(async () => {
      await server.ctx.scheduler.dispatch();
      expect((await ops.get(bobSel.id))?.status).toBe('succeeded');
    });
    expect((await ops.get(bobSel.id))?.board_id).toBe(boards.b1!.id);
    await advance(HOUR);
  }, 240_000);

  it('a rollout skips boards others hold, and runs on the one its creator holds', async () => {
    const inv = await json(await call(server, 'POST', '/api/invocations/create/', as('admin'), { name: 'rollout-probe', description: '' }));
    const held = await reserve('alice', { board_id: boards.b1!.id, duration_s: HOUR });
    expect(held.status).toBe(201);
    const res = await call(server, 'POST', '/api/rollouts/', as('bob'), { kind: 'execute', board_selector: { lab: 'x' }, invocation_id: inv.id });
    expect(res.status).toBe(201);
    const rollout = await json(res);
    const byName = Object.fromEntries(rollout.boards.map((b: { board_name: string; status: string }) => [b.board_name, b.status]));
    expect(byName.b1).toBe('skipped');
    // b2 is nobody's: its step starts (it may be running already).
    expect(['queued', 'running', 'succeeded']).toContain(byName.b2);
    // Alice's rollout goes to her board (and to b2, nobody's).
    const hers = await json(await call(server, 'POST', '/api/rollouts/', as('alice'), { kind: 'execute', board_selector: { lab: 'x' }, invocation_id: inv.id }));
    for (const b of hers.boards as Array<{ status: string }>) expect(['queued', 'running', 'succeeded']).toContain(b.status);
    for (const r of [rollout, hers]) await call(server, 'POST', `/api/rollouts/${r.id}/cancel/`, as('admin'));
    await advance(HOUR);
  }, 240_000);
});
