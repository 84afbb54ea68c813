/**
 * A lease outlives the replica it was made on and ends on time (docs/reservations.md): two
 * replicas on one PostgreSQL share a ManualClock; the one that granted it stops and starts
 * again; the lease holds throughout and ends at `ends_at`, the next request in line getting
 * the board; a lease past its end holds nothing even before a pass marks it ended.
 */
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { reservedForOthers } from '../src/rollouts/rollout-store.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from './support/accounts.ts';

const HOUR = 3600;

describe.skipIf(skipWithoutRealDatabase('two replicas on one database'))('reservations across replicas (PostgreSQL)', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let one: TestServer;
  let two: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const clock = new ManualClock(Date.now(), { jumps: true });
  const start = (name: string) => startTestServer('postgres', { MM_REPLICA_ID: name, MM_API_TOKEN: ADMIN_TOKEN }, { scratchDatabase: scratch, keep: true, clock });

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    one = await start('replica-one');
    two = await start('replica-two');
    alice = await makeUser(one, 'alice', 'operator');
    bob = await makeUser(one, 'bob', 'operator');
  }, 180_000);
  afterAll(async () => {
    await two?.stop();
    await one?.stop();
    await scratch?.drop();
  });

  it('holds across a restart of the replica that granted it, and ends at ends_at', async () => {
    const board = await json(await call(one, 'POST', '/api/boards/', bearer(ADMIN_TOKEN), { name: 'shared' }));
    const lease = await json(await call(one, 'POST', '/api/reservations/', bearer(alice.token), { board_id: board.id, duration_s: HOUR }));
    expect(lease).toMatchObject({ status: 'active', user: 'alice' });
    const next = await call(two, 'POST', '/api/reservations/', bearer(bob.token), { board_id: board.id, duration_s: 60, wait_s: 4 * HOUR });
    expect(next.status).toBe(202);
    const nextId = (await json(next)).id as number;

    // The replica that granted it goes away and comes back: nothing of the lease was in it.
    await one.stop();
    expect((await json(await call(two, 'GET', `/api/boards/${board.id}/`, bearer(ADMIN_TOKEN)))).reservation).toEqual({ id: lease.id, user: 'alice', ends_at: lease.ends_at });
    clock.advance((HOUR / 2) * 1000);
    one = await start('replica-one');
    expect((await json(await call(one, 'GET', `/api/reservations/${lease.id}/`, bearer(ADMIN_TOKEN)))).status).toBe('active');

    // Past ends_at, before any pass has looked: it already holds nothing.
    const endsAt = Date.parse(lease.ends_at);
    expect(await reservedForOthers(one.ctx.database.db, board.id, 'bob', new Date(endsAt - 1))).toBe(true);
    expect(await reservedForOthers(one.ctx.database.db, board.id, 'bob', new Date(endsAt))).toBe(false);
    expect(await reservedForOthers(one.ctx.database.db, board.id, 'alice', new Date(endsAt - 1))).toBe(false);

    // One second short of its end: still held. At its end: over, and bob's turn (on whichever replica looked first).
    clock.advance(endsAt - clock.now() - 1000);
    await Promise.all([one.ctx.reservations.idle(), two.ctx.reservations.idle()]);
    expect((await json(await call(two, 'GET', `/api/reservations/${lease.id}/`, bearer(ADMIN_TOKEN)))).status).toBe('active');
    clock.advance(1000);
    await eventually(async () => {
      expect(await json(await call(two, 'GET', `/api/reservations/${lease.id}/`, bearer(ADMIN_TOKEN)))).toMatchObject({ status: 'ended', end_reason: 'expired', ended_at: lease.ends_at });
      expect(await json(await call(one, 'GET', `/api/reservations/${nextId}/`, bearer(ADMIN_TOKEN)))).toMatchObject({ status: 'active', user: 'bob', starts_at: lease.ends_at });
    });
    // One lease at a time: the rows say so.
    const active = await json(await call(one, 'GET', `/api/reservations/?board_id=${board.id}&status=active`, bearer(ADMIN_TOKEN)));
    expect(active.total).toBe(1);
  }, 240_000);
});
