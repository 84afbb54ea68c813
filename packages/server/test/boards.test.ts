import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@mm/protocol';
import { boards } from '../src/db/schema.ts';
import { sha256Hex } from '../src/http/auth.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent, tryConnect } from './support/fake-agent.ts';

const getBoard = async (server: TestServer, id: string) => json(await server.api(`/api/boards/${id}/`));

describe.each(dbKinds)('boards (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('registers a board with a token shown once and stored only as a hash', async () => {
    const b = await registerBoard(server, 'zcu104-a');
    expect(b).toMatchObject({
      name: 'zcu104-a',
      status: 'offline',
      busy: false,
      last_seen_at: null,
      connected_at: null,
      agent_version: null,
      hostname: null,
      platform: null,
      boot_id: null,
      active_pac: null,
      // Registered by hand: not enrolled, held by no one, no power controller.
      enrolled_at: null,
      enrolled_from: null,
      machine_id: null,
      reservation: null,
      power: null,
    });
    expect(b.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const [row] = await server.ctx.database.db.select().from(boards).where(eq(boards.id, b.id));
    expect(row!.tokenHash).toBe(sha256Hex(b.token));
    expect(JSON.stringify(row)).not.toContain(b.token);
    const again = await getBoard(server, b.id);
    expect(again).not.toHaveProperty('token');
    expect(Object.keys(again).sort()).toEqual(
      ['id', 'name', 'status', 'busy', 'last_seen_at', 'connected_at', 'agent_version', 'hostname', 'platform', 'boot_id', 'active_pac', 'labels', 'telemetry', 'facts', 'maintenance', 'health', 'health_reason', 'health_checked_at', 'current_operation_id', 'queued', 'reenroll_request',
        // When and how it joined (enrolment's machine id and address), who holds it, its power controller.
        'created_at', 'enrolled_at', 'enrolled_from', 'machine_id', 'reservation', 'power',
        // The device scripts it runs, with their state.
        'scripts'].sort(),
    );
  });

  it('lists boards with a total and pages them', async () => {
    await registerBoard(server, 'list-1');
    const all = await json(await server.api('/api/boards/'));
    expect(all.total).toBeGreaterThanOrEqual(2);
    expect(all.boards).toHaveLength(all.total);
    const page = await json(await server.api('/api/boards/?limit=1&offset=1'));
    expect(page.boards).toHaveLength(1);
    expect(page.boards[0].id).toBe(all.boards[1].id);
    expect(page.total).toBe(all.total);
  });

  it('validates input and answers unknown boards with 404', async () => {
    const empty = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"  "}' });
    expect(empty.status).toBe(400);
    expect((await json(empty)).code).toBe('validation_failed');
    const bad = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(bad.status).toBe(400);
    for (const path of ['/api/boards/not-a-uuid/', '/api/boards/00000000-0000-4000-8000-000000000000/']) {
      const res = await server.api(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect((await json(res)).code).toBe('board_not_found');
    }
    expect((await server.api('/api/boards/00000000-0000-4000-8000-000000000000/', { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses the agent link without a valid token: 401 problem, before any upgrade', async () => {
    for (const token of [undefined, 'wrong-token']) {
      const r = await tryConnect(server.url, token);
      expect('refused' in r).toBe(true);
      if (!('refused' in r)) return;
      expect(r.refused.status).toBe(401);
      expect(r.refused.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(r.refused.body)).toMatchObject({ status: 401, code: 'unauthorized' });
    }
    // A plain GET (no upgrade) with a valid token: not a WebSocket.
    const b = await registerBoard(server, 'plain-get');
    const plain = await server.api('/api/agent/connect/', { headers: { authorization: `Bearer ${b.token}` } });
    expect(plain.status).toBe(426);
    const none = await server.api('/api/agent/connect/');
    expect(none.status).toBe(401);
  });

  it('brings a board online on hello, with what the agent said', async () => {
    const b = await registerBoard(server, 'online-1');
    const before = (await json(await server.api('/api/health/'))).boards_online as number;
    const agent = await FakeAgent.connect(server.url, b.token);
    const welcome = await agent.hello({ boot_id: 'boot-aaa', agent_version: '1.2.3', active_pac: 'kv260-pac' });
    expect(welcome).toMatchObject({ board_id: b.id, board_name: 'online-1', protocol_version: PROTOCOL_VERSION });
    const board = await getBoard(server, b.id);
    expect(board).toMatchObject({
      status: 'online',
      busy: false,
      agent_version: '1.2.3',
      hostname: 'fake-board',
      platform: 'linux',
      boot_id: 'boot-aaa',
      active_pac: 'kv260-pac',
    });
    expect(Date.parse(board.connected_at)).not.toBeNaN();
    expect(board.last_seen_at).toMatch(/Z$/);
    expect((await json(await server.api('/api/health/'))).boards_online).toBe(before + 1);
    await agent.close();
    await eventually(async () => expect((await getBoard(server, b.id)).status).toBe('offline'));
    expect((await json(await server.api('/api/health/'))).boards_online).toBe(before);
    expect((await getBoard(server, b.id)).last_seen_at).not.toBeNull();
  });

  it('answers bad messages with an error message and keeps the link', async () => {
    const b = await registerBoard(server, 'bad-messages');
    const agent = await FakeAgent.connect(server.url, b.token);
    agent.sendRaw('not json');
    expect(await agent.next('error')).toMatchObject({ code: 'malformed_message' });
    agent.sendRaw(JSON.stringify({ type: 'no.such.thing' }));
    expect(await agent.next('error')).toMatchObject({ code: 'unknown_message', ref_type: 'no.such.thing' });
    agent.send({ type: 'op.log', op_id: 1, stream: 'stdout', data: 'x' });
    expect(await agent.next('error')).toMatchObject({ code: 'hello_required' });
    agent.sendRaw(Buffer.from([9, 0, 0, 0, 1, 2, 3]), true);
    expect(await agent.next('error')).toMatchObject({ code: 'malformed_frame' });
    agent.send({ type: 'hello', protocol_version: PROTOCOL_VERSION });
    expect(await agent.next('error')).toMatchObject({ code: 'malformed_message', ref_type: 'hello' });
    await agent.hello();
    agent.send({ type: 'stream.pull', stream_id: 5, source: { kind: 'content', sha256: 'a'.repeat(64) }, offset: 0, credit: 1024 });
    expect(await agent.next('stream.abort')).toMatchObject({ stream_id: 5, error: { code: 'not_found' } });
    agent.send({ type: 'op.progress', op_id: 999999, progress: { phase: 'transfer', bytes_done: 1, bytes_total: 2 } });
    expect(await agent.next('error')).toMatchObject({ code: 'unknown_operation' });
    expect((await getBoard(server, b.id)).status).toBe('online');
    await agent.close();
  });

  it('closes a link that speaks another protocol version with 4001', async () => {
    const b = await registerBoard(server, 'old-agent');
    const agent = await FakeAgent.connect(server.url, b.token);
    agent.send({
      type: 'hello',
      protocol_version: PROTOCOL_VERSION + 1,
      agent_version: '9',
      hostname: 'h',
      platform: 'linux',
      arch: 'x64',
      boot_id: 'b',
      active_pac: null,
      cached: [],
      running: [],
      finished: [],
    });
    expect(await agent.closed).toBe(4001);
    expect(agent.received.find((m) => m.type === 'error')).toMatchObject({ code: 'protocol_mismatch' });
    expect((await getBoard(server, b.id)).status).toBe('offline');
  });

  it('keeps presence across a fast reconnect: the newer link replaces the old (4002)', async () => {
    const b = await registerBoard(server, 'flappy');
    const first = await FakeAgent.online(server.url, b.token, { boot_id: 'b1' });
    // The new connection arrives before the old one's close is processed.
    const second = await FakeAgent.online(server.url, b.token, { boot_id: 'b1' });
    expect(await first.closed).toBe(4002);
    await new Promise((r) => setTimeout(r, 100));
    expect((await getBoard(server, b.id)).status).toBe('online');
    // An old link that dies late (terminated, no close handshake) changes nothing either.
    const third = await FakeAgent.online(server.url, b.token, { boot_id: 'b1' });
    expect(await second.closed).toBe(4002);
    second.terminate();
    await new Promise((r) => setTimeout(r, 100));
    expect((await getBoard(server, b.id)).status).toBe('online');
    expect(server.ctx.agents.onlineCount()).toBeGreaterThanOrEqual(1);
    await third.close();
    await eventually(async () => expect((await getBoard(server, b.id)).status).toBe('offline'));
  });

  it('deletes a board: 204, its agent is disconnected (4003) and its token stops working', async () => {
    const b = await registerBoard(server, 'doomed');
    const agent = await FakeAgent.online(server.url, b.token);
    const res = await server.api(`/api/boards/${b.id}/`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await agent.closed).toBe(4003);
    expect((await server.api(`/api/boards/${b.id}/`)).status).toBe(404);
    const r = await tryConnect(server.url, b.token);
    expect('refused' in r && r.refused.status).toBe(401);
  });

  it('calls agent RPCs with schema checks and maps their failures', async () => {
    const b = await registerBoard(server, 'rpc');
    const agents = server.ctx.agents;
    await expect(agents.call(b.id, 'agent.info', {})).rejects.toMatchObject({ status: 503, code: 'board_offline' });
    const agent = await FakeAgent.online(server.url, b.token);

    const ok = agents.call(b.id, 'agent.info', {});
    const req1 = await agent.next('rpc.request');
    expect(req1).toMatchObject({ method: 'agent.info', params: {} });
    agent.send({ type: 'rpc.response', id: req1.id, ok: true, result: { agent_version: '1', boot_id: 'boot-1', uptime_s: 5 } });
    expect(await ok).toEqual({ agent_version: '1', boot_id: 'boot-1', uptime_s: 5 });

    const failing = agents.call(b.id, 'pac.activate', { pac: 'nope' });
    const req2 = await agent.next('rpc.request');
    agent.send({ type: 'rpc.response', id: req2.id, ok: false, error: { code: 'pac_not_found', message: 'no PAC nope' } });
    await expect(failing).rejects.toMatchObject({ status: 502, code: 'pac_not_found' });

    const malformed = agents.call(b.id, 'agent.info', {});
    const req3 = await agent.next('rpc.request');
    agent.send({ type: 'rpc.response', id: req3.id, ok: true, result: { nonsense: true } });
    await expect(malformed).rejects.toMatchObject({ status: 502, code: 'bad_agent_response' });

    await expect(agents.call(b.id, 'agent.info', {}, { timeoutMs: 200 })).rejects.toMatchObject({ status: 504, code: 'board_timeout' });

    const cut = agents.call(b.id, 'agent.info', {}).catch((e: unknown) => e);
    await agent.next('rpc.request');
    await agent.close();
    expect(await cut).toMatchObject({ status: 503, code: 'board_offline' });
  });

  it('serves a registered upload to its board only, from any offset', async () => {
    const b = await registerBoard(server, 'uploads');
    const other = await registerBoard(server, 'not-uploads');
    const agent = await FakeAgent.online(server.url, b.token);
    const intruder = await FakeAgent.online(server.url, other.token);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-upload-'));
    const file = path.join(dir, 'pac.tar.gz');
    const data = Buffer.alloc(1_500_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) % 251;
    await fs.writeFile(file, data);
    const handle = server.ctx.uploads.register(file, { boardId: b.id });
    try {
      const whole = await agent.pull({ kind: 'upload', upload_id: handle.id });
      expect(whole.size).toBe(data.length);
      expect(whole.data.equals(data)).toBe(true);
      const tail = await agent.pull({ kind: 'upload', upload_id: handle.id }, 1_000_000);
      expect(tail.data.equals(data.subarray(1_000_000))).toBe(true);
      await expect(intruder.pull({ kind: 'upload', upload_id: handle.id })).rejects.toMatchObject({ info: { code: 'not_found' } });
      await expect(agent.pull({ kind: 'upload', upload_id: handle.id }, data.length + 1)).rejects.toMatchObject({ info: { code: 'bad_offset' } });
    } finally {
      handle.release();
    }
    await expect(agent.pull({ kind: 'upload', upload_id: handle.id })).rejects.toMatchObject({ info: { code: 'not_found' } });
    await agent.close();
    await intruder.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('shows a board as rebooting until it says hello with another boot id', async () => {
    const b = await registerBoard(server, 'rebooter');
    const first = await FakeAgent.online(server.url, b.token, { boot_id: 'before' });
    const { back } = server.ctx.agents.expectReboot(b.id);
    expect((await getBoard(server, b.id)).status).toBe('rebooting');
    await first.close(4004);
    expect((await getBoard(server, b.id)).status).toBe('rebooting');
    // Reconnecting with the same boot id is not "back" yet.
    const same = await FakeAgent.online(server.url, b.token, { boot_id: 'before' });
    expect((await getBoard(server, b.id)).status).toBe('rebooting');
    await same.close();
    const after = await FakeAgent.online(server.url, b.token, { boot_id: 'after' });
    await expect(back).resolves.toEqual({ bootId: 'after' });
    expect(await getBoard(server, b.id)).toMatchObject({ status: 'online', boot_id: 'after' });
    await after.close();

    const { back: never } = server.ctx.agents.expectReboot(b.id, { timeoutMs: 200 });
    await expect(never).rejects.toMatchObject({ status: 504, code: 'reboot_timeout' });
    expect((await getBoard(server, b.id)).status).toBe('offline');
  });
});

describe('agent link heartbeats', () => {
  // Its own server: a short timeout would also drop the other tests' links on a busy machine.
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_HEARTBEAT_INTERVAL_MS: '100', MM_HEARTBEAT_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('drops a silent link after the heartbeat timeout', async () => {
    const b = await registerBoard(server, 'silent');
    const agent = await FakeAgent.connect(server.url, b.token, { autoPong: false });
    await agent.hello();
    expect((await getBoard(server, b.id)).status).toBe('online');
    // Pings go unanswered and the agent says nothing: the server terminates the link (no close frame).
    expect(await agent.closed).toBe(1006);
    await eventually(async () => expect((await getBoard(server, b.id)).status).toBe('offline'));
  });

});
