/**
 * Several replicas on one PostgreSQL (docs/replicas.md): three control-plane processes on
 * one database and one shared MM_DATA_DIR, a round-robin balancer in front of them for the
 * agent, one simulated board. Work asked of one replica reaches the board linked to
 * another, its events reach clients of every replica, the per-board queue holds across
 * replicas, and a replica killed with SIGKILL loses nothing.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { upload } from '../faults/fault-support.ts';
import { freePort, openSse, upstreamState, type SseBlock, type SseReader } from './device-scripts-support.ts';
import { startBalancer, type Balancer } from '../support/balancer.ts';
import { createScratchDatabase, skipWithoutRealDatabase } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster, type ServerProcess } from '../support/processes.ts';
import { takeSseBlocks } from '../support/sse.ts';

// Three servers and an agent on a shared machine: generous.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 400_000 });

interface SeenEvent {
  seq: number;
  type: string;
  data: unknown;
}

/** Follows an operation's SSE stream on one replica until its `end` event (or the stream closes). */
function follow(server: ServerProcess, opId: number): { events: SeenEvent[]; ended: Promise<SeenEvent[]> } {
  const events: SeenEvent[] = [];
  const ended = (async () => {
    const res = await server.api(`/api/operations/${opId}/events/`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      const { blocks, rest } = takeSseBlocks(buffer + value);
      buffer = rest;
      for (const b of blocks) {
        if (b.data === undefined || b.id === undefined) continue;
        // A live progress event repeats the id of the last stored event (docs/conformance.md):
        // it is not a stored event of its own.
        if (b.event === 'progress' && events.length > 0 && Number(b.id) === events.at(-1)!.seq) continue;
        events.push({ seq: Number(b.id), type: b.event ?? 'message', data: JSON.parse(b.data) as unknown });
        if (b.event === 'end') {
          await reader.cancel();
          return events;
        }
      }
    }
  })();
  return { events, ended };
}

