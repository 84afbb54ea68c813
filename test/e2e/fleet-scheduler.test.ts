/**
 * The fleet scheduler end to end (docs/fleet.md): two control-plane replicas on one
 * PostgreSQL behind a round-robin balancer, four simulated boards with different labels.
 * Selector work lands on a matching idle board, an unservable selector is refused, a busy
 * fleet drains in priority order, maintenance and `bad` boards get no selector work, work
 * times out in the queue, and a replica killed while assigning leaves every operation run
 * exactly once (counted on the agents' side: their `operation started` log lines).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upload } from '../faults/fault-support.ts';
import { startBalancer, type Balancer } from '../support/balancer.ts';
import { createScratchDatabase, realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, repoRoot, serverCluster, startAgent, type AgentProcess, type ServerCluster, type ServerProcess } from '../support/processes.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 400_000 });

interface Op {
  id: number;
  status: string;
  board_id: string | null;
  board_selector: Record<string, string> | null;
  priority: number;
  started_at: string | null;
  error: { code: string } | null;
}


describe.skipIf(!realDatabaseUrl)('fleet scheduler on two replicas', () => {
  const clusters: ServerCluster[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let balancer: Balancer;
  let A: ServerProcess;
  let B: ServerProcess;
  const agents: AgentProcess[] = [];
  /** b0, b1: kv260 with a camera; b2: kv260 without; b3: zcu104. */
  const boards: Array<{ id: string; token: string; name: string }> = [];
  const invocations: Record<string, number> = {};

  const call = (s: ServerProcess, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    s.api(p, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const execute = async (s: ServerProcess, inv: number, body: Record<string, unknown>): Promise<Op> => {
    const res = await call(s, 'POST', `/api/invocations/${inv}/execute/`, body, { prefer: 'respond-async' });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
    return (await res.json()) as Op;
  };
  const op = async (id: number): Promise<Op> => (await json(await A.api(`/api/operations/${id}/`))) as Op;
  const ended = (id: number, timeoutMs = 120_000) =>
    eventually(
      async () => {
        const o = await op(id);
        expect(['succeeded', 'failed', 'cancelled']).toContain(o.status);
        return o;
      },
      timeoutMs,
      100,
    );
  const patchBoard = async (id: string, body: Record<string, unknown>) => {
    const res = await call(B, 'PATCH', `/api/boards/${id}/`, body);
    expect(res.status).toBe(200);
    return json(res);
  };
  const newInvocation = async (name: string, params: Record<string, unknown>) => {
    const res = await call(A, 'POST', '/api/invocations/create/', { name, description: 'fleet' });
    const id = (await json(res)).id as number;
    expect((await upload(A.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify(params)))).status).toBe(201);
    return id;
  };
  /** Op ids each agent started, from its log (a restarted or re-sent op.start logs differently). */
  const startedOn = () =>
    agents.map((a) => a.output.lines.filter((l) => l.msg === 'operation started').map((l) => Number(l.op_id)));

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fleet-'));
    const start = async (name: string) => {
      const cluster = await serverCluster('embedded', {
        DATABASE_URL: scratch.url,
        MM_DATA_DIR: sharedDir,
        MM_REPLICA_ID: name,
        MM_SCHEDULER_SWEEP_S: '0.5',
      });
      clusters.push(cluster);
      return cluster.start();
    };
    A = await start('fleet-a');
    B = await start('fleet-b');
    balancer = await startBalancer([A, B].map((r) => ({ host: '127.0.0.1', port: r.port })));
    const labels = [
      { model: 'kv260', camera: 'yes', 'sim/speed': '2' },
      { model: 'kv260', camera: 'yes', 'sim/speed': '2' },
      { model: 'kv260', camera: 'no', 'sim/speed': '0.2' },
      { model: 'zcu104' },
    ];
    for (const [i, l] of labels.entries()) {
      const b = await json(await call(A, 'POST', '/api/boards/', { name: `fleet-${i}` }));
      boards.push({ id: b.id, token: b.token, name: b.name });
      await patchBoard(b.id, { labels: l });
      agents.push(await startAgent({ serverUrl: balancer.url, token: b.token, agentDir: path.join(sharedDir, `agent-${i}`) }));
    }
    for (const b of boards) {
      await eventually(async () => expect((await json(await A.api(`/api/boards/${b.id}/`))).status).toBe('online'), 60_000, 100);
    }
    invocations.quick = await newInvocation('quick', { duration_s: 0.2 });
    invocations.slow = await newInvocation('slow', { duration_s: 3 });
    invocations.broken = await newInvocation('broken', { duration_s: 0, exit_code: 3 });
  });

  afterAll(async () => {
    for (const a of agents) await a.stop();
    await balancer?.close();
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    await fs.rm(sharedDir, { recursive: true, force: true });
  });

  it('agents are spread over both replicas, and the list filters by label, status and health', async () => {
    expect(new Set(balancer.routed.slice(0, 4)).size).toBe(2);
    const cams = await json(await B.api('/api/boards/?label=model=kv260&label=camera=yes&status=online&health=unknown'));
    expect(cams.boards.map((b: { id: string }) => b.id).sort()).toEqual([boards[0]!.id, boards[1]!.id].sort());
    expect((await json(await B.api('/api/boards/?status=offline'))).total).toBe(0);
    expect((await B.api('/api/boards/?label=nonsense')).status).toBe(400);
    // People's labels replace the map; the agent's mm/ ones are not theirs to set.
    const bad = await call(A, 'PATCH', `/api/boards/${boards[3]!.id}/`, { labels: { 'mm/arch': 'x' } });
    expect(bad.status).toBe(400);
  });

  it('a selector run lands on a matching idle board, with an assigned event', async () => {
    const o = await execute(A, invocations.quick!, { board_selector: { model: 'kv260', camera: 'yes' } });
    expect(o.board_selector).toEqual({ model: 'kv260', camera: 'yes' });
    const done = await ended(o.id);
    expect(done.status).toBe('succeeded');
    expect([boards[0]!.id, boards[1]!.id]).toContain(done.board_id);
    const events = await (await B.api(`/api/operations/${o.id}/events/`, { headers: { accept: 'text/event-stream' } })).text();
    expect(events).toContain('event: assigned');
    expect(events).toContain(`"board_id":"${done.board_id}"`);
  });

  it('an unservable selector is 400 and creates nothing; a board and a selector together are 400', async () => {
    const before = (await json(await A.api('/api/operations/'))).total;
    const res = await call(B, 'POST', `/api/invocations/${invocations.quick}/execute/`, { board_selector: { model: 'nothing-like-it' } });
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('no_matching_board');
    const both = await call(B, 'POST', `/api/invocations/${invocations.quick}/execute/`, { board_selector: { model: 'zcu104' }, board_id: boards[3]!.id });
    expect((await json(both)).code).toBe('board_choice_conflict');
    expect((await json(await A.api('/api/operations/'))).total).toBe(before);
  });

  it('a busy fleet queues and drains in priority order, then age', async () => {
    const sel = { model: 'zcu104' };
    const blocker = await execute(A, invocations.slow!, { board_selector: sel });
    await eventually(async () => expect((await op(blocker.id)).status).toBe('running'), 60_000, 100);
    const low = await execute(B, invocations.quick!, { board_selector: sel, priority: -10 });
    const mid1 = await execute(A, invocations.quick!, { board_selector: sel });
    const high = await execute(B, invocations.quick!, { board_selector: sel, priority: 50 });
    const mid2 = await execute(A, invocations.quick!, { board_selector: sel });
    const waiting = await op(low.id);
    expect(waiting).toMatchObject({ status: 'queued', board_id: null, priority: -10 });
    const board3 = await json(await A.api(`/api/boards/${boards[3]!.id}/`));
    expect(board3.current_operation_id).toBe(blocker.id);
    const all = await Promise.all([blocker, high, mid1, mid2, low].map((o) => ended(o.id)));
    for (const o of all) expect(o).toMatchObject({ status: 'succeeded', board_id: boards[3]!.id });
    const starts = all.map((o) => Date.parse(o.started_at!));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
  });

  it('a board in maintenance gets nothing new; work naming it still runs', async () => {
    const sel = { model: 'kv260', camera: 'yes' };
    await patchBoard(boards[0]!.id, { maintenance: true });
    for (let i = 0; i < 3; i++) {
      const done = await ended((await execute(i % 2 ? A : B, invocations.quick!, { board_selector: sel })).id);
      expect(done.board_id).toBe(boards[1]!.id);
    }
    await patchBoard(boards[1]!.id, { maintenance: true });
    const parked = await execute(A, invocations.quick!, { board_selector: sel });
    await new Promise((r) => setTimeout(r, 2500));
    expect(await op(parked.id)).toMatchObject({ status: 'queued', board_id: null });
    const named = await ended((await execute(B, invocations.quick!, { board_id: boards[1]!.id })).id);
    expect(named).toMatchObject({ status: 'succeeded', board_id: boards[1]!.id });
    expect(await op(parked.id)).toMatchObject({ status: 'queued', board_id: null });
    await patchBoard(boards[0]!.id, { maintenance: false });
    expect(await ended(parked.id)).toMatchObject({ status: 'succeeded', board_id: boards[0]!.id });
    await patchBoard(boards[1]!.id, { maintenance: false });
  });

  it('work still waiting after queue_timeout_s fails with queue_timeout', async () => {
    await patchBoard(boards[3]!.id, { maintenance: true });
    const o = await execute(A, invocations.quick!, { board_selector: { model: 'zcu104' }, queue_timeout_s: 2 });
    const done = await ended(o.id, 30_000);
    expect(done).toMatchObject({ status: 'failed', board_id: null, error: { code: 'queue_timeout' } });
    await patchBoard(boards[3]!.id, { maintenance: false });
  });

  it('a failing health check marks its board bad, selector work avoids it, a passing one makes it good again', async () => {
    const res = await call(A, 'POST', '/api/health-checks/', {
      name: 'smoke',
      invocation_id: invocations.broken,
      board_selector: { camera: 'no' },
      interval_s: 3600,
    });
    expect(res.status).toBe(201);
    const check = await json(res);
    // Queued by the sweep on its own (due: never run), or now on request: either way it fails.
    const now = await call(B, 'POST', `/api/boards/${boards[2]!.id}/health-check/`);
    expect(now.status).toBe(202);
    await eventually(async () => {
      const b = await json(await A.api(`/api/boards/${boards[2]!.id}/`));
      expect(b.health).toBe('bad');
      expect(b.health_reason).toContain('smoke: run failed');
    }, 60_000, 200);
    expect((await json(await A.api('/api/boards/?health=bad'))).boards.map((b: { id: string }) => b.id)).toEqual([boards[2]!.id]);
    const metrics = await (await A.api('/api/metrics/')).text();
    expect(metrics).toContain(`mm_board_health{board="${boards[2]!.id}",health="bad"`);
    // b0 and b1 are idle kv260 boards too; b2, idle longest, would be first if it were not bad.
    for (let i = 0; i < 4; i++) {
      const done = await ended((await execute(A, invocations.quick!, { board_selector: { model: 'kv260' } })).id);
      expect(done.board_id).not.toBe(boards[2]!.id);
    }
    expect((await call(A, 'PATCH', `/api/health-checks/${check.id}/`, { invocation_id: invocations.quick })).status).toBe(200);
    expect((await call(B, 'POST', `/api/boards/${boards[2]!.id}/health-check/`)).status).toBe(202);
    await eventually(async () => expect((await json(await A.api(`/api/boards/${boards[2]!.id}/`))).health).toBe('good'), 60_000, 200);
    expect((await call(A, 'DELETE', `/api/health-checks/${check.id}/`)).status).toBe(204);
  });

  it('a check with fps bounds marks the slow board bad with the reason', async () => {
    const check = await json(
      await call(A, 'POST', '/api/health-checks/', {
        name: 'speed',
        invocation_id: invocations.quick,
        board_selector: { model: 'kv260' },
        interval_s: 3600,
        expect: { metrics: { fps: { min: 10 } } },
      }),
    );
    for (const b of boards.slice(0, 3)) expect((await call(B, 'POST', `/api/boards/${b.id}/health-check/`)).status).toBe(202);
    await eventually(async () => {
      const slow = await json(await A.api(`/api/boards/${boards[2]!.id}/`));
      expect(slow.health).toBe('bad');
      expect(slow.health_reason).toMatch(/fps [\d.]+ < min 10/);
      expect((await json(await A.api(`/api/boards/${boards[0]!.id}/`))).health).toBe('good');
    }, 60_000, 200);
    await call(A, 'DELETE', `/api/health-checks/${check.id}/`);
  });

  it('a replica killed while assigning: every operation runs exactly once', async () => {
    const sel = { model: 'kv260' };
    const before = startedOn().flat();
    const ops: Op[] = [];
    for (let i = 0; i < 24; i++) ops.push(await execute(i % 2 ? A : B, invocations.quick!, { board_selector: i % 3 ? sel : { model: 'zcu104' } }));
    // Assignments are under way on both replicas: A dies with no goodbye.
    await A.kill();
    A = B;
    const done = await Promise.all(ops.map((o) => ended(o.id, 180_000)));
    expect(done.filter((o) => o.status !== 'succeeded').map((o) => [o.id, o.status, o.error?.code])).toEqual([]);
    const after = startedOn().flat().filter((id) => !before.includes(id));
    const counts = new Map<number, number>();
    for (const id of after) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const o of ops) expect(counts.get(o.id) ?? 0, `operation ${o.id} started on the agents`).toBe(1);
  });
});
