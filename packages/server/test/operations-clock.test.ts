/**
 * The server's timers on a ManualClock (no sleeps): the cancel grace, the progress
 * throttle, an RPC's timeout, a reboot watch; the one live record per operation, dropped
 * whole when it ends; and the seam of a scheduler (an operation created without a board
 * waits until it is assigned one). The link's heartbeats run on the same clock: they are
 * set longer than any advance here.
 */
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

const GRACE_S = 600;

describe('operations on a manual clock', () => {
  let server: TestServer;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    const hour = String(3_600_000);
    server = await startTestServer(
      'embedded',
      { MM_CANCEL_GRACE_S: String(GRACE_S), MM_HEARTBEAT_INTERVAL_MS: hour, MM_HEARTBEAT_TIMEOUT_MS: hour },
      { clock },
    );
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function runningExecute(name: string) {
    const b = await registerBoard(server, name);
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, name);
    const op = await server.ctx.operations.create({ kind: 'execute', boardId: b.id, invocationId: inv });
    await agent.next('op.start', (m) => m.op_id === op.id);
    return { board: b, agent, op, inv };
  }

  it('cancels a running operation whose board does not confirm once the grace has passed, not before', async () => {
    const { agent, op } = await runningExecute('grace');
    const ops = server.ctx.operations;
    const cancelled = await ops.cancel(op.id);
    expect(cancelled.status).toBe('running');
    await agent.next('op.cancel', (m) => m.op_id === op.id);
    expect(ops.isCancelRequested(op.id)).toBe(true);

    await clock.advanceAsync(GRACE_S * 1000 - 1);
    expect((await ops.require(op.id)).status).toBe('running');
    await clock.advanceAsync(1);
    await eventually(async () => expect(await ops.require(op.id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } }));
    expect((await ops.require(op.id)).error?.message).toMatch(/did not confirm in time/);
    // Its live record (with the grace timer) is gone whole; a late outcome is only acknowledged.
    expect(ops.live.get(op.id)).toBeUndefined();
    expect(ops.isCancelRequested(op.id)).toBe(false);
    await agent.report(agent.outcome(op.id, 'cancelled'));
    await agent.close();
  });

  it('stores progress at most once a second of the clock, and the last value at the end', async () => {
    const { agent, op } = await runningExecute('throttle');
    const stored = async () => (await server.ctx.operations.require(op.id)).progress.bytes_done;
    agent.send({ type: 'op.progress', op_id: op.id, progress: { phase: 'run', bytes_done: 1, bytes_total: 10 } });
    await eventually(async () => expect(await stored()).toBe(1));
    agent.send({ type: 'op.progress', op_id: op.id, progress: { phase: 'run', bytes_done: 2, bytes_total: 10 } });
    agent.send({ type: 'op.progress', op_id: op.id, progress: { phase: 'run', bytes_done: 3, bytes_total: 10 } });
    await eventually(() => expect(server.ctx.operations.live.get(op.id)?.progress?.pending?.bytes_done).toBe(3));
    // Held back until a second has passed on the clock.
    expect(await stored()).toBe(1);
    await clock.advanceAsync(1000);
    await eventually(async () => expect(await stored()).toBe(3));
    agent.send({ type: 'op.progress', op_id: op.id, progress: { phase: 'run', bytes_done: 7, bytes_total: 10 } });
    await eventually(() => expect(server.ctx.operations.live.get(op.id)?.progress?.pending?.bytes_done).toBe(7));
    // The end takes what the throttle held, without waiting for the clock.
    await agent.report(agent.outcome(op.id, 'failed'));
    await eventually(async () => expect(await server.ctx.operations.require(op.id)).toMatchObject({ status: 'failed', progress: { bytes_done: 7 } }));
    expect(server.ctx.operations.live.get(op.id)).toBeUndefined();
    await agent.close();
  });

  it('keeps an operation created without a board queued until it is assigned one', async () => {
    const b = await registerBoard(server, 'assign');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'assign');
    const ops = server.ctx.operations;
    const unassigned = await ops.create({ kind: 'transfer', boardId: null, invocationId: inv });
    expect(unassigned).toMatchObject({ status: 'queued', board_id: null });
    // The board's queue runs work of its own, and passes over the operation that has no board.
    const own = await ops.create({ kind: 'transfer', boardId: b.id, invocationId: inv });
    await agent.next('op.start', (m) => m.op_id === own.id);
    await agent.report(agent.outcome(own.id, 'succeeded'));
    await eventually(async () => expect((await ops.require(own.id)).status).toBe('succeeded'));
    expect(await ops.require(unassigned.id)).toMatchObject({ status: 'queued', board_id: null });
    expect((await json(await server.api(`/api/operations/${unassigned.id}/`))).board_id).toBeNull();

    expect(await ops.assign(unassigned.id, b.id)).toMatchObject({ status: 'queued', board_id: b.id });
    await agent.next('op.start', (m) => m.op_id === unassigned.id);
    // Assigned once: a second scheduler decision is refused.
    expect(await ops.assign(unassigned.id, b.id)).toBeUndefined();
    await agent.report(agent.outcome(unassigned.id, 'succeeded'));
    await eventually(async () => expect((await ops.require(unassigned.id)).status).toBe('succeeded'));
    expect(ops.live.size).toBe(0);
    await agent.close();
  });

  it('answers 504 board_timeout when the board does not answer an RPC in time, and ends a reboot watch at its timeout', async () => {
    const b = await registerBoard(server, 'rpc');
    const agent = await FakeAgent.online(server.url, b.token);
    const call = server.ctx.agents.call(b.id, 'agent.info', {}, { timeoutMs: 5000 });
    const outcome = call.then(() => 'answered', (err: unknown) => err);
    await agent.next('rpc.request', (m) => m.method === 'agent.info');
    await clock.advanceAsync(4999);
    expect(await Promise.race([outcome, Promise.resolve('pending')])).toBe('pending');
    await clock.advanceAsync(1);
    expect(await outcome).toMatchObject({ status: 504, code: 'board_timeout' });

    const watch = server.ctx.agents.expectReboot(b.id, { timeoutMs: 60_000 });
    const back = watch.back.then(() => 'back', (err: unknown) => err);
    await clock.advanceAsync(59_999);
    expect(await Promise.race([back, Promise.resolve('waiting')])).toBe('waiting');
    await clock.advanceAsync(1);
    expect(await back).toMatchObject({ status: 504, code: 'reboot_timeout' });
    await agent.close();
  });
});
