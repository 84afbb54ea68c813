/**
 * Faults: the agent's link is cut, goes silent, and is slow. The agent reaches the server
 * through two proxies: one the test cuts or freezes, then a long, narrow link (200 ms round
 * trip, 2 MB/s). Heartbeats are short so a silent link is noticed within seconds.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startWanProxy, type WanProxy } from '../../bench/wan-proxy.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, pidsWithMarker, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { filesUnder, sha256, sha256File, startCuttableProxy, upload, type CuttableProxy } from './fault-support.ts';
import { asVideo } from '../support/fake-video.ts';

// Real processes on a shared machine: a fault and its recovery may take a while under load.
vi.setConfig({ testTimeout: 180_000 });

const HEARTBEAT = { MM_HEARTBEAT_INTERVAL_MS: '500', MM_HEARTBEAT_TIMEOUT_MS: '2500' };

// The link's faults do not depend on the database: one kind is enough (the real one when there is one, it starts faster).
describe('faults: the agent link is cut, silent and slow', () => {
  let cluster: ServerCluster;
  let board: { id: string; token: string };
  let agent: AgentProcess;
  let agentDir: string;
  let scratch: string;
  let wan: WanProxy;
  let cuttable: CuttableProxy;
  /** The log of the run whose link was cut (checked by the test after it). */
  let logOfCutRun: string | undefined;
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const post = (p: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(p, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const url = () => cluster.current().url;
  const createInvocation = async (name: string) => {
    const res = await post('/api/invocations/create/', { name, description: 'faults' });
    expect(res.status).toBe(201);
    return (await json(res)).id as number;
  };
  const operation = async (id: number) => json(await api(`/api/operations/${id}/`));
  const boardStatus = async () => (await json(await api(`/api/boards/${board.id}/`))).status as string;
  const waitStatus = (status: string, timeoutMs = 60_000) => eventually(async () => expect(await boardStatus()).toBe(status), timeoutMs, 100);

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fault-link-'));
    agentDir = path.join(scratch, 'agent');
    cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded', HEARTBEAT);
    const server = await cluster.start();
    wan = await startWanProxy({ target: { host: '127.0.0.1', port: server.port }, rttMs: 200, rateBytesPerS: 2 * 1024 * 1024 });
    cuttable = await startCuttableProxy({ host: '127.0.0.1', port: wan.port });
    board = await json(await post('/api/boards/', { name: 'link-board' }));
    agent = await startAgent({ serverUrl: `http://${cuttable.address}`, token: board.token, agentDir, env: HEARTBEAT });
    await waitStatus('online');
  });

  afterAll(async () => {
    cuttable?.restore();
    await agent?.stop();
    await cuttable?.close();
    await wan?.close();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('a run over the slow link succeeds, its files and video intact', async () => {
    const inv = await createInvocation('slow-link-run');
    const input = asVideo(randomBytes(1024 * 1024));
    expect((await upload(url(), inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 1}'))).status).toBe(201);
    expect((await upload(url(), inv, 'input_video', 'in.mp4', input)).status).toBe(201);
    const res = await post(`/api/invocations/${inv}/execute/`);
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'in.mp4'))).toBe(sha256(input));
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(video)).toBe(op.result.output_video.sha256);
  });

  it('a link cut mid-run: the board is offline at once, new work gets 503, the run is reported when the link returns', async () => {
    const inv = await createInvocation('cut-mid-run');
    const other = await createInvocation('cut-other');
    expect((await upload(url(), inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 3}'))).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    await eventually(async () => expect((await pidsWithMarker(agent.marker, [agent.pid])).length).toBeGreaterThan(0), 60_000);
    cuttable.cut();
    try {
      await waitStatus('offline', 10_000);
      const refused = await post(`/api/invocations/${other}/transfer/`);
      expect(refused.status).toBe(503);
      expect((await json(refused)).code).toBe('board_offline');
      expect((await operation(op.id)).status).toBe('running');
      await agent.output.waitFor((l) => l.msg === 'operation ended' && l.op_id === op.id, 'operation ended', 60_000);
    } finally {
      cuttable.restore();
    }
    await waitStatus('online');
    const done = await eventually(async () => {
      const o = await operation(op.id);
      expect(o.status).toBe('succeeded');
      return o;
    }, 60_000, 200);
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(video)).toBe(done.result.output_video.sha256);
    logOfCutRun = await (await api(`/api/operations/${op.id}/log/`)).text();
  }, 120_000);

  // A hole this suite found: the hello carried the run's outcome, the server settled it and then
  // dropped the agent's buffered `op.log` of the ended operation. Now an ended operation with an
  // unsent log is listed as running in the hello; its log goes first, its outcome after.
  it('a link cut mid-run: what the runner printed while the link was down reaches the log', () => {
    expect(logOfCutRun).toMatch(/wrote output\.mp4/);
    // What the agent sent again after the reconnect (it may have died in flight) is stored once.
    expect(logOfCutRun?.match(/simulated runner: invocation/g)).toHaveLength(1);
    expect(logOfCutRun?.match(/progress 100%/g)).toHaveLength(1);
  });

  it('a link cut mid-transfer: the transfer resumes from the bytes on the board when the link returns', async () => {
    const inv = await createInvocation('cut-mid-transfer');
    const data = asVideo(randomBytes(6 * 1024 * 1024));
    expect((await upload(url(), inv, 'input_video', 'big.mp4', data)).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/transfer/`, undefined, { prefer: 'respond-async' }));
    await eventually(async () => {
      const partial = (await filesUnder(agentDir)).find((f) => f.includes('partial'));
      expect(partial).toBeDefined();
      expect((await fs.stat(path.join(agentDir, partial!))).size).toBeGreaterThan(512 * 1024);
    }, 60_000, 20);
    cuttable.cut();
    await waitStatus('offline', 10_000);
    cuttable.restore();
    const done = await eventually(async () => {
      const o = await operation(op.id);
      expect(['succeeded', 'failed']).toContain(o.status);
      return o;
    }, 90_000, 200);
    expect(done.status).toBe('succeeded');
    expect(await (await api(`/api/operations/${op.id}/log/`)).text()).toMatch(/resuming at byte [1-9]/);
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'big.mp4'))).toBe(sha256(data));
  });

  it('a silent link (no reset, nothing passes) is dropped by heartbeats, and the agent comes back on its own', async () => {
    await waitStatus('online');
    const before = cuttable.connections();
    cuttable.freeze();
    try {
      await waitStatus('offline', 20_000);
    } finally {
      cuttable.restore();
    }
    await waitStatus('online');
    expect(cuttable.connections()).toBeGreaterThan(before);
    const inv = await createInvocation('after-silence');
    expect((await upload(url(), inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 0}'))).status).toBe(201);
    expect((await post(`/api/invocations/${inv}/execute/`)).status).toBe(200);
  });
});
