/**
 * Faults: the control plane is killed (SIGKILL, no shutdown code runs) in the middle of an
 * upload, a transfer and a run, then started again on the same folder and database.
 * The agent must reconnect by itself, report what it did while the server was away, and
 * nothing half-written may be left or shown.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startWanProxy, type WanProxy } from '../../bench/wan-proxy.ts';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, pidsWithMarker, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { filesUnder, openUpload, sha256, sha256File, upload } from './fault-support.ts';
import { asVideo } from '../support/fake-video.ts';

// Real processes on a shared machine: a fault and its recovery may take a while under load.
vi.setConfig({ testTimeout: 180_000 });

describe.each(dbKinds)('faults: the server is killed with SIGKILL and started again (%s database)', (kind) => {
  let cluster: ServerCluster;
  let url: string;
  let board: { id: string; token: string };
  let agent: AgentProcess;
  let agentDir: string;
  let scratch: string;
  /** Agent ↔ server through a rate cap, so a transfer lasts long enough to be cut. */
  let link: WanProxy;
  /** The log of the run the server was killed during (checked by the test after it). */
  let logOfCrashedRun: string | undefined;
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);
  const post = (p: string, body?: unknown, headers: Record<string, string> = {}) =>
    api(p, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const createInvocation = async (name: string) => {
    const res = await post('/api/invocations/create/', { name, description: 'faults' });
    expect(res.status).toBe(201);
    return (await json(res)).id as number;
  };
  const operation = async (id: number) => json(await api(`/api/operations/${id}/`));
  const waitOnline = () => eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000, 100);
  const crashAndRestart = async () => {
    await cluster.current().kill();
    await cluster.start();
  };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fault-crash-'));
    agentDir = path.join(scratch, 'agent');
    cluster = await serverCluster(kind);
    const server = await cluster.start();
    url = server.url;
    link = await startWanProxy({ target: { host: '127.0.0.1', port: server.port }, rttMs: 2, rateBytesPerS: 3 * 1024 * 1024 });
    board = await json(await post('/api/boards/', { name: 'crash-board' }));
    agent = await startAgent({ serverUrl: `http://127.0.0.1:${link.port}`, token: board.token, agentDir });
    await waitOnline();
  });

  afterAll(async () => {
    await agent?.stop();
    await link?.close();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('mid-upload: the client sees the connection drop, no partial file is left or listed, the same upload then works', async () => {
    const inv = await createInvocation('crash-upload');
    const contentDir = path.join(cluster.dataDir, 'content');
    const before = (await filesUnder(contentDir)).filter((f) => !f.startsWith('.tmp'));
    const size = 8 * 1024 * 1024;
    const data = asVideo(randomBytes(size));
    const u = openUpload(url, inv, 'input_video', 'clip.mp4', size);
    await u.write(data.subarray(0, 2 * 1024 * 1024));
    // Bytes of the upload are on the server's disk (its temp file) when it dies.
    await eventually(async () => {
      const temps = (await filesUnder(contentDir)).filter((f) => f.startsWith('.tmp'));
      expect(temps.length).toBeGreaterThan(0);
    }, 30_000);
    await cluster.current().kill();
    await expect(u.response).rejects.toThrow();

    await cluster.start();
    expect(await filesUnder(contentDir)).toEqual(before);
    expect((await json(await api(`/api/invocations/${inv}/`))).files.input_video).toBeNull();
    expect((await api(`/api/invocations/${inv}/files/input_video/`)).status).toBe(404);

    const again = await upload(url, inv, 'input_video', 'clip.mp4', data);
    expect(again.status).toBe(201);
    expect(JSON.parse(again.body)).toMatchObject({ sha256: sha256(data), size });
    await waitOnline();
  });

  it('mid-transfer: the agent reconnects, the transfer ends by itself, and the file on the board is whole', async () => {
    const inv = await createInvocation('crash-transfer');
    const data = asVideo(randomBytes(12 * 1024 * 1024));
    expect((await upload(url, inv, 'input_video', 'big.mp4', data)).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/transfer/`, undefined, { prefer: 'respond-async' }));
    expect(op.status).toMatch(/queued|running/);
    // Part of the file is on the board when the server dies.
    await eventually(async () => {
      const partial = (await filesUnder(agentDir)).find((f) => f.includes('partial'));
      expect(partial).toBeDefined();
      expect((await fs.stat(path.join(agentDir, partial!))).size).toBeGreaterThan(0);
    }, 60_000, 20);
    await crashAndRestart();

    // No one has to retry: the agent comes back and the operation settles.
    const settled = await eventually(async () => {
      const o = await operation(op.id);
      expect(['succeeded', 'failed']).toContain(o.status);
      return o;
    }, 90_000, 200);
    if (settled.status === 'failed') {
      // A failure must say why; a second transfer then completes the file.
      expect(settled.error.code).toMatch(/^[a-z_]+$/);
      expect(settled.error.message.length).toBeGreaterThan(0);
      const retry = await json(await post(`/api/invocations/${inv}/transfer/`));
      expect(retry.status).toBe('succeeded');
    }
    expect(await sha256File(path.join(agentDir, 'invocations', String(inv), 'big.mp4'))).toBe(sha256(data));
    await waitOnline();
  });

  it('mid-run: the run goes on, its outcome and video are reported from the journal after the restart', async () => {
    const inv = await createInvocation('crash-run');
    expect((await upload(url, inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 3}'))).status).toBe(201);
    // A client waiting on the POST sees its connection drop when the server dies.
    const waiting = post(`/api/invocations/${inv}/execute/`).catch((e: unknown) => e);
    const op = await eventually(async () => {
      const list = await json(await api(`/api/operations/?invocation_id=${inv}&status=running`));
      expect(list.operations.length).toBe(1);
      return list.operations[0];
    }, 60_000, 100);
    await eventually(async () => expect((await pidsWithMarker(agent.marker, [agent.pid])).length).toBeGreaterThan(0), 60_000);
    await cluster.current().kill();
    expect(await waiting).toBeInstanceOf(Error);

    // The run ends while no server is there; the agent journals its outcome.
    await agent.output.waitFor((l) => l.msg === 'operation ended' && l.op_id === op.id, 'operation ended', 60_000);
    await cluster.start();
    const done = await eventually(async () => {
      const o = await operation(op.id);
      expect(o.status).toBe('succeeded');
      return o;
    }, 90_000, 200);
    expect(done.result.exit_code).toBe(0);
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(video)).toBe(done.result.output_video.sha256);
    logOfCrashedRun = await (await api(`/api/operations/${op.id}/log/`)).text();
    await waitOnline();
  });

  // A hole this suite found: the run's output printed while the server was away was lost (the
  // hello's outcome was settled before the buffered log, which was then dropped). The agent now
  // sends the log before the outcome. Still not covered: log text the server had received but not
  // yet written when it was killed (log events are not acknowledged; see docs/reliability.md).
  it('mid-run: what the runner printed while the server was away reaches the log', () => {
    expect(logOfCrashedRun).toMatch(/wrote output\.mp4/);
    // What the agent sent again after the reconnect (it may have died in flight) is stored once.
    expect(logOfCrashedRun?.match(/simulated runner: invocation/g)).toHaveLength(1);
    expect(logOfCrashedRun?.match(/progress 100%/g)).toHaveLength(1);
  });
});
