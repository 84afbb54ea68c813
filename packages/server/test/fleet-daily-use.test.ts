/**
 * Daily use of a fleet (issue 39), on a ManualClock with fake agents: a board lost mid-run
 * (`board_offline_since`, then `board_lost`, a late report kept as a note), and health-check
 * runs kept apart from the user's own (lists, latest run, metrics).
 */
import { ManualClock } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

const LOST_S = 30;

describe('daily use of a fleet', () => {
  let server: TestServer;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    const hour = String(3_600_000);
    server = await startTestServer('embedded', { MM_BOARD_LOST_S: String(LOST_S), MM_HEARTBEAT_INTERVAL_MS: hour, MM_HEARTBEAT_TIMEOUT_MS: hour }, { clock });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const call = async (method: string, p: string, body?: unknown) =>
    server.api(p, { method, ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

  it('fails a run whose board stays offline past MM_BOARD_LOST_S with board_lost, and keeps a later report as a note', async () => {
    const b = await registerBoard(server, 'lost');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'lost');
    const op = await server.ctx.operations.create({ kind: 'execute', boardId: b.id, invocationId: inv });
    await agent.next('op.start', (m) => m.op_id === op.id);
    const get = async () => json(await server.api(`/api/operations/${op.id}/`));
    expect(await get()).toMatchObject({ status: 'running', board_offline_since: null });

    // kill -9 of the agent: the socket drops without a word.
    agent.terminate();
    await eventually(() => expect(server.ctx.agents.status(b.id)).toBe('offline'));
    await clock.advanceAsync(3000);
    const offline = await eventually(async () => {
      const o = await get();
      expect(o.board_offline_since).not.toBeNull();
      return o;
    });
    expect(offline.status).toBe('running');
    const log = await (await server.api(`/api/operations/${op.id}/log/`)).text();
    expect(log).toContain(`board offline since ${offline.board_offline_since}`);

    await clock.advanceAsync(LOST_S * 1000);
    const lost = await eventually(async () => {
      const o = await get();
      expect(o.status).toBe('failed');
      return o;
    });
    expect(lost.error.code).toBe('board_lost');
    expect(lost.error.message).toContain('offline since');

    // The board comes back and its journal reports the real end: a note, the status stays.
    const back = await FakeAgent.connect(server.url, b.token);
    const finished = back.outcome(op.id, 'succeeded', { result: { exit_code: 0, metrics: { fps: 30 } } });
    await back.hello({ finished: [finished] });
    await eventually(async () => expect((await get()).result?.late_result).toMatchObject({ status: 'succeeded', metrics: { fps: 30 } }));
    expect(await get()).toMatchObject({ status: 'failed', error: { code: 'board_lost' } });
    await back.close();
  });

  it('clears board_offline_since when the board comes back before MM_BOARD_LOST_S', async () => {
    const b = await registerBoard(server, 'blip');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'blip');
    const op = await server.ctx.operations.create({ kind: 'execute', boardId: b.id, invocationId: inv });
    await agent.next('op.start', (m) => m.op_id === op.id);
    agent.terminate();
    await eventually(() => expect(server.ctx.agents.status(b.id)).toBe('offline'));
    await clock.advanceAsync(3000);
    await eventually(async () => expect((await json(await server.api(`/api/operations/${op.id}/`))).board_offline_since).not.toBeNull());
    const back = await FakeAgent.online(server.url, b.token, { running: [op.id] });
    await clock.advanceAsync(3000);
    await eventually(async () => expect(await json(await server.api(`/api/operations/${op.id}/`))).toMatchObject({ status: 'running', board_offline_since: null }));
    await back.report(back.outcome(op.id, 'succeeded'));
    await eventually(async () => expect((await json(await server.api(`/api/operations/${op.id}/`))).status).toBe('succeeded'));
    await back.close();
  });

  it('keeps health-check runs out of the operation list, the latest run and the metrics unless asked', async () => {
    const b = await registerBoard(server, 'checked');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'checked');
    const res = await call('POST', '/api/health-checks/', { name: 'smoke', invocation_id: inv, board_selector: { nobody: 'here' }, interval_s: 3600 });
    expect(res.status).toBe(201);
    const check = await json(res);

    const runOnce = async (healthCheckId: number | null, fps: number) => {
      const op = await server.ctx.operations.create({ kind: 'execute', boardId: b.id, invocationId: inv, healthCheckId });
      await agent.next('op.start', (m) => m.op_id === op.id);
      await agent.report(agent.outcome(op.id, 'succeeded', { result: { exit_code: 0, metrics: { fps } } }));
      await eventually(async () => expect((await server.ctx.operations.require(op.id)).status).toBe('succeeded'));
      return op.id;
    };
    const own = await runOnce(null, 10);
    const checkRun = await runOnce(check.id, 99);

    const one = await json(await server.api(`/api/operations/${checkRun}/`));
    expect(one.health_check_id).toBe(check.id);
    const listed = await json(await server.api(`/api/operations/?board_id=${b.id}`));
    expect(listed.operations.map((o: { id: number }) => o.id)).toEqual([own]);
    expect(listed.total).toBe(1);
    const all = await json(await server.api(`/api/operations/?board_id=${b.id}&health_checks=1`));
    expect(all.operations.map((o: { id: number }) => o.id)).toEqual([checkRun, own]);

    const invs = await json(await server.api('/api/invocations/?limit=100'));
    expect(invs.invocations.find((i: { id: number }) => i.id === inv).latest_run.id).toBe(own);

    const points = await json(await server.api(`/api/invocations/${inv}/metrics/?name=fps`));
    expect(points.points.map((p: { operation_id: number }) => p.operation_id)).toEqual([own]);
    const withChecks = await json(await server.api(`/api/invocations/${inv}/metrics/?name=fps&health_checks=1`));
    expect(withChecks.points.map((p: { value: number }) => p.value)).toEqual([10, 99]);
    await agent.close();
  });

  it('says why queued selector work waits: the matching boards by what keeps them, and when it gives up', async () => {
    const gone = await registerBoard(server, 'w-gone');
    const held = await registerBoard(server, 'w-held');
    for (const b of [gone, held]) expect((await call('PATCH', `/api/boards/${b.id}/`, { labels: { site: 'lab-w' } })).status).toBe(200);
    expect((await call('PATCH', `/api/boards/${held.id}/`, { maintenance: true })).status).toBe(200);
    const agent = await FakeAgent.online(server.url, held.token);
    const inv = await createInvocation(server, 'waiting');
    const res = await server.api(`/api/invocations/${inv}/execute/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ board_selector: { site: 'lab-w' }, queue_timeout_s: 600 }),
    });
    expect(res.status).toBe(202);
    const op = await json(res);
    const got = await json(await server.api(`/api/operations/${op.id}/`));
    expect(got.status).toBe('queued');
    expect(got.waiting).toMatchObject({ reason: '2 boards match: 1 offline, 1 in maintenance.', matching: 2, online: 1, idle: 0, maintenance: 1, bad: 0, reserved: 0 });
    expect(Date.parse(got.waiting.gives_up_at)).toBeGreaterThan(Date.now());
    const listed = await json(await server.api(`/api/operations/?status=queued`));
    expect(listed.operations.find((o: { id: number }) => o.id === op.id).waiting.matching).toBe(2);
    // Named work and ended work carry none.
    expect((await json(await server.api(`/api/operations/?board_id=${held.id}`))).operations.every((o: { waiting: unknown }) => o.waiting === null)).toBe(true);
    await call('POST', `/api/operations/${op.id}/cancel/`);
    expect((await json(await server.api(`/api/operations/${op.id}/`))).waiting).toBeNull();
    await agent.close();
  });
});
