/**
 * A lying or stalling agent: op.result is taken only for the board's running transfer or
 * execute; the output is always pulled (at most its declared size) and recorded with the
 * received size, a base name and a sniffed type; content pulls are scoped to the running
 * operation's files; a stalled output pull times out and frees the link.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeMp4, uploadFile } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent, sha256Of } from './support/fake-agent.ts';

describe.each(dbKinds)('a lying agent (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_OUTPUT_PULL_IDLE_S: '0.5' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (path: string, body?: unknown) =>
    server.api(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const getOp = async (id: number) => json(await server.api(`/api/operations/${id}/`));

  async function runningExecute(name: string) {
    const b = await registerBoard(server, name);
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, name);
    const op = await json(await post(`/api/invocations/${inv}/execute/`, { board_id: b.id }));
    await agent.next('op.start', (m) => m.op_id === op.id);
    return { b, agent, inv, op };
  }

  it('records the received size, a base name and the sniffed type, not what the agent says', async () => {
    const { agent, inv, op } = await runningExecute('liar-fields');
    const video = fakeMp4(20_000);
    const output = { ...agent.produce('../../etc/evil.mp4', video), size: video.length + 5000, content_type: 'text/html' };
    await agent.report(agent.outcome(op.id, 'succeeded', { output }));
    const done = await getOp(op.id);
    expect(done.status).toBe('succeeded');
    expect(done.result.output_video).toMatchObject({ filename: 'evil.mp4', size: video.length, content_type: 'video/mp4' });
    const res = await server.api(`/api/invocations/${inv}/video/`);
    expect(res.status).toBe(200);
    expect(sha256Of(Buffer.from(await res.arrayBuffer()))).toBe(output.sha256);
    await agent.close();
  });

  it('pulls at most the declared size', async () => {
    const { agent, op } = await runningExecute('liar-short');
    const video = fakeMp4(200_000);
    const output = { ...agent.produce('o.mp4', video), size: 1000 };
    await agent.report(agent.outcome(op.id, 'succeeded', { output }));
    expect(await getOp(op.id)).toMatchObject({ status: 'failed', error: { code: 'output_unavailable' } });
    await agent.close();
  });

  it("does not take a hash the server already holds (another invocation's file) as the output", async () => {
    const other = await createInvocation(server, 'victim');
    const secret = fakeMp4(30_000);
    await uploadFile(server, other, 'input_video', 'secret.mp4', secret);
    const { agent, inv, op } = await runningExecute('liar-hash');
    // The agent claims the victim's content as its output without having it.
    const output = { filename: 'mine.mp4', sha256: sha256Of(secret), size: secret.length, content_type: 'video/mp4' };
    await agent.report(agent.outcome(op.id, 'succeeded', { output }));
    expect(await getOp(op.id)).toMatchObject({ status: 'failed', error: { code: 'output_unavailable' } });
    expect((await json(await server.api(`/api/invocations/${inv}/`))).files.output_video).toBeNull();
    await agent.close();
  });

  it("refuses outcomes of the board's queued and server-side operations", async () => {
    const { b, agent, inv, op } = await runningExecute('liar-queued');
    const queued = await json(await post(`/api/invocations/${inv}/execute/`, { board_id: b.id }));
    expect(queued.status).toBe('queued');
    agent.send({ type: 'op.result', outcome: agent.outcome(queued.id, 'succeeded') });
    await agent.next('error', (e) => e.code === 'unknown_operation');
    expect((await getOp(queued.id)).status).toBe('queued');
    await agent.report(agent.outcome(op.id, 'failed'));
    await agent.next('op.start', (m) => m.op_id === queued.id);
    await agent.report(agent.outcome(queued.id, 'failed'));
    // A server-side operation (pac_query) runs with an rpc to the agent: its op.result is refused.
    const pac = await json(await post('/api/pacs/query/', { board_id: b.id }));
    await agent.next('rpc.request');
    agent.send({ type: 'op.result', outcome: agent.outcome(pac.id, 'succeeded') });
    await agent.next('error', (e) => e.code === 'unknown_operation' && e.message.includes(String(pac.id)));
    expect((await getOp(pac.id)).status).toBe('running');
    await post(`/api/operations/${pac.id}/cancel/`);
    await agent.close();
  });

  it("serves content only to the operation whose files it is", async () => {
    const victim = await createInvocation(server, 'scoped-victim');
    const secret = fakeMp4(10_000);
    await uploadFile(server, victim, 'input_video', 'secret.mp4', secret);
    const { agent, inv, op } = await runningExecute('scoped');
    await expect(agent.pullContent(sha256Of(secret))).rejects.toThrow(/not_found|holds no/);
    await agent.report(agent.outcome(op.id, 'failed'));
    // The operation's own files are served.
    const mine = fakeMp4(5000);
    await uploadFile(server, inv, 'input_video', 'in.mp4', mine);
    const b2 = await json(await server.api(`/api/operations/${op.id}/`));
    const next = await json(await post(`/api/invocations/${inv}/transfer/`, { board_id: b2.board_id }));
    await agent.next('op.start', (m) => m.op_id === next.id);
    expect((await agent.pullContent(sha256Of(mine))).data.equals(mine)).toBe(true);
    await agent.report(agent.outcome(next.id, 'succeeded'));
    await agent.close();
  });

  it('times out a stalled output pull and frees the link for the next operation', async () => {
    const { b, agent, inv, op } = await runningExecute('stalled');
    const output = agent.produce('o.mp4', fakeMp4(50_000));
    agent.holdPulls = true;
    agent.send({ type: 'op.result', outcome: agent.outcome(op.id, 'succeeded', { output }) });
    await agent.next('stream.pull');
    await agent.next('op.result.ack', (a) => a.op_id === op.id, 15_000);
    const failed = await getOp(op.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'output_unavailable' } });
    expect(failed.error.message).toMatch(/no output bytes for 0.5 s/);
    agent.holdPulls = false;
    const next = await json(await post(`/api/invocations/${inv}/execute/`, { board_id: b.id }));
    await agent.next('op.start', (m) => m.op_id === next.id);
    agent.send({ type: 'op.log', op_id: next.id, stream: 'stdout', data: 'alive\n' });
    await agent.report(agent.outcome(next.id, 'failed'));
    expect(await (await server.api(`/api/operations/${next.id}/log/`)).text()).toContain('alive');
    await agent.close();
  });
});
