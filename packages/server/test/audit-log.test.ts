/**
 * The audit log as people read it: one entry per resumable upload (when it attaches, with
 * the invocation, kind, file name and sha256), one entry per burst of identical script
 * commands (a servo drag) with its `count`, names beside ids, paging with `total`, and the
 * list of actions for the filter.
 */
import { createHash, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../src/db/schema.ts';
import { COALESCE_WINDOW_MS } from '../src/auth/audit.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from './support/accounts.ts';
import { FakeAgent } from './support/fake-agent.ts';

interface AuditEvent {
  id: number;
  user: string | null;
  user_id: string | null;
  user_name: string | null;
  action: string;
  target: string | null;
  target_name: string | null;
  count: number;
  at: string;
  last_at: string;
  detail: Record<string, unknown> | null;
}

const TUS = { 'tus-resumable': '1.0.0' };

describe.each(dbKinds)('the audit log as people read it (%s database)', (kind) => {
  let server: TestServer;
  let operator: TestUser;
  let other: TestUser;
  let boss: TestUser;
  let agent: FakeAgent;
  let scriptId: string;
  let boardId: string;

  const audit = async (query: string): Promise<{ events: AuditEvent[]; total: number }> => {
    const res = await call(server, 'GET', `/api/audit/${query}`, bearer(boss.token));
    expect(res.status).toBe(200);
    return json(res);
  };

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN_TOKEN });
    operator = await makeUser(server, 'olga', 'operator');
    other = await makeUser(server, 'oscar', 'operator');
    boss = await makeUser(server, 'bea', 'admin');
    const board = await json(await call(server, 'POST', '/api/boards/', bearer(boss.token), { name: 'bench-board' }));
    boardId = board.id;
    const script = await json(
      await call(server, 'POST', '/api/device-scripts/', bearer(boss.token), {
        name: 'rover',
        device_type: 'gpio',
        description: '',
        script_filename: 'rover.mjs',
        remote_dir: '/opt/rover',
        port: 4400,
        version: '1.0.0',
      }),
    );
    scriptId = script.id;
    agent = await FakeAgent.online(server.url, board.token);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  /** One proxied script command, answered by the (fake) board with 204. */
  async function drive(user: TestUser, rest: string): Promise<void> {
    const answer = call(server, 'POST', `/api/device-scripts/${scriptId}/proxy/${rest}?board_id=${boardId}`, bearer(user.token));
    const req = await agent.next('http.request');
    agent.send({ type: 'http.response', req_id: req.req_id, status: 204, headers: [], has_body: false });
    expect((await answer).status).toBe(204);
  }

  it('records a burst of identical script commands as one entry with a count', async () => {
    for (let i = 0; i < 6; i++) await drive(operator, 'servo');
    await drive(operator, 'motor/stop');
    await drive(other, 'motor/stop');
    const { events } = await audit('?action=device_script.proxy');
    const servo = events.filter((e) => e.target?.endsWith('/proxy/servo'));
    expect(servo).toHaveLength(1);
    expect(servo[0]).toMatchObject({ user: 'olga', count: 6, target_name: 'rover' });
    expect(Date.parse(servo[0]!.last_at)).toBeGreaterThanOrEqual(Date.parse(servo[0]!.at));
    // Another target, or another user, is another entry.
    const stops = events.filter((e) => e.target?.endsWith('/proxy/motor/stop'));
    expect(stops.map((e) => [e.user, e.count]).sort()).toEqual([
      ['olga', 1],
      ['oscar', 1],
    ]);
  });

  it('starts a new entry when the same command comes after a pause longer than the window', async () => {
    await drive(operator, 'motor/forward');
    const [first] = (await audit('?action=device_script.proxy&limit=1')).events;
    expect(first).toMatchObject({ user: 'olga', count: 1 });
    // As if that command had been sent a while ago (no sleeping through the window).
    const long = new Date(Date.now() - COALESCE_WINDOW_MS - 1_000);
    await server.ctx.database.db.update(auditEvents).set({ at: long }).where(eq(auditEvents.id, first!.id));
    await drive(operator, 'motor/forward');
    const forward = (await audit('?action=device_script.proxy')).events.filter((e) => e.target?.endsWith('/proxy/motor/forward'));
    expect(forward.map((e) => e.count)).toEqual([1, 1]);
  });

  it('records a resumable upload once, when it attaches, with invocation, kind, file name and sha256', async () => {
    const inv = await json(await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), { name: 'night run', description: '' }));
    const data = randomBytes(300_000);
    const digest = createHash('sha256').update(data).digest('hex');
    const metadata = { invocation_id: String(inv.id), file_type: 'weights', filename: 'w.bin', sha256: digest };
    const created = await server.api('/api/uploads/', {
      method: 'POST',
      headers: {
        ...TUS,
        ...bearer(operator.token),
        'upload-length': String(data.length),
        'upload-metadata': Object.entries(metadata).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(','),
      },
    });
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    // Three PATCH requests (chunks), as a client with a small chunk size sends them.
    for (let offset = 0; offset < data.length; offset += 100_000) {
      const res = await server.api(location, {
        method: 'PATCH',
        headers: { ...TUS, ...bearer(operator.token), 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
        body: data.subarray(offset, offset + 100_000),
      });
      expect(res.status).toBe(204);
    }
    const { events } = await audit('?user=olga&limit=1000');
    const uploads = events.filter((e) => e.action.startsWith('upload'));
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatchObject({
      action: 'upload.attach',
      target: `invocation ${inv.id}`,
      target_name: 'night run',
      detail: expect.objectContaining({ invocation_id: inv.id, kind: 'weights', filename: 'w.bin', sha256: digest, size: data.length }),
    });
  });

  it('records a termination the same way whether it came as DELETE or as POST with X-HTTP-Method-Override', async () => {
    const inv = await json(await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), { name: 'ended', description: '' }));
    const metadata = { invocation_id: String(inv.id), file_type: 'weights', filename: 'w.bin' };
    const upload = async () => {
      const created = await server.api('/api/uploads/', {
        method: 'POST',
        headers: { ...TUS, ...bearer(operator.token), 'upload-length': '10', 'upload-metadata': Object.entries(metadata).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',') },
      });
      expect(created.status).toBe(201);
      return new URL(created.headers.get('location')!, 'http://x').pathname;
    };
    const [deleted, overridden] = [await upload(), await upload()];
    expect((await server.api(deleted, { method: 'DELETE', headers: { ...TUS, ...bearer(operator.token) } })).status).toBe(204);
    expect((await server.api(overridden, { method: 'POST', headers: { ...TUS, ...bearer(operator.token), 'x-http-method-override': 'DELETE' } })).status).toBe(204);
    const { events } = await audit('?action=upload.terminate&limit=1000');
    for (const target of [deleted, overridden]) expect(events.find((e) => e.target === target), target).toMatchObject({ user: 'olga', action: 'upload.terminate' });
  });

  it('names users and targets beside their ids: boards, invocations, device scripts, users (deleted ones by their recorded name)', async () => {
    const inv = await json(await call(server, 'POST', '/api/invocations/create/', bearer(operator.token), { name: 'named one', description: '' }));
    const temp = await makeUser(server, 'tmp-user', 'viewer');
    expect((await call(server, 'DELETE', `/api/users/${temp.id}/`, bearer(boss.token))).status).toBe(204);
    const { events } = await audit('?limit=1000');
    const find = (action: string, target: string) => events.find((e) => e.action === action && e.target === target);
    expect(find('invocation.create', `invocation ${inv.id}`)).toMatchObject({ user: 'olga', user_name: 'olga', target_name: 'named one' });
    expect(find('board.create', `board ${boardId}`)).toMatchObject({ target_name: 'bench-board', user_name: 'bea' });
    expect(find('device_script.create', `device_script ${scriptId}`)).toMatchObject({ target_name: 'rover' });
    expect(find('user.create', `user ${operator.id}`)).toMatchObject({ target_name: 'olga', user_name: 'MM_API_TOKEN' });
    expect(find('user.delete', `user ${temp.id}`)).toMatchObject({ target_name: 'tmp-user' });
    // Things with no name (a sign-in's typed name, an operation) have none.
    expect(events.filter((e) => e.action === 'auth.login').every((e) => e.target_name === e.user_name)).toBe(true);
  });

  it('pages with total counting every match, and lists the actions that occur for the filter', async () => {
    const all = await audit('?limit=1000');
    expect(all.total).toBe(all.events.length);
    const page = await audit('?limit=3&offset=2');
    expect(page.total).toBe(all.total);
    expect(page.events.map((e) => e.id)).toEqual(all.events.slice(2, 5).map((e) => e.id));
    const logins = await audit('?action=auth.login&limit=1&offset=1');
    expect(logins.total).toBe(all.events.filter((e) => e.action === 'auth.login').length);
    expect(logins.events).toHaveLength(1);

    const res = await call(server, 'GET', '/api/audit/actions/', bearer(boss.token));
    expect(res.status).toBe(200);
    const { actions } = await json(res);
    expect(actions).toEqual([...new Set(all.events.map((e) => e.action))].sort());
    expect(actions).toEqual(expect.arrayContaining(['device_script.proxy', 'upload.attach', 'user.create', 'auth.login']));
    expect((await call(server, 'GET', '/api/audit/actions/', bearer(operator.token))).status).toBe(403);
  });
});
