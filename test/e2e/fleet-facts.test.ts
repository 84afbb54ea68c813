/**
 * End to end: board facts and `mm/` labels, labels reaching the runner, per-run metrics
 * (docs/fleet-facts.md). The real control plane, real `mm-agent --simulate` processes
 * (one a simulated KV260 enrolled with a key labelled `sim/speed=2`), and an older agent
 * (the test's FakeAgent, whose hello has no facts).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkFeature } from '@mm/protocol';
import { dbKinds } from '../support/databases.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { FakeAgent } from '../../packages/server/test/support/fake-agent.ts';

const ADMIN = 'fleet-facts-admin-token';
// One database kind is enough here (the real PostgreSQL when there is one): the SQL is plain.
const kind = dbKinds.at(-1)!;

describe(`board facts, mm/ labels and per-run metrics (${kind} database)`, () => {
  let server: TestServer;
  let tmp: string;
  const agents: AgentProcess[] = [];
  const fakes: FakeAgent[] = [];
  const admin = (pathname: string, init?: { method?: string; body?: unknown }) => bearerCaller(server.api, ADMIN)(pathname, init);
  let kv260: string;
  let zcu104: string;

  async function createInvocation(name: string, parameter?: unknown): Promise<number> {
    const res = await admin('/api/invocations/create/', { body: { name, description: 'fleet facts e2e' } });
    expect(res.status).toBe(201);
    const id = (await json(res)).id as number;
    if (parameter !== undefined) {
      const form = new FormData();
      form.set('file_type', 'parameter');
      form.set('file', new Blob([JSON.stringify(parameter)]), 'params.json');
      const up = await server.api(`/api/invocations/${id}/upload/`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: form });
      expect(up.status).toBe(201);
    }
    return id;
  }
  const execute = async (invocation: number, boardId: string) => {
    const res = await admin(`/api/invocations/${invocation}/execute/`, { body: { board_id: boardId } });
    const op = await json(res);
    expect(res.status, JSON.stringify(op)).toBe(200);
    return op;
  };

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fleet-facts-'));
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN });
    // A simulated KV260 that joins with a key labelled sim/speed=2…
    const key = await json(await admin('/api/provisioning-keys/', { body: { name: 'fast kv260s', labels: { 'sim/speed': '2', site: 'lab' } } }));
    const kvDir = path.join(tmp, 'kv260');
    agents.push(await startAgent({ serverUrl: server.url, agentDir: kvDir, env: { MM_PROVISIONING_KEY: key.key, MM_BOARD_TOKEN_FILE: path.join(kvDir, 'token'), MM_SIM_BOARD_MODEL: 'kv260' } }));
    // …and a ZCU104 registered by hand, without labels.
    const zb = await json(await admin('/api/boards/', { body: { name: 'zcu104-1' } }));
    zcu104 = zb.id;
    agents.push(await startAgent({ serverUrl: server.url, token: zb.token, agentDir: path.join(tmp, 'zcu104'), env: { MM_SIM_REBOOT_DELAY_MS: '500' } }));
    kv260 = await eventually(async () => {
      const { boards } = await json(await admin('/api/boards/'));
      const b = boards.find((x: { labels: Record<string, string>; status: string }) => x.labels['sim/speed'] === '2' && x.status === 'online');
      expect(b).toBeDefined();
      return b.id as string;
    }, 60_000);
    await eventually(async () => expect((await json(await admin(`/api/boards/${zcu104}/`))).status).toBe('online'), 60_000);
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    for (const f of fakes) f.ws.close();
    await server?.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('hello carries the facts; the board shows them and its mm/ labels beside the people\'s', async () => {
    const kv = await json(await admin(`/api/boards/${kv260}/`));
    expect(kv.facts).toMatchObject({
      board_model: 'Kria KV260 Vision AI Starter Kit',
      som_model: 'SMK-K26-XCL2G',
      carrier_model: 'SCK-KV-G',
      serial: 'XFL1SIM0K26A',
      os: 'Ubuntu 22.04.4 LTS',
      kernel: '5.15.0-1027-xilinx-zynqmp',
      cpu_count: 4,
      memory_bytes: 4_021_740 * 1024,
      agent_version: kv.agent_version,
      node_version: process.versions.node,
      active_pac: null,
    });
    expect(kv.facts.disk_free_bytes).toBeGreaterThan(0);
    expect(kv.labels).toEqual({
      'sim/speed': '2',
      site: 'lab',
      'mm/arch': kv.facts.arch,
      'mm/os': 'ubuntu-22.04',
      'mm/board-model': 'kv260',
      'mm/agent-version': kv.agent_version,
      // The simulated board's accelerator (docs/accelerators.md): its default app and that app's DPU.
      'mm/app': 'kv260-benchmark-b4096',
      'mm/dpu-arch': 'DPUCZDX8G_ISA1_B4096',
      'mm/dpu-fingerprint': '0x101000016010407',
      'mm/vai-version': '2.5.0',
    });
    const zcu = await json(await admin(`/api/boards/${zcu104}/`));
    expect(zcu.facts).toMatchObject({ board_model: 'ZynqMP ZCU104 RevC', os: 'PetaLinux 2023.2', cpu_count: 4 });
    expect(zcu.labels).toMatchObject({ 'mm/board-model': 'zcu104', 'mm/os': 'petalinux-2023.2' });
    expect(Object.keys(zcu.labels).every((k) => k.startsWith('mm/'))).toBe(true);
  });

  it('an execute gets the board\'s labels; result.metrics has run_ms and the runner\'s fps, which follows sim/speed', async () => {
    const inv = await createInvocation('metrics', { duration_s: 0.2 });
    const fast = await execute(inv, kv260);
    // The simulated board also measures the run (board telemetry): its peak temperature and mean power.
    expect(fast.result.metrics).toEqual({ fps: 60, latency_ms: 16.67, run_ms: expect.any(Number), max_temperature_c: expect.any(Number), mean_power_w: expect.any(Number) });
    expect(fast.result.metrics.run_ms).toBeGreaterThanOrEqual(200);
    const slow = await execute(inv, zcu104);
    expect(slow.result.metrics).toMatchObject({ fps: 30, latency_ms: 33.33 });
    const again = await execute(inv, kv260);

    const series = await json(await admin(`/api/invocations/${inv}/metrics/?name=fps`));
    expect(series.points).toEqual([
      { operation_id: fast.id, board_id: kv260, finished_at: fast.finished_at, value: 60 },
      { operation_id: slow.id, board_id: zcu104, finished_at: slow.finished_at, value: 30 },
      { operation_id: again.id, board_id: kv260, finished_at: again.finished_at, value: 60 },
    ]);
    const runMs = await json(await admin(`/api/invocations/${inv}/metrics/?name=run_ms&limit=1`));
    expect(runMs.points).toEqual([expect.objectContaining({ operation_id: again.id, value: again.result.metrics.run_ms })]);
    expect((await json(await admin(`/api/invocations/${inv}/metrics/?name=nothing_like_it`))).points).toEqual([]);
    expect((await admin(`/api/invocations/${inv}/metrics/?name=Bad-Name`)).status).toBe(400);
    expect((await admin(`/api/invocations/${inv}/metrics/`)).status).toBe(400);
    expect((await admin('/api/invocations/999999/metrics/?name=fps')).status).toBe(404);
  });

  it('a bad metrics.json is a line in the log and no runner metrics, never a failed run', async () => {
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`m${i}`, i])));
    for (const [text, why] of [
      ['[1,2,3]', /metrics\.json ignored: it must be a JSON object of names to numbers, not an array/],
      ['{"fps":"fast"}', /metrics\.json ignored: fps is "fast", not a finite number/],
      [many, /metrics\.json ignored: \d+ bytes, at most 16384 are read/],
    ] as const) {
      const inv = await createInvocation('bad-metrics', { duration_s: 0, metrics_json: text });
      const op = await execute(inv, zcu104);
      expect(op.status).toBe('succeeded');
      expect(op.result.metrics).toEqual({ run_ms: expect.any(Number), max_temperature_c: expect.any(Number), mean_power_w: expect.any(Number) });
      const log = await (await admin(`/api/operations/${op.id}/log/`)).text();
      expect(log).toMatch(why);
      expect((await json(await admin(`/api/invocations/${inv}/metrics/?name=fps`))).points).toEqual([]);
    }
  });

  it('an older agent (no facts in its hello) still works; its hello gives what labels it can; board.facts replaces them', async () => {
    const b = await json(await admin('/api/boards/', { body: { name: 'old-agent' } }));
    const old = await FakeAgent.connect(server.url, b.token);
    fakes.push(old);
    const welcome = await old.hello({ agent_version: '0.0.9', active_pac: 'base-pac' });
    expect(welcome.features).toContain(LinkFeature.boardFacts);
    const shown = await json(await admin(`/api/boards/${b.id}/`));
    expect(shown.status).toBe('online');
    expect(shown.facts).toEqual({ arch: 'arm64', agent_version: '0.0.9', active_pac: 'base-pac', hostname: 'fake-board' });
    expect(shown.labels).toEqual({ 'mm/arch': 'arm64', 'mm/agent-version': '0.0.9', 'mm/active-pac': 'base-pac' });

    // The same link later says its facts changed (as a newer agent would after a PAC activation,
    // before its reboot): they replace the old ones, but the active PAC stays the one the board
    // booted with until a boot says otherwise (the activated one is not running yet).
    old.send({ type: 'board.facts', facts: { arch: 'arm64', agent_version: '0.1.0', active_pac: 'smartcam', board_model: 'Xilinx KR260 Robotics Starter Kit' } });
    await eventually(async () => {
      const now = await json(await admin(`/api/boards/${b.id}/`));
      expect(now.labels).toEqual({ 'mm/arch': 'arm64', 'mm/agent-version': '0.1.0', 'mm/active-pac': 'base-pac', 'mm/board-model': 'kr260' });
      expect(now.active_pac).toBe('base-pac');
      expect(now.facts.active_pac).toBe('base-pac');
      expect(now.agent_version).toBe('0.1.0');
    });
    // Malformed facts are refused by the catalog's schema and change nothing.
    old.send({ type: 'board.facts', facts: { cpu_count: 'four' } });
    await old.next('error', (m) => m.ref_type === 'board.facts');
    expect((await json(await admin(`/api/boards/${b.id}/`))).labels['mm/board-model']).toBe('kr260');
  });

  it('an execute on an older agent still gets op.start, with the board\'s labels for a runner that reads them', async () => {
    const b = await json(await admin('/api/boards/', { body: { name: 'old-agent-2' } }));
    const old = await FakeAgent.online(server.url, b.token);
    fakes.push(old);
    const inv = await createInvocation('old-agent-run');
    const res = await server.api(`/api/invocations/${inv}/execute/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ board_id: b.id }),
    });
    expect(res.status).toBe(202);
    const start = await old.next('op.start');
    expect(start.board_labels).toEqual({ 'mm/arch': 'arm64', 'mm/agent-version': '0.0.0-test' });
    old.send({ type: 'op.result', outcome: { op_id: start.op_id, status: 'failed', finished_at: new Date().toISOString(), result: null, error: { code: 'runner_failed', message: 'test' }, output: null } });
    await old.next('op.result.ack');
  });

  it('a PAC activation changes the active_pac fact and mm/active-pac', async () => {
    const before = await json(await admin(`/api/boards/${zcu104}/`));
    expect(before.facts.active_pac).toBeNull();
    expect(before.labels['mm/active-pac']).toBeUndefined();
    // The simulated board holds this sample PAC from the start.
    const res = await admin('/api/pacs/activate/', { body: { board_id: zcu104, pac: 'zcu104-sim-sample-cfg1' } });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    await eventually(async () => {
      const after = await json(await admin(`/api/boards/${zcu104}/`));
      expect(after.status).toBe('online');
      expect(after.facts.active_pac).toBe('zcu104-sim-sample-cfg1');
      expect(after.labels['mm/active-pac']).toBe('zcu104-sim-sample-cfg1');
      expect(after.boot_id).not.toBe(before.boot_id);
    }, 60_000);
  });
});
