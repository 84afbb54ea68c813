/**
 * Faults: the database becomes unreachable and comes back. The server reaches the real
 * PostgreSQL through a TCP proxy that the test cuts (every connection reset, new ones
 * refused) and restores. Real PostgreSQL only: the embedded database lives in the server's
 * process and cannot be cut away from it.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createScratchDatabase, skipWithoutRealDatabase } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { asVideo } from '../support/fake-video.ts';
import { eventually, isLiveProcess, pidsWithMarker, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';
import { filesUnder, sha256, sleep, startCuttableProxy, upload, type CuttableProxy } from './fault-support.ts';

// Real processes on a shared machine: a fault and its recovery may take a while under load.
vi.setConfig({ testTimeout: 180_000 });

describe.skipIf(skipWithoutRealDatabase('the database cut and back under a running server and agent'))('faults: the database is unreachable, then back (real PostgreSQL)', () => {
  let scratchDb: Awaited<ReturnType<typeof createScratchDatabase>>;
  let dbProxy: CuttableProxy;
  let cluster: ServerCluster;
  let url: string;
  let board: { id: string; token: string };
  let agent: AgentProcess;
  let scratch: string;
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
  /** What a client is told while the database is away: a problem document, never a hang or a crash. */
  const expectOutageAnswer = async (res: Response) => {
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect((await json(res)).code).toBe('database_unreachable');
  };
  /** The server process is still the one started in beforeAll, alive, and logged no crash. */
  const serverAlive = () => {
    const server = cluster.current();
    expect(() => process.kill(server.pid, 0)).not.toThrow();
    expect(server.output.text.join('\n')).not.toMatch(/unhandled rejection|unhandledRejection|uncaught|FATAL/i);
  };

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-fault-db-'));
    scratchDb = await createScratchDatabase();
    const target = new URL(scratchDb.url);
    dbProxy = await startCuttableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxied = new URL(scratchDb.url);
    proxied.host = dbProxy.address;
    // The cluster's own database is the embedded kind; DATABASE_URL points it at the proxy instead.
    cluster = await serverCluster('embedded', { DATABASE_URL: proxied.toString() });
    url = (await cluster.start()).url;
    board = await json(await post('/api/boards/', { name: 'db-outage-board' }));
    agent = await startAgent({ serverUrl: url, token: board.token, agentDir: path.join(scratch, 'agent') });
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000, 100);
  });

  afterAll(async () => {
    dbProxy?.restore();
    await agent?.stop();
    await cluster?.cleanup();
    await dbProxy?.close();
    await scratchDb?.drop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('health says 503 while the database is away and 200 once it is back, without a restart', async () => {
    expect((await api('/api/health/')).status).toBe(200);
    dbProxy.cut();
    try {
      const res = await api('/api/health/');
      expect(res.status).toBe(503);
      expect((await json(res)).database).not.toBe('ok');
    } finally {
      dbProxy.restore();
    }
    await eventually(async () => expect((await api('/api/health/')).status).toBe(200), 30_000, 200);
    serverAlive();
  });

  it('reads, writes and uploads during the outage get a problem answer and change nothing', async () => {
    const before = (await json(await api('/api/invocations/'))).total as number;
    const inv = await createInvocation('db-outage-writes');
    const contentDir = path.join(cluster.dataDir, 'content');
    const contentBefore = await filesUnder(contentDir);
    dbProxy.cut();
    try {
      await expectOutageAnswer(await api('/api/invocations/'));
      await expectOutageAnswer(await post('/api/invocations/create/', { name: 'lost', description: '' }));
      const up = await upload(url, inv, 'input_video', 'clip.mp4', asVideo(Buffer.alloc(256 * 1024, 7)));
      expect(up.status).toBe(503);
      await expectOutageAnswer(await post(`/api/invocations/${inv}/transfer/`));
    } finally {
      dbProxy.restore();
    }
    await eventually(async () => expect((await api('/api/health/')).status).toBe(200), 30_000, 200);
    expect((await json(await api('/api/invocations/'))).total).toBe(before + 1);
    const record = await json(await api(`/api/invocations/${inv}/`));
    expect(record.files.input_video).toBeNull();
    expect((await json(await api(`/api/operations/?invocation_id=${inv}`))).total).toBe(0);
    expect(await filesUnder(contentDir)).toEqual(contentBefore);
    serverAlive();
  });

  it('a run that ends while the database is away is recorded once it is back, with its video', async () => {
    const inv = await createInvocation('db-outage-run');
    // The run ends when the test says so (the file appears), however slow the machine.
    const release = path.join(scratch, 'end-the-run');
    expect((await upload(url, inv, 'parameter', 'p.json', Buffer.from(JSON.stringify({ duration_s: 0, until_file: release })))).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    // The run has its files and is in the runner's hands (a process of the agent's alone could
    // be another child, e.g. a sensor read, with the files still to come: cut then, the run
    // could not start until the database is back).
    await eventually(async () => expect((await operation(op.id)).progress.phase).toBe('run'), 60_000, 100);
    dbProxy.cut();
    try {
      // What this test is about: the run ends during the outage, not before it.
      expect(agent.output.lines.some((l) => l.msg === 'operation ended' && l.op_id === op.id)).toBe(false);
      await fs.writeFile(release, '');
      await agent.output.waitFor((l) => l.msg === 'operation ended' && l.op_id === op.id, 'operation ended', 60_000);
      await sleep(1000);
    } finally {
      dbProxy.restore();
    }
    const done = await eventually(async () => {
      const o = await operation(op.id);
      expect(o.status).toBe('succeeded');
      return o;
    }, 120_000, 250);
    const video = Buffer.from(await (await api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256(video)).toBe(done.result.output_video.sha256);
    serverAlive();
  }, 180_000);

  it('a cancel accepted before the outage ends as cancelled, and the server stays up', async () => {
    const inv = await createInvocation('db-outage-cancel');
    // The runner ignores SIGTERM: the agent confirms the cancel only after its grace period,
    // by which time the database is gone.
    expect((await upload(url, inv, 'parameter', 'p.json', Buffer.from('{"duration_s": 120, "ignore_sigterm": true}'))).status).toBe(201);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    await eventually(async () => expect((await operation(op.id)).progress.phase).toBe('run'), 60_000, 100);
    // The runner's processes (the agent's other children, e.g. a facts probe, come and go on
    // their own and are not what this test is about).
    const runPids = await eventually(async () => {
      const pids = await pidsWithMarker(agent.marker, [agent.pid]);
      expect(pids.length).toBeGreaterThan(0);
      return pids;
    }, 60_000);
    expect((await post(`/api/operations/${op.id}/cancel/`)).status).toBe(202);
    dbProxy.cut();
    try {
      await agent.output.waitFor((l) => l.msg === 'operation ended' && l.op_id === op.id, 'operation ended', 60_000);
      await sleep(1000);
    } finally {
      dbProxy.restore();
    }
    const ended = await eventually(async () => {
      const o = await operation(op.id);
      expect(o.status).toBe('cancelled');
      return o;
    }, 120_000, 250);
    expect(ended.error.code).toBe('cancelled');
    const stillLive = [];
    for (const pid of runPids) if (await isLiveProcess(pid)) stillLive.push(pid);
    expect(stillLive).toEqual([]);
    serverAlive();
  }, 180_000);
});
