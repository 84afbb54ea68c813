import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CloseCode, PROTOCOL_VERSION } from '@mm/protocol';
import type { Agent } from '../src/agent.ts';
import { Journal } from '../src/journal/journal.ts';
import { AGENT_VERSION } from '../src/version.ts';
import { removeTempDirs, sha256, startAgent, tempDir, testLogger, waitUntil } from './support/agent-fixture.ts';
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

async function agentFor(opts: Parameters<typeof startAgent>[1] = {}) {
  const started = await startAgent(plane.url, opts);
  agents.push(started.agent);
  return started;
}

describe('the agent link', () => {
  it('says hello with its identity, its cache and the outcomes it still holds', async () => {
    const agentDir = await tempDir();
    // A previous run left: a verified file in the cache, an unacknowledged outcome, and a
    // run that was interrupted by the agent dying.
    const cached = Buffer.from('cached content');
    await fsp.mkdir(path.join(agentDir, 'cache'), { recursive: true });
    await fsp.writeFile(path.join(agentDir, 'cache', sha256(cached)), cached);
    const journal = await Journal.open(agentDir, testLogger());
    const kept = { op_id: 11, status: 'succeeded' as const, finished_at: '2026-11-21T10:00:00.000Z', result: { exit_code: 0 }, error: null, output: null };
    await journal.recordOutcome(kept);
    await journal.recordStart({ op_id: 12, kind: 'execute', invocation_id: 1, started_at: '2026-11-21T10:00:00.000Z', boot_id: 'test-boot-id-1' });
    await journal.setPhase(12, 'run');

    await agentFor({ agentDir });
    const link = await plane.link(0);
    const hello = await link.waitFor('hello');
    expect(hello).toMatchObject({
      protocol_version: PROTOCOL_VERSION,
      agent_version: AGENT_VERSION,
      hostname: os.hostname(),
      platform: process.platform,
      arch: process.arch,
      boot_id: 'test-boot-id-1',
      active_pac: null,
      cached: [sha256(cached)],
      running: [],
    });
    expect(hello.finished.map((o) => o.op_id).sort()).toEqual([11, 12]);
    expect(hello.finished.find((o) => o.op_id === 12)).toMatchObject({ status: 'failed', error: { code: 'agent_restarted' } });
    expect(link.invalid).toEqual([]);
  });

  it('reconnects with a fresh connection and a new hello after the server drops the link', async () => {
    const { agent } = await agentFor();
    const first = await plane.link(0);
    await first.waitFor('hello');
    await waitUntil(() => agent.link.current, 'the link to be up');
    first.ws.terminate();
    const second = await plane.link(1);
    await second.waitFor('hello');
    await waitUntil(() => agent.link.sessions === 2 && agent.link.current, 'the second session');
  });

  it('closes a link on which nothing arrives any more (heartbeat timeout), then reconnects', async () => {
    plane.autoPong = false;
    await agentFor({ config: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 600 } });
    const dead = await plane.link(0);
    await dead.waitFor('hello');
    // The server side neither pongs nor sends: the agent must give up on it.
    const closed = await dead.closed;
    expect(closed.code).toBe(1006);
    expect(dead.of('hello')).toHaveLength(1);
    plane.autoPong = true;
    await (await plane.link(1)).waitFor('hello');
  });

  it('keeps the link up while the server answers pings', async () => {
    const { agent } = await agentFor({ config: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1500 } });
    const link = await plane.link(0);
    await link.waitFor('hello');
    // Well past several timeouts, the same link is still the one: pongs count as life.
    await new Promise((r) => setTimeout(r, 4000));
    expect(plane.links).toHaveLength(1);
    expect(agent.link.current).toBeDefined();
  });

  it('retries after a 401 (the token may be fixed) and connects once it is', async () => {
    plane.token = 'not-yet';
    const { agent } = await agentFor();
    await waitUntil(() => plane.rejected >= 2, 'two refused attempts');
    expect(plane.links).toHaveLength(0);
    plane.token = 'test-token';
    await (await plane.link(0)).waitFor('hello');
    await waitUntil(() => agent.link.current, 'the link to be up');
  });

  it('keeps retrying after the board was revoked (4003) or replaced (4002)', async () => {
    await agentFor();
    const first = await plane.link(0);
    await first.waitFor('hello');
    first.ws.close(CloseCode.revoked, 'board deleted');
    const second = await plane.link(1, 30_000);
    await second.waitFor('hello');
    second.ws.close(CloseCode.replaced, 'replaced');
    await (await plane.link(2, 30_000)).waitFor('hello');
  });

  it('answers malformed and unknown messages with error, and keeps working', async () => {
    const { agent } = await agentFor();
    const link = await plane.link(0);
    await link.waitFor('hello');
    await waitUntil(() => agent.link.current, 'the link to be up');
    link.sendRaw('this is not json');
    link.sendRaw(JSON.stringify({ type: 'launch.missiles' }));
    link.sendRaw(JSON.stringify({ type: 'op.start', op_id: 'seven' }));
    link.sendRaw(JSON.stringify({ type: 'error', code: 'x', message: 'an error is never answered' }));
    link.sendRaw(JSON.stringify({ type: 'error', bogus: true }));
    await link.sendFrame(Buffer.from([9, 0, 0, 0, 1, 1, 2, 3]));
    const errors = await waitUntil(() => link.of('error').length >= 4 && link.of('error'), 'four error answers');
    expect(errors.map((e) => [e.code, e.ref_type])).toEqual([
      ['malformed_message', undefined],
      ['unknown_message', 'launch.missiles'],
      ['malformed_message', 'op.start'],
      ['malformed_frame', undefined],
    ]);
    expect(errors[2]!.message).toContain('op_id');
    // Still alive and answering.
    link.sendMessage({ type: 'rpc.request', id: 1, method: 'agent.info', params: {} });
    const info = await link.waitFor('rpc.response', (r) => r.id === 1);
    expect(info.ok).toBe(true);
    expect(plane.links).toHaveLength(1);
  });

  it('closes with 4001 on a welcome of another major protocol version, and retries', async () => {
    plane.autoWelcome = false;
    const { agent } = await agentFor();
    const link = await plane.link(0);
    await link.waitFor('hello');
    link.sendMessage({ type: 'welcome', board_id: '00000000-0000-4000-8000-000000000001', board_name: 'b', server_version: '9', protocol_version: PROTOCOL_VERSION + 1 });
    expect((await link.closed).code).toBe(CloseCode.protocolMismatch);
    expect(agent.link.sessions).toBe(0);
    await (await plane.link(1, 30_000)).waitFor('hello');
  });

  it('answers RPC requests: agent.info, unknown methods, bad params', async () => {
    await agentFor();
    const link = await plane.link(0);
    await link.waitFor('hello');
    link.sendMessage({ type: 'rpc.request', id: 5, method: 'agent.info', params: {} });
    link.sendMessage({ type: 'rpc.request', id: 6, method: 'flash.firmware', params: {} });
    link.sendMessage({ type: 'rpc.request', id: 7, method: 'agent.info', params: 'please' });
    const info = await link.waitFor('rpc.response', (r) => r.id === 5);
    expect(info).toMatchObject({ ok: true, result: { agent_version: AGENT_VERSION, boot_id: 'test-boot-id-1' } });
    expect(info.ok && typeof (info.result as { uptime_s: unknown }).uptime_s).toBe('number');
    expect(await link.waitFor('rpc.response', (r) => r.id === 6)).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
    expect(await link.waitFor('rpc.response', (r) => r.id === 7)).toMatchObject({ ok: false, error: { code: 'invalid_params' } });
  });
});
