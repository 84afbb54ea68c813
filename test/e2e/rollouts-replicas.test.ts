/**
 * A rollout survives the replica it was created on (docs/rollouts.md): two control planes on
 * one PostgreSQL behind a balancer, two simulated boards; the replica is killed with SIGKILL
 * while the first phase runs, and the survivor finishes the rollout.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startBalancer, type Balancer } from '../support/balancer.ts';
import { createScratchDatabase, skipWithoutRealDatabase } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster, type ServerProcess } from '../support/processes.ts';
import { createRollout, newInvocation, post, waitForRollout } from './rollouts-support.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 400_000 });

describe.skipIf(skipWithoutRealDatabase('a rollout when a replica dies'))('a rollout when a replica dies', () => {
  const clusters: ServerCluster[] = [];
  const agents: AgentProcess[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let balancer: Balancer;
  let A: ServerProcess;
  let B: ServerProcess;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-rollout-replicas-'));
    const start = async (name: string) => {
      const cluster = await serverCluster('embedded', { DATABASE_URL: scratch.url, MM_DATA_DIR: sharedDir, MM_REPLICA_ID: name });
      clusters.push(cluster);
      return cluster.start();
    };
    A = await start('replica-a');
    B = await start('replica-b');
    balancer = await startBalancer([A, B].map((r) => ({ host: '127.0.0.1', port: r.port })));
    for (const name of ['r1', 'r2']) {
      const board = await json(await post(A, '/api/boards/', { name }));
      agents.push(await startAgent({ serverUrl: balancer.url, token: board.token, agentDir: path.join(sharedDir, `agent-${name}`) }));
    }
    await eventually(async () => {
      const { boards } = await json(await B.api('/api/boards/'));
      expect(boards.filter((b: { status: string }) => b.status === 'online')).toHaveLength(2);
    }, 60_000, 200);
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await balancer?.close();
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    await fs.rm(sharedDir, { recursive: true, force: true });
  });

  it('created on the replica that holds the first board, killed during the first phase: the rollout finishes on the other', async () => {
    // The replica the first board (r1, by name) is linked to: the one whose death matters most.
    const { boards } = await json(await A.api('/api/boards/'));
    const r1 = boards.find((b: { name: string }) => b.name === 'r1').id as string;
    const holds = (s: ServerProcess) => s.output.lines.some((l) => l.msg === 'agent online' && l.board_id === r1);
    const [doomed, survivor] = holds(A) ? [0, B] : [1, A];
    const victim = clusters[doomed]!.current();
    expect(holds(victim)).toBe(true);

    const invocationId = await newInvocation(victim, 'survives', 3);
    const created = await createRollout(victim, { kind: 'execute', board_selector: {}, invocation_id: invocationId, batch_size: 1 });
    expect(created.boards.map((b) => b.status)).toEqual([expect.stringMatching(/queued|running/), 'pending']);
    await waitForRollout(survivor, created.id, (r) => r.boards[0]!.status === 'running');
    await victim.kill();

    const done = await waitForRollout(survivor, created.id, (r) => r.finished_at !== null, 120_000);
    expect(done.status).toBe('succeeded');
    expect(done.boards.map((b) => b.status)).toEqual(['succeeded', 'succeeded']);
    // The second phase was started once: one operation per board.
    for (const b of done.boards) {
      const ops = await json(await survivor.api(`/api/operations/?kind=execute&board_id=${b.board_id}`));
      expect(ops.total).toBe(1);
    }
  });
});
