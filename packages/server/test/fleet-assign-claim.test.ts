/**
 * The fleet scheduler's assignment, when the assigning replica holds the board's link, claims
 * the operation in the same transaction (operations/store.ts `assignToBoard`, `claimAs`):
 * assigned and started at the same database instant, its `assigned` event before `running`,
 * op.start sent, and the board's queue still one operation at a time behind it.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

describe.skipIf(skipWithoutRealDatabase('the assignment that claims (reads the rows of a real PostgreSQL)'))('assignment on the replica holding the link', () => {
  let server: TestServer;
  let sql: postgres.Sql;
  beforeAll(async () => {
    server = await startTestServer('postgres');
    sql = postgres(server.scratchDatabase!.url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql?.end();
    await server?.stop();
  });

  const call = (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    server.api(p, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it('claims the selector work it assigns: one instant, assigned then running, op.start; the next waits for the end', async () => {
    const b = await registerBoard(server, 'claimed-here');
    expect((await call('PATCH', `/api/boards/${b.id}/`, { labels: { lab: 'claim' } })).status).toBe(200);
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'claim');
    const post = async () => {
      const res = await call('POST', `/api/invocations/${inv}/execute/`, { board_selector: { lab: 'claim' } }, { prefer: 'respond-async' });
      expect(res.status).toBe(202);
      return (await json(res)) as { id: number };
    };
    const first = await post();
    const start = await agent.next('op.start');
    expect(start.op_id).toBe(first.id);
    const second = await post();

    const [row] = await sql`select board_id, status, assigned_at, started_at, runner_replica from operations where id = ${first.id}`;
    expect(row).toMatchObject({ board_id: b.id, status: 'running', runner_replica: null });
    // now() of one transaction: the assignment and the claim were one.
    expect(row!['started_at']).toEqual(row!['assigned_at']);
    const events = await sql`select type, data from operation_events where operation_id = ${first.id} order by seq`;
    expect(events.map((e) => (e['type'] === 'status' ? `status:${(e['data'] as { status: string }).status}` : e['type']))).toEqual([
      'status:queued',
      'assigned',
      'status:running',
    ]);
    // The board is busy: the second waits, unassigned, until the first ends.
    expect((await json(await server.api(`/api/operations/${second.id}/`))).status).toBe('queued');
    expect(agent.received.filter((m) => m.type === 'op.start')).toHaveLength(1);

    await agent.report(agent.outcome(first.id, 'succeeded'));
    const next = await agent.next('op.start');
    expect(next.op_id).toBe(second.id);
    await agent.report(agent.outcome(second.id, 'succeeded'));
    expect((await json(await server.api(`/api/operations/${first.id}/`))).status).toBe('succeeded');
    await agent.close();
  });
});