describe.skipIf(skipWithoutRealDatabase('several replicas on one database'))('several replicas on one PostgreSQL', () => {
  const clusters: ServerCluster[] = [];
  const replicas: ServerProcess[] = [];
  let scratch: { url: string; drop(): Promise<void> };
  let sharedDir: string;
  let balancer: Balancer;
  let agent: AgentProcess;
  let board: { id: string; token: string };
  let A: ServerProcess;
  let B: ServerProcess;
  let C: ServerProcess;
  let motorId: string;
  const sseClients: SseReader[] = [];

  const post = (s: ServerProcess, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    s.api(p, {
      method: 'POST',
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const operation = async (s: ServerProcess, id: number) => json(await s.api(`/api/operations/${id}/`));
  const newInvocation = async (s: ServerProcess, name: string, params: Record<string, unknown>) => {
    const res = await post(s, '/api/invocations/create/', { name, description: 'replicas' });
    expect(res.status).toBe(201);
    const id = (await json(res)).id as number;
    expect((await upload(s.url, id, 'parameter', 'p.json', Buffer.from(JSON.stringify(params)))).status).toBe(201);
    return id;
  };
  const linkedTo = () => {
    for (const r of replicas) {
      const online = r.output.lines.filter((l) => l.msg === 'agent online').length;
      const gone = r.output.lines.filter((l) => l.msg === 'agent disconnected').length;
      if (online > gone) return r;
    }
    return undefined;
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    sharedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-replicas-'));
    const start = async (name: string) => {
      // 'embedded' only keeps the cluster from making a database of its own: DATABASE_URL names the shared one.
      const cluster = await serverCluster('embedded', { DATABASE_URL: scratch.url, MM_DATA_DIR: sharedDir, MM_REPLICA_ID: name, MM_CANCEL_GRACE_S: '20' });
      clusters.push(cluster);
      return cluster.start();
    };
    // The first one migrates the database; the others start together.
    A = await start('replica-a');
    [B, C] = await Promise.all([start('replica-b'), start('replica-c')]);
    replicas.push(A, B, C);
    balancer = await startBalancer(replicas.map((r) => ({ host: '127.0.0.1', port: r.port })));
    board = await json(await post(B, '/api/boards/', { name: 'replicated-board' }));
    // The seeded GPIO motor script, on a port free on this machine; the simulated board runs it there.
    const { scripts } = await json(await C.api('/api/device-scripts/?device_type=gpio'));
    motorId = scripts[0].id;
    const gpioPort = await freePort();
    const patched = await B.api(`/api/device-scripts/${motorId}/`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ port: gpioPort }),
    });
    expect(patched.status).toBe(200);
    // The balancer's first connection goes to A.
    agent = await startAgent({
      serverUrl: balancer.url,
      token: board.token,
      agentDir: path.join(sharedDir, 'agent'),
      env: { MM_SIM_GPIO_PORT: String(gpioPort) },
    });
    await A.output.waitFor((l) => l.msg === 'agent online', 'agent online on A', 60_000);
  });

  afterAll(async () => {
    for (const c of sseClients) c.close();
    await agent?.stop();
    await balancer?.close();
    for (const c of clusters) await c.cleanup();
    await scratch?.drop();
    await fs.rm(sharedDir, { recursive: true, force: true });
  });

  it('every replica shows the board online, wherever its link is', async () => {
    for (const r of replicas) {
      await eventually(async () => expect((await json(await r.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000, 100);
    }
    const list = await json(await C.api('/api/boards/'));
    expect(list.boards.find((b: { id: string }) => b.id === board.id).status).toBe('online');
  });

  it('created and uploaded through B, executed through C, on the board linked to A; its events reach clients of A and B', async () => {
    const inv = await newInvocation(B, 'through-b', { duration_s: 2 });
    const res = await post(C, `/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const op = await json(res);
    const onA = follow(A, op.id);
    const onB = follow(B, op.id);
    const [eventsA, eventsB] = await Promise.all([onA.ended, onB.ended]);
    for (const events of [eventsA, eventsB]) {
      const end = events.at(-1)!;
      expect(end.type).toBe('end');
      expect((end.data as { status: string }).status).toBe('succeeded');
      // In order, none twice.
      const seqs = events.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    }
    // B's client saw live events (it subscribed before the run ended) with the same content as A's.
    expect(eventsB.map((e) => e.seq)).toEqual(eventsA.map((e) => e.seq));
    expect(eventsA.some((e) => e.type === 'log')).toBe(true);
    // The run happened on A (holding the link): the outcome came back with its video.
    const done = await operation(C, op.id);
    expect(done.status).toBe('succeeded');
    expect(done.result.output_video).toMatchObject({ kind: 'output_video' });
    // A POST that waits on another replica than the one holding the link gets its answer.
    const inv2 = await newInvocation(C, 'sync-wait', { duration_s: 1 });
    const waited = await post(B, `/api/invocations/${inv2}/execute/`);
    expect(waited.status).toBe(200);
    expect((await json(waited)).status).toBe('succeeded');
  });

  it('a cancel through B stops the run on the board linked to A', async () => {
    const inv = await newInvocation(C, 'cancel-me', { duration_s: 120 });
    const op = await json(await post(C, `/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    const watch = follow(C, op.id);
    await eventually(async () => expect((await operation(B, op.id)).status).toBe('running'), 60_000, 100);
    // The runner has started on the board (a log line came back).
    await eventually(() => expect(watch.events.some((e) => e.type === 'log' && JSON.stringify(e.data).includes('stdout'))).toBe(true), 60_000, 100);
    const started = Date.now();
    const res = await post(B, `/api/operations/${op.id}/cancel/`);
    expect(res.status).toBe(202);
    const ended = await watch.ended;
    const end = ended.at(-1)!;
    expect((end.data as { status: string }).status).toBe('cancelled');
    // Confirmed by the board, not by the 20 s grace timer.
    expect(Date.now() - started).toBeLessThan(15_000);
    const log = await (await A.api(`/api/operations/${op.id}/log/`)).text();
    expect(log).toContain('cancel requested');
  });

  it('the motor proxied through C drives the board linked to A; its event reaches stream clients of all three replicas', async () => {
    // The motor script runs inside the agent: ready once it answers through the relay.
    await eventually(async () => expect((await A.api(`/api/device-scripts/${motorId}/proxy/state`)).status).toBe(200), 30_000, 200);
    const clients = await Promise.all(replicas.map((r) => openSse(`${r.url}/api/device-scripts/${motorId}/stream/`)));
    sseClients.push(...clients);
    for (const c of clients) expect(c.status).toBe(200);
    await Promise.all(clients.map((c) => c.waitFor((b: SseBlock) => upstreamState(b) === 'up', { timeoutMs: 30_000 })));

    const res = await C.api(`/api/device-scripts/${motorId}/proxy/motor/forward`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = await json(res);
    expect(answer.motion).toBe('forward');
    const events = await Promise.all(clients.map((c) => c.waitFor((b: SseBlock) => b.event === 'state' && b.id === String(answer.event_id), { timeoutMs: 30_000 })));
    for (const e of events) expect(JSON.parse(e.data!)).toMatchObject({ cause: 'motor', motion: 'forward' });
    // One upstream subscription on the board, whatever the number of replicas with clients.
    const state = await json(await B.api(`/api/device-scripts/${motorId}/proxy/state`));
    expect(state.stream_clients).toBe(1);
    // A body passed across replicas is held in memory: 1 MiB at most.
    const big = await B.api(`/api/device-scripts/${motorId}/proxy/motor/forward`, { method: 'POST', body: Buffer.alloc(1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    for (const c of clients) c.close();
  });

  it('two operations for one board posted to two replicas at once run one after the other', async () => {
    const [inv1, inv2] = await Promise.all([newInvocation(B, 'race-1', { duration_s: 2 }), newInvocation(C, 'race-2', { duration_s: 2 })]);
    const [r1, r2] = await Promise.all([
      post(B, `/api/invocations/${inv1}/execute/`, undefined, { prefer: 'respond-async' }),
      post(C, `/api/invocations/${inv2}/execute/`, undefined, { prefer: 'respond-async' }),
    ]);
    const ops = [await json(r1), await json(r2)].sort((a, b) => a.id - b.id);
    const done = await eventually(
      async () => {
        const all = await Promise.all(ops.map((o) => operation(A, o.id)));
        for (const o of all) expect(o.status).toBe('succeeded');
        return all;
      },
      120_000,
      250,
    );
    // FIFO by id, never both at once.
    expect(Date.parse(done[1].started_at)).toBeGreaterThanOrEqual(Date.parse(done[0].finished_at));
  });

  it('A killed with SIGKILL mid-run: the board moves to another replica, the run outcome arrives, the queued work goes on', async () => {
    expect(linkedTo()).toBe(A);
    // Motor stream clients on B and C, fed by A's one upstream subscription.
    const watchers = await Promise.all([B, C].map((r) => openSse(`${r.url}/api/device-scripts/${motorId}/stream/`)));
    sseClients.push(...watchers);
    await Promise.all(watchers.map((c) => c.waitFor((b: SseBlock) => upstreamState(b) === 'up', { timeoutMs: 30_000 })));
    const seenBeforeKill = watchers.map((c) => c.blocks.length);
    const inv = await newInvocation(B, 'killed-a', { duration_s: 5 });
    const queuedInv = await newInvocation(C, 'queued-behind', { duration_s: 1 });
    const running = await json(await post(B, `/api/invocations/${inv}/execute/`, undefined, { prefer: 'respond-async' }));
    const queued = await json(await post(C, `/api/invocations/${queuedInv}/execute/`, undefined, { prefer: 'respond-async' }));
    await eventually(async () => expect((await operation(B, running.id)).status).toBe('running'), 60_000, 100);
    await clusters[0]!.current().kill();
    const killedAt = Date.now();

    // The agent reconnects through the balancer to B or C.
    const survivor = await eventually(
      () => {
        const r = [B, C].find((s) => s.output.lines.some((l) => l.msg === 'agent online'));
        expect(r).toBeDefined();
        return r!;
      },
      60_000,
      100,
    );
    const movedAfterMs = Date.now() - killedAt;
    for (const r of [B, C]) {
      await eventually(async () => expect((await json(await r.api(`/api/boards/${board.id}/`))).status).toBe('online'), 60_000, 200);
    }
    const ran = await eventually(
      async () => {
        const o = await operation(B, running.id);
        expect(o.status).toBe('succeeded');
        return o;
      },
      120_000,
      250,
    );
    expect(ran.result.output_video).toMatchObject({ kind: 'output_video' });
    const after = await eventually(
      async () => {
        const o = await operation(C, queued.id);
        expect(o.status).toBe('succeeded');
        return o;
      },
      120_000,
      250,
    );
    expect(Date.parse(after.started_at)).toBeGreaterThanOrEqual(Date.parse(ran.finished_at));

    // The stream clients heard their upstream go down with A, then come back up from the
    // board's new holder, and get the script's events again (a command through the replica
    // that does not hold the link).
    for (const [i, c] of watchers.entries()) {
      const down = await c.waitFor((b: SseBlock) => upstreamState(b) === 'down', { from: seenBeforeKill[i]!, timeoutMs: 60_000 });
      await c.waitFor((b: SseBlock) => upstreamState(b) === 'up', { from: c.blocks.indexOf(down) + 1, timeoutMs: 60_000 });
    }
    const other = survivor === B ? C : B;
    const drive = await eventually(
      async () => {
        const res = await other.api(`/api/device-scripts/${motorId}/proxy/motor/forward`, { method: 'POST' });
        expect(res.status).toBe(200);
        return json(res);
      },
      30_000,
      250,
    );
    await Promise.all(watchers.map((c) => c.waitFor((b: SseBlock) => b.event === 'state' && b.id === String(drive.event_id), { timeoutMs: 30_000 })));
    for (const c of watchers) c.close();
    // Nothing lost: every earlier operation is still there with its outcome.
    const list = await json(await survivor.api(`/api/operations/?board_id=${board.id}&limit=100`));
    expect(list.operations.every((o: { status: string }) => ['succeeded', 'cancelled'].includes(o.status))).toBe(true);
    console.log(`board moved to another replica ${movedAfterMs} ms after A was killed`);
  });
});
