/**
 * Faults: a runner that never exits and ignores SIGTERM (the simulated runner with
 * `ignore_sigterm` and helper processes in its group). Cancel and the run timeout must end
 * the whole process group (SIGTERM, then SIGKILL after the agent's grace period).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, pidsWithMarker, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { isLive, upload } from './fault-support.ts';

// Real processes on a shared machine: a fault and its recovery may take a while under load.
vi.setConfig({ testTimeout: 180_000 });

const STUCK = Buffer.from('{"duration_s": 3600, "ignore_sigterm": true, "spawn_children": 2}');

// The runner's faults do not depend on the database: one kind is enough.
describe('faults: a runner that never exits and ignores SIGTERM', () => {
  let cluster: ServerCluster;
  let board: { id: string; token: string };
  let agent: AgentProcess;
  let agentDir: string;
  let scratch: string;
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const post = (p: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(p, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const operation = async (id: number) => json(await api(`/api/operations/${id}/`));
  const startAgentWith = async (env: Record<string, string> = {}) => {
    agent = await startAgent({ serverUrl: cluster.current().url, token: board.token, agentDir, env });
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000, 100);
  };
  /** Starts a stuck run; resolves once the runner and its two helpers are up. */
  const startStuckRun = async (name: string) => {
    const inv = (await json(await post('/api/invocations/create/', { name, description: 'faults' }))).id as number;
    expect((await upload(cluster.current().url, inv, 'parameter', 'stuck.json', STUCK)).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    const pids = await eventually(async () => {
      const found = await pidsWithMarker(agent.marker, [agent.pid]);
      expect(found.length).toBeGreaterThanOrEqual(3);
      return found;
    }, 60_000, 100);
    await eventually(async () => expect(await (await api(`/api/operations/${op.id}/log/`)).text()).toMatch(/helper process pid \d+[\s\S]*helper process pid \d+/), 30_000, 100);
    return { op, pids };
  };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fault-runner-'));
    agentDir = path.join(scratch, 'agent');
    cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded');
    await cluster.start();
    board = await json(await post('/api/boards/', { name: 'runner-board' }));
    await startAgentWith();
  });

  afterAll(async () => {
    await agent?.stop();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('cancel ends it: SIGTERM is ignored, SIGKILL after the grace period takes the whole group', async () => {
    const { op, pids } = await startStuckRun('stuck-cancel');
    const cancelledAt = Date.now();
    expect((await post(`/api/operations/${op.id}/cancel/`)).status).toBe(202);
    const ended = await eventually(async () => {
      const o = await operation(op.id);
      expect(o.status).toBe('cancelled');
      return o;
    }, 60_000, 100);
    expect(ended.error.code).toBe('cancelled');
    // Not the server's 30 s fallback: the agent confirmed after its own 5 s grace period.
    expect(Date.now() - cancelledAt).toBeLessThan(25_000);
    expect(await (await api(`/api/operations/${op.id}/log/`)).text()).toMatch(/SIGTERM received and ignored/);
    await eventually(async () => expect(await pidsWithMarker(agent.marker, [agent.pid])).toEqual([]), 20_000, 100);
    for (const pid of pids) expect(await isLive(pid)).toBe(false);
    // The board is free for the next operation.
    expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online');
  }, 120_000);

  it('the run timeout ends it the same way and the operation fails with `timeout`', async () => {
    await agent.stop();
    await startAgentWith({ MM_RUN_TIMEOUT_S: '4' });
    const inv = (await json(await post('/api/invocations/create/', { name: 'stuck-timeout', description: 'faults' }))).id as number;
    expect((await upload(cluster.current().url, inv, 'parameter', 'stuck.json', STUCK)).status).toBe(201);
    // Waits for the outcome without watching the processes: the timeout may come before a poll sees them.
    const res = await post(`/api/invocations/${inv}/execute/`);
    expect(res.status).toBe(502);
    const ended = (await json(res)).operation;
    expect(ended.status).toBe('failed');
    expect(ended.error.code).toBe('timeout');
    expect(ended.error.message).toMatch(/did not finish within 4 s/);
    const log = await (await api(`/api/operations/${ended.id}/log/`)).text();
    expect(log).toMatch(/SIGTERM received and ignored/);
    const helpers = [...log.matchAll(/helper process pid (\d+)/g)].map((m) => Number(m[1]));
    expect(helpers.length).toBe(2);
    await eventually(async () => expect(await pidsWithMarker(agent.marker, [agent.pid])).toEqual([]), 20_000, 100);
    for (const pid of helpers) expect(await isLive(pid)).toBe(false);
  }, 120_000);
});
