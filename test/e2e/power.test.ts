/**
 * Power control and recovery end to end (docs/power.md), with Debian's real pdudaemon:
 * its `localcmdline` PDU switches simulated boards' agents on (start the process) and off
 * (kill it: a power cut), test/support/power-switch.mjs. A lab host (a simulated board whose
 * agent has MM_PDUDAEMON_URL) relays the server's power commands to it over its link.
 *
 * Short settings: links dropped after 3 s of silence, hang detection 10 s after that (boots take seconds here under load), a 1 s off-time per cycle, at most 2
 * automatic cycles in the window.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upload } from '../faults/fault-support.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { havePdudaemon, plugIn, POWER_SWITCH, startPdudaemon, type Pdudaemon } from '../support/pdudaemon.ts';
import { eventually, repoRoot, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

const AGENT_BIN = path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs');
const PDU = 'lab-pdu';
const HEARTBEAT = { MM_HEARTBEAT_INTERVAL_MS: '500', MM_HEARTBEAT_TIMEOUT_MS: '3000' };

interface Op {
  id: number;
  kind: string;
  status: string;
  board_id: string;
  error: { code: string; message: string } | null;
  result: Record<string, unknown> | null;
}

const pdudaemonMissing = !(await havePdudaemon());

describe.skipIf(pdudaemonMissing)('power through pdudaemon, hang detection and recovery', () => {
  let server: TestServer;
  let pdu: Pdudaemon;
  let labHost: AgentProcess;
  let labHostId: string;
  let workDir: string;
  const outlets: number[] = [];

  const call = (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    server.api(p, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const board = async (id: string) => json(await call('GET', `/api/boards/${id}/`));
  const incidents = async (id: string) => (await json(await call('GET', `/api/boards/${id}/incidents/`))).incidents as Array<Record<string, any>>;
  const register = async (name: string) => {
    const res = await call('POST', '/api/boards/', { name });
    expect(res.status).toBe(201);
    return (await json(res)) as { id: string; token: string };
  };
  const power = (id: string, action: string, headers: Record<string, string> = {}) => call('POST', `/api/boards/${id}/power/`, { action }, headers);
  const configure = async (id: string, outlet: number) => {
    const res = await call('PATCH', `/api/boards/${id}/`, { power: { controller_board_id: labHostId, pdu_hostname: PDU, pdu_port: outlet } });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    return json(res);
  };
  const opEnded = (id: number) =>
    eventually(async () => {
      const op = (await json(await call('GET', `/api/operations/${id}/`))) as Op;
      expect(['succeeded', 'failed', 'cancelled']).toContain(op.status);
      return op;
    }, 60_000);

  /** A board whose agent is plugged into `outlet` of the PDU: it runs only while the outlet is on. */
  async function pluggedBoard(name: string, outlet: number, labels: Record<string, string> = {}) {
    const { id, token } = await register(name);
    const agentDir = await fs.mkdtemp(path.join(os.tmpdir(), `mm-power-${name}-`));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MM_') && k !== 'DATABASE_URL' && k !== 'PORT') env[k] = v;
    Object.assign(env, {
      MM_SERVER_URL: server.url,
      MM_BOARD_TOKEN: token,
      MM_AGENT_DIR: agentDir,
      MM_SIM_GPIO_PORT: '0',
      MM_RECONNECT_MAX_DELAY_MS: '300',
      LOG_LEVEL: 'info',
      ...HEARTBEAT,
    });
    await plugIn(pdu, outlet, {
      argv: [process.execPath, AGENT_BIN, '--simulate'],
      env,
      cwd: repoRoot,
      marker: `mm-power-${process.pid}-${outlet}`,
      log: path.join(workDir, `agent-${outlet}.log`),
    });
    outlets.push(outlet);
    if (Object.keys(labels).length) expect((await call('PATCH', `/api/boards/${id}/`, { labels })).status).toBe(200);
    return { id, agentDir };
  }

  /** Waits for the board's `field` to be `value`; on failure says how the board, its incidents and its agent stand. */
  async function until(id: string, field: string, value: string, outlet: number, timeoutMs = 30_000) {
    await eventually(async () => expect((await board(id))[field]).toBe(value), timeoutMs).catch(async (err: unknown) => {
      const tail = (await agentLog(outlet)).split('\n').slice(-15).join('\n');
      throw new Error(`${String(err)}\nboard: ${JSON.stringify(await board(id))}\nincidents: ${JSON.stringify(await incidents(id))}\nswitched: ${(await pdu.switched()).join(', ')}\n${tail}`);
    });
  }

  async function agentLog(outlet: number): Promise<string> {
    return fs.readFile(path.join(workDir, `agent-${outlet}.log`), 'utf8').catch(() => '');
  }

  async function online(id: string, outlet: number) {
    await eventually(async () => expect((await board(id)).status).toBe('online'), 60_000).catch(async (err: unknown) => {
      throw new Error(`board on outlet ${outlet} did not come online: ${String(err)}\n${(await agentLog(outlet)).split('\n').slice(-15).join('\n')}`);
    });
  }

  /** An invocation whose run is the simulated runner with these parameters. */
  async function invocation(name: string, params: Record<string, unknown>): Promise<number> {
    const id = (await json(await call('POST', '/api/invocations/create/', { name, description: 'power test' }))).id as number;
    expect((await upload(server.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify(params)))).status).toBe(201);
    return id;
  }

  async function execute(invocationId: number, boardId: string): Promise<Op> {
    const res = await call('POST', `/api/invocations/${invocationId}/execute/`, { board_id: boardId }, { prefer: 'respond-async' });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
    return (await json(res)) as Op;
  }

  beforeAll(async () => {
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-power-e2e-'));
    pdu = await startPdudaemon(path.join(workDir, 'pdu'), PDU);
    server = await startTestServer(realDatabaseUrl ? 'postgres' : 'embedded', {
      ...HEARTBEAT,
      MM_HANG_DETECT_S: '10',
      MM_POWER_CYCLE_OFF_S: '1',
      MM_RECOVER_MAX: '2',
      MM_RECOVER_WINDOW_S: '3600',
      MM_CANCEL_GRACE_S: '2',
      LOG_LEVEL: process.env.POWER_TEST_LOG ?? 'silent',
    });
    const lab = await register('lab-host');
    labHostId = lab.id;
    labHost = await startAgent({
      serverUrl: server.url,
      token: lab.token,
      agentDir: path.join(workDir, 'lab-host'),
      env: { MM_PDUDAEMON_URL: pdu.url, ...HEARTBEAT, MM_RECONNECT_MAX_DELAY_MS: '300' },
    });
    await eventually(async () => expect((await board(labHostId)).status).toBe('online'), 60_000);
  });

  afterAll(async () => {
    // Every outlet off: the agents (and runs) it started are killed.
    for (const outlet of outlets) spawnSync(process.execPath, [POWER_SWITCH, 'off', String(outlet), pdu.dir]);
    await labHost?.stop();
    await server?.stop();
    await pdu?.stop();
    if (workDir && !process.env.POWER_TEST_KEEP) await fs.rm(workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('no power command reaches a board without power settings: 409 power_not_configured', async () => {
    const { id } = await register('no-power');
    const res = await power(id, 'cycle');
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'power_not_configured' });
    // Not even a rollout step sends one: the step fails on its own.
    const rollout = await call('POST', '/api/rollouts/', { kind: 'power_cycle', board_selector: { 'power-none': 'yes' } });
    expect(rollout.status).toBe(400); // no board matches that selector
    expect((await board(id)).power).toBeNull();
    expect(await pdu.switched()).toEqual([]);
    // A board cannot be its own controller; an unknown controller is refused.
    const self = await call('PATCH', `/api/boards/${id}/`, { power: { controller_board_id: id, pdu_hostname: PDU, pdu_port: 9 } });
    expect(self.status).toBe(400);
    expect(await json(self)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'power.controller_board_id' }] });
  });

  it('manual on, cycle and off through the lab host and pdudaemon', async () => {
    const { id } = await pluggedBoard('manual', 1);
    const configured = await configure(id, 1);
    expect(configured.power).toEqual({ controller_board_id: labHostId, pdu_hostname: PDU, pdu_port: 1 });

    const on = await power(id, 'on');
    expect(on.status, JSON.stringify(await on.clone().json())).toBe(200);
    const onOp = (await json(on)) as Op;
    expect(onOp).toMatchObject({ kind: 'power_on', status: 'succeeded', board_id: id, result: { action: 'on', pdu_hostname: PDU, pdu_port: 1 } });
    expect(String(onOp.result!.pdu_answer)).toContain('OK');
    await online(id, 1);
    const first = await board(id);

    const cycle = await power(id, 'cycle');
    expect(cycle.status, JSON.stringify(await cycle.clone().json())).toBe(200);
    const cycled = (await json(cycle)) as Op & { finished_at: string };
    expect(cycled).toMatchObject({ kind: 'power_cycle', status: 'succeeded' });
    // A new agent process: a new link (connected later than before).
    await eventually(async () => {
      const b = await board(id);
      expect(b.status).toBe('online');
      expect(new Date(b.connected_at).getTime()).toBeGreaterThan(new Date(first.connected_at).getTime());
    }, 60_000);

    // How long the new agent took to link after the cycle ended: a board not linked within
    // MM_HANG_DETECT_S of a power operation counts as hung (an incident, another cycle).
    const boot = `linked ${(new Date((await board(id)).connected_at).getTime() - new Date(cycled.finished_at).getTime()) / 1000} s after the cycle ended`;

    const off = await power(id, 'off');
    expect(off.status, JSON.stringify(await off.clone().json())).toBe(200);
    expect(await json(off)).toMatchObject({ kind: 'power_off', status: 'succeeded' });
    await eventually(async () => expect((await board(id)).status).toBe('offline'), 30_000);
    expect(await pdu.switched(), `${boot}; incidents: ${JSON.stringify(await incidents(id))}`).toEqual(['1 on', '1 off', '1 on', '1 off']);
    // Switched off on purpose: past the hang-detection time (10 s since it was last heard, and
    // a sweep of 2.5 s) it is offline, not unresponsive.
    const lastHeard = new Date((await board(id)).last_seen_at).getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, lastHeard + 13_500 - Date.now())));
    expect((await board(id)).status).toBe('offline');
    expect(await incidents(id), boot).toEqual([]);
    // The operations are audited and listed like any other.
    const listed = await json(await call('GET', `/api/operations/?board_id=${id}`));
    expect((listed.operations as Op[]).map((o) => o.kind).sort()).toEqual(['power_cycle', 'power_off', 'power_on']);
  });

  it('a hung board is recovered without a person: detected, power-cycled, health-checked, back in service', async () => {
    const { id } = await pluggedBoard('hangs', 2, { 'power-test': 'yes' });
    await configure(id, 2);
    const check = await invocation('check', { duration_s: 0.2 });
    const created = await call('POST', '/api/health-checks/', { name: 'power-smoke', invocation_id: check, board_selector: { 'power-test': 'yes' }, interval_s: 3600 });
    expect(created.status).toBe(201);
    expect((await power(id, 'on')).status).toBe(200);
    await online(id, 2);
    // Its first health check (due at once) passes.
    await until(id, 'health', 'good', 2, 60_000);

    const hang = await invocation('hang', { hang: 'board', hang_after_s: 0.3 });
    const run = await execute(hang, id);
    const hungAt = Date.now();
    await until(id, 'status', 'unresponsive', 2);
    const open = (await incidents(id))[0]!;
    expect(open).toMatchObject({ outcome: null, recovered_at: null });
    expect(open.reason).toMatch(/no heartbeat since/);

    await eventually(
      async () => {
        const [incident] = await incidents(id);
        expect(incident).toMatchObject({ outcome: 'recovered' });
      },
      90_000,
      250,
    );
    const [incident] = await incidents(id);
    const b = await board(id);
    expect(b).toMatchObject({ status: 'online', health: 'good' });
    expect(incident!.actions.map((a: { action: string }) => a.action)).toEqual(['power_cycle', 'health_check']);
    expect(incident!.actions[0]).toMatchObject({ outcome: 'succeeded' });
    expect(incident!.actions[1].operation_ids).toHaveLength(1);
    expect(incident!.recovery_seconds).toBeGreaterThan(3);
    expect(new Date(incident!.started_at).getTime()).toBeGreaterThanOrEqual(hungAt - 1000);
    // The cycle went through pdudaemon: off then on.
    expect((await pdu.switched()).filter((l) => l.startsWith('2 '))).toEqual(['2 on', '2 off', '2 on']);
    // The run that hung it ended (its agent was cut off mid-run).
    expect((await opEnded(run.id)).status).not.toBe('succeeded');
    // MTTR is exported.
    const metrics = await (await call('GET', '/api/metrics/')).text();
    expect(metrics).toMatch(/^mm_board_recovery_seconds_count(\{[^}]*\})? [1-9]\d*$/m);
  });

  it('the retry limit leaves a board bad, saying why', async () => {
    const { id } = await pluggedBoard('dead', 3);
    await configure(id, 3);
    expect((await power(id, 'on')).status).toBe(200);
    await online(id, 3);
    // Unplugged while hung: cycles reach the switch but nothing comes back.
    const spec = path.join(pdu.dir, 'outlet-3.json');
    const saved = await fs.readFile(spec, 'utf8');
    const hang = await invocation('hang-dead', { hang: 'board', hang_after_s: 0.5 });
    const run = await execute(hang, id);
    await eventually(async () => expect(((await json(await call('GET', `/api/operations/${run.id}/`))) as Op).status).toBe('running'), 30_000);
    // Unplugged before the hang is noticed: the switch's commands reach no board any more.
    await fs.rename(spec, `${spec}.unplugged`);
    try {
      await until(id, 'status', 'unresponsive', 3);
      await eventually(
        async () => {
          const [incident] = await incidents(id);
          expect(incident).toMatchObject({ outcome: 'bad' });
        },
        120_000,
        250,
      );
    } finally {
      await fs.writeFile(spec, saved);
      spawnSync(process.execPath, [POWER_SWITCH, 'off', '3', pdu.dir]);
    }
    const [incident] = await incidents(id);
    expect(incident!.actions.map((a: { action: string }) => a.action)).toEqual(['power_cycle', 'power_cycle']);
    const b = await board(id);
    expect(b.health).toBe('bad');
    expect(b.health_reason).toMatch(/2 power cycles in 3600 s did not bring it back/);
    expect(b.status).toBe('offline');
    expect((await pdu.switched()).filter((l) => l.startsWith('3 '))).toEqual(['3 on', '3 off', '3 on', '3 off', '3 on', '3 off']); // the last: this test's own cut
  });

  it('a lab host offline: power commands fail power_controller_offline, nothing switched', async () => {
    const { id } = await pluggedBoard('orphan', 4);
    await configure(id, 4);
    await labHost.stop();
    await eventually(async () => expect((await board(labHostId)).status).toBe('offline'), 30_000);
    const before = await pdu.switched();
    const res = await power(id, 'on');
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(body).toMatchObject({ code: 'operation_failed', operation: { kind: 'power_on', status: 'failed', error: { code: 'power_controller_offline' } } });
    expect(body.operation.error.message).toContain('lab-host');
    expect(await pdu.switched()).toEqual(before);
  });
});
