/**
 * Bad input that used to reach the database: NUL characters (PostgreSQL text and jsonb
 * cannot hold them) and integers past their int4 columns get 400 and change nothing; a
 * runner printing NUL loses no event; a log past MM_LOG_MAX_BYTES keeps its head and tail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

const NUL = '\0';

describe.each(dbKinds)('input hardening (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_LOG_MAX_BYTES: '2048' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const send = (method: string, path: string, body?: unknown) =>
    server.api(path, {
      method,
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function expect400(res: Response) {
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('validation_failed');
  }

  it('refuses NUL in every string field and query with 400, storing nothing', async () => {
    const before = (await json(await server.api('/api/invocations/'))).total;
    await expect400(await send('POST', '/api/invocations/create/', { name: `a${NUL}b`, description: '' }));
    await expect400(await send('POST', '/api/invocations/create/', { name: 'ok', description: `x${NUL}` }));
    expect((await json(await server.api('/api/invocations/'))).total).toBe(before);
    await expect400(await server.api(`/api/invocations/?q=${encodeURIComponent(`a${NUL}`)}`));
    await expect400(await server.api(`/api/operations/?kind=${encodeURIComponent(`exe${NUL}cute`)}`));
    await expect400(await send('POST', '/api/boards/', { name: `board${NUL}` }));
    const script = { name: `cam${NUL}`, device_type: 'webcam', description: '', script_filename: 'w.py', remote_dir: '/opt/w', port: 8080, version: '1' };
    await expect400(await send('POST', '/api/device-scripts/', script));
    await expect400(await send('POST', '/api/device-scripts/', { ...script, name: 'cam', description: `d${NUL}` }));
  });

  it('refuses integers past their int4 columns with 400', async () => {
    await expect400(await server.api('/api/operations/?invocation_id=3000000000'));
    await expect400(await server.api('/api/operations/?offset=3000000000'));
    await expect400(await server.api('/api/invocations/?offset=99999999999'));
  });

  it('stores runner output with NUL (replaced) and the status and end events with it', async () => {
    const b = await registerBoard(server, 'nul-runner');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'nul-runner');
    const op = await json(await send('POST', `/api/invocations/${inv}/execute/`, { board_id: b.id }));
    const start = await agent.next('op.start');
    expect(start.op_id).toBe(op.id);
    agent.send({ type: 'op.log', op_id: op.id, stream: 'stdout', data: `before${NUL}after\n` });
    // The failure message carries NUL too: it lands in the row and in the status and end events.
    await agent.report(agent.outcome(op.id, 'failed', { error: { code: 'runner_failed', message: `bad${NUL}exit` } }));
    const ended = await json(await server.api(`/api/operations/${op.id}/`));
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'runner_failed', message: 'bad\uFFFDexit' } });
    const log = await (await server.api(`/api/operations/${op.id}/log/`)).text();
    expect(log).toContain('before\uFFFDafter\n');
    const events = await (await server.api(`/api/operations/${op.id}/events/`)).text();
    expect(events).toContain('event: end');
    await agent.close();
  });

  it('keeps the head and the tail of a log past MM_LOG_MAX_BYTES and says what was cut', async () => {
    const b = await registerBoard(server, 'chatty');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'chatty');
    const op = await json(await send('POST', `/api/invocations/${inv}/execute/`, { board_id: b.id }));
    await agent.next('op.start');
    const lines = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(40)}\n`);
    for (const line of lines) agent.send({ type: 'op.log', op_id: op.id, stream: 'stdout', data: line });
    await agent.report(agent.outcome(op.id, 'failed'));
    const log = await (await server.api(`/api/operations/${op.id}/log/`)).text();
    const total = lines.join('').length;
    const cut = log.match(/\[log cut: (\d+) bytes left out here/);
    expect(cut).not.toBeNull();
    expect(Number(cut![1])).toBe(total - 2048);
    expect(log.startsWith(lines.join('').slice(0, 1024))).toBe(true);
    expect(log.endsWith(lines.join('').slice(-1024))).toBe(true);
    expect(log.length).toBeLessThan(2048 + 200);
    await agent.close();
  });
});
