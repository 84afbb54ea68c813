import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinkFeature } from '@mm/protocol';
import type { Agent } from '../src/agent.ts';
import { removeTempDirs, startAgent, tempDir } from './support/agent-fixture.ts';
import { FakeControlPlane } from './support/fake-control-plane.ts';

afterAll(removeTempDirs);

let plane: FakeControlPlane;
const agents: Agent[] = [];
beforeEach(async () => {
  plane = await FakeControlPlane.start('test-token');
});
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await plane.close();
});

async function hostTree(model: string): Promise<string> {
  const root = await tempDir();
  await fsp.mkdir(path.join(root, 'proc/device-tree'), { recursive: true });
  await fsp.writeFile(path.join(root, 'proc/device-tree/model'), `${model}\0`);
  return root;
}

async function agentWith(hostRoot: string, runner?: string[]) {
  const started = await startAgent(plane.url, { config: { hostRoot, ...(runner ? { runner } : {}) } });
  agents.push(started.agent);
  return started;
}

describe('board facts on the link', () => {
  it('hello carries the facts and names the feature; after an RPC a change goes out as board.facts', async () => {
    plane.features = [LinkFeature.earlyOutput, LinkFeature.boardFacts];
    const root = await hostTree('ZynqMP ZCU104 RevC');
    await agentWith(root);
    const link = await plane.link(0);
    const hello = await link.waitFor('hello');
    expect(hello.features).toContain(LinkFeature.boardFacts);
    expect(hello.facts).toMatchObject({ board_model: 'ZynqMP ZCU104 RevC', active_pac: null });

    // Nothing changed: an RPC sends no facts.
    link.sendMessage({ type: 'rpc.request', id: 1, method: 'agent.info', params: {} });
    await link.waitFor('rpc.response', (m) => m.id === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(link.of('board.facts')).toEqual([]);

    // The board changed (as a PAC activation changes the active PAC): the next RPC's recheck sends it.
    await fsp.writeFile(path.join(root, 'proc/device-tree/model'), 'ZynqMP ZCU106 RevA\0');
    link.sendMessage({ type: 'rpc.request', id: 2, method: 'agent.info', params: {} });
    const sent = await link.waitFor('board.facts');
    expect(sent.facts).toMatchObject({ board_model: 'ZynqMP ZCU106 RevA' });
  });

  it('a server that does not name board.facts gets no board.facts message', async () => {
    plane.features = [LinkFeature.earlyOutput];
    const root = await hostTree('ZynqMP ZCU104 RevC');
    await agentWith(root);
    const link = await plane.link(0);
    await link.waitFor('hello');
    await fsp.writeFile(path.join(root, 'proc/device-tree/model'), 'changed\0');
    link.sendMessage({ type: 'rpc.request', id: 1, method: 'agent.info', params: {} });
    await link.waitFor('rpc.response', (m) => m.id === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(link.of('board.facts')).toEqual([]);
    expect(link.invalid).toEqual([]);
  });

  it("the runner gets the op.start's board labels as MM_BOARD_LABELS; its metrics.json lands in result.metrics", async () => {
    plane.features = [LinkFeature.boardFacts];
    const script = 'echo "labels=$MM_BOARD_LABELS"; echo \'{"fps": 12.5}\' > "$MM_OUTPUT_DIR/metrics.json"; echo v > "$MM_OUTPUT_DIR/out.mp4"';
    await agentWith(await hostTree('x'), ['/bin/sh', '-c', script]);
    const link = await plane.link(0);
    await link.waitFor('hello');
    link.sendMessage({ type: 'op.start', op_id: 7, kind: 'execute', invocation: { id: 1, name: 'labels' }, files: [], board_labels: { 'sim/speed': '2', 'mm/arch': 'arm64' } });
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 7);
    expect(link.logOf(7)).toContain('labels={"sim/speed":"2","mm/arch":"arm64"}');
    expect(result.outcome.status).toBe('succeeded');
    expect(result.outcome.result?.metrics).toEqual({ fps: 12.5, run_ms: expect.any(Number) });
  });

  it('from a server that sends no labels the runner gets {}', async () => {
    await agentWith(await hostTree('x'), ['/bin/sh', '-c', 'echo "labels=$MM_BOARD_LABELS"; exit 3']);
    const link = await plane.link(0);
    await link.waitFor('hello');
    link.sendMessage({ type: 'op.start', op_id: 8, kind: 'execute', invocation: { id: 1, name: 'old server' }, files: [] });
    const result = await link.waitFor('op.result', (m) => m.outcome.op_id === 8);
    expect(link.logOf(8)).toContain('labels={}');
    expect(result.outcome.status).toBe('failed');
    expect(result.outcome.result?.metrics).toEqual({ run_ms: expect.any(Number) });
  });
});
