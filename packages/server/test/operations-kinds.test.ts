import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperationFailure, type OperationKind } from '../src/operations/kinds.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { FakeAgent } from './support/fake-agent.ts';

/**
 * Server-side operation kinds (kinds.ts): what the PAC and device-script modules build on.
 * `test_probe` does what its params say, through the helpers a real kind uses.
 */
const testKinds: Record<string, OperationKind> = {};
testKinds.test_probe = {
  async run(op, h) {
    const what = op.params.mode;
    if (what === 'fail') throw new OperationFailure('probe_failed', 'the probe failed on purpose', { partial: true });
    if (what === 'wait') {
      await h.log('waiting for cancel\n');
      await new Promise<void>((_, reject) => h.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
    }
    if (what === 'reboot') {
      const { back } = h.expectReboot({ timeoutMs: 10_000 });
      await h.log('rebooting\n');
      return back;
    }
    const info = await h.call('agent.info', {});
    h.progress({ phase: 'probe', bytes_done: 1, bytes_total: 1 });
    await h.log(`agent ${info.agent_version}\n`);
    return { info };
  },
};
testKinds.test_requeue = {
  onServerRestart: 'requeue',
  async run(op, h) {
    if (op.params.hang && !(globalThis as { released?: boolean }).released) {
      await new Promise<void>((resolve) => h.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new Error('stopped');
    }
    return { ran: true };
  },
};

async function registerBoard(server: TestServer, name: string) {
  const res = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  return (await json(res)) as { id: string; token: string };
}

async function answerInfo(agent: FakeAgent, version = '7.7.7') {
  const req = await agent.next('rpc.request', (r) => r.method === 'agent.info');
  agent.send({ type: 'rpc.response', id: req.id, ok: true, result: { agent_version: version, boot_id: 'b', uptime_s: 1 } });
}

describe.each(dbKinds)('registered operation kinds (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, {}, { operationKinds: testKinds });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('runs a kind on the server with the rpc, log and progress helpers', async () => {
    const b = await registerBoard(server, 'probe-ok');
    const agent = await FakeAgent.online(server.url, b.token);
    const op = await server.ctx.operations.create({ kind: 'test_probe', boardId: b.id, params: { mode: 'ok' } });
    await answerInfo(agent);
    const done = await server.ctx.operations.waitForEnd(op.id, 10_000);
    expect(done).toMatchObject({ status: 'succeeded', result: { info: { agent_version: '7.7.7' } }, progress: { phase: 'probe' } });
    expect(await (await server.api(`/api/operations/${op.id}/log/`)).text()).toBe('agent 7.7.7\n');
    await agent.close();
  });

  it('fails with the code the run throws, and cancels through the abort signal', async () => {
    const b = await registerBoard(server, 'probe-fail');
    const agent = await FakeAgent.online(server.url, b.token);
    const failed = await server.ctx.operations.create({ kind: 'test_probe', boardId: b.id, params: { mode: 'fail' } });
    expect(await server.ctx.operations.waitForEnd(failed.id, 10_000)).toMatchObject({
      status: 'failed',
      error: { code: 'probe_failed', message: 'the probe failed on purpose' },
      result: { partial: true },
    });
    const waiting = await server.ctx.operations.create({ kind: 'test_probe', boardId: b.id, params: { mode: 'wait' } });
    // It holds the board: an execute queued behind it does not start.
    const inv = await createInvocation(server, 'behind-probe');
    const exec = await json(
      await server.api(`/api/invocations/${inv}/execute/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify({ board_id: b.id }),
      }),
    );
    for (let i = 0; i < 40 && (await server.ctx.operations.get(waiting.id))?.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await server.ctx.operations.get(exec.id))?.status).toBe('queued');
    const c = await server.api(`/api/operations/${waiting.id}/cancel/`, { method: 'POST' });
    expect(c.status).toBe(202);
    expect(await server.ctx.operations.waitForEnd(waiting.id, 10_000)).toMatchObject({ status: 'cancelled' });
    const start = await agent.next('op.start');
    expect(start.op_id).toBe(exec.id);
    await agent.report(agent.outcome(exec.id, 'succeeded'));
    await agent.close();
  });

  it('waits for a reboot: the board shows rebooting and its queue holds until it is back', async () => {
    const b = await registerBoard(server, 'probe-reboot');
    let agent = await FakeAgent.online(server.url, b.token, { boot_id: 'one' });
    const op = await server.ctx.operations.create({ kind: 'test_probe', boardId: b.id, params: { mode: 'reboot' } });
    for (let i = 0; i < 40 && (await json(await server.api(`/api/boards/${b.id}/`))).status !== 'rebooting'; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await json(await server.api(`/api/boards/${b.id}/`))).status).toBe('rebooting');
    await agent.close(4004);
    agent = await FakeAgent.online(server.url, b.token, { boot_id: 'two' });
    expect(await server.ctx.operations.waitForEnd(op.id, 10_000)).toMatchObject({ status: 'succeeded', result: { bootId: 'two' } });
    expect((await json(await server.api(`/api/boards/${b.id}/`))).status).toBe('online');
    await agent.close();
  });
});

describe.each(dbKinds)('registered kinds across a restart (%s database)', (kind) => {
  it('fails runs of kinds that cannot resume and queues the others again', async () => {
    const first = await startTestServer(kind, {}, { keep: true, operationKinds: testKinds });
    let second: TestServer | undefined;
    try {
      const b = await registerBoard(first, 'restart-kinds');
      const agent = await FakeAgent.online(first.url, b.token);
      const probe = await first.ctx.operations.create({ kind: 'test_probe', boardId: b.id, params: { mode: 'wait' } });
      for (let i = 0; i < 40 && (await first.ctx.operations.get(probe.id))?.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 25));
      const requeue = await first.ctx.operations.create({ kind: 'test_requeue', boardId: b.id, params: { hang: true } });
      await first.stop();
      await agent.closed;
      (globalThis as { released?: boolean }).released = true;
      second = await startTestServer(kind, { MM_DATA_DIR: first.dataDir }, { operationKinds: testKinds, ...(first.scratchDatabase ? { scratchDatabase: first.scratchDatabase } : {}) });
      expect(await second.ctx.operations.get(probe.id)).toMatchObject({ status: 'failed', error: { code: 'server_restarted' } });
      expect((await second.ctx.operations.get(requeue.id))?.status).toBe('queued');
      const back = await FakeAgent.online(second.url, b.token);
      expect(await second.ctx.operations.waitForEnd(requeue.id, 10_000)).toMatchObject({ status: 'succeeded', result: { ran: true } });
      await back.close();
    } finally {
      await second?.stop();
      await fs.rm(first.dataDir, { recursive: true, force: true });
    }
  });
});
