/**
 * The operation event stream as an SSE client sees it (issue 27): it starts with `retry:`,
 * every event has an id, and resuming past the `end` of a finished operation answers 204,
 * which makes a standard EventSource (the `eventsource` package) stop instead of holding an
 * endless stream of heartbeats.
 */
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { takeSseBlocks } from '../../../test/support/sse.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, patterned, uploadFile } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

describe.each(dbKinds)('operation events over SSE (%s database)', (kind) => {
  let server: TestServer;
  let opId: number;
  let endId: number;
  beforeAll(async () => {
    server = await startTestServer(kind);
    const b = await registerBoard(server, 'sse');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'sse');
    await uploadFile(server, inv, 'weights', 'w.bin', patterned(1000));
    const op = await json(
      await server.api(`/api/invocations/${inv}/transfer/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify({ board_id: b.id }),
      }),
    );
    opId = op.id;
    await agent.next('op.start');
    agent.send({ type: 'op.progress', op_id: opId, progress: { phase: 'transfer', bytes_done: 500, bytes_total: 1000 } });
    await agent.report(agent.outcome(opId, 'succeeded'));
    await agent.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const events = (headers: Record<string, string> = {}) => server.api(`/api/operations/${opId}/events/`, { headers });

  it('starts with retry:, and every event of a finished operation has an id, up to end', async () => {
    const res = await events();
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^retry: \d+\n\n/);
    const { blocks } = takeSseBlocks(text);
    const withData = blocks.filter((b) => b.data !== undefined);
    expect(withData.length).toBeGreaterThan(2);
    for (const b of withData) expect(b.id, `${b.event} has an id`).toMatch(/^\d+$/);
    const end = withData.at(-1)!;
    expect(end.event).toBe('end');
    endId = Number(end.id);
  });

  it('answers 204 to a resume at its end or past it, and the rest to an earlier one', async () => {
    expect((await events({ 'last-event-id': String(endId) })).status).toBe(204);
    expect((await events({ 'last-event-id': String(endId + 7) })).status).toBe(204);
    const before = await events({ 'last-event-id': String(endId - 1) });
    expect(before.status).toBe(200);
    const { blocks } = takeSseBlocks(await before.text());
    expect(blocks.filter((b) => b.data !== undefined).map((b) => b.event)).toEqual(['end']);
  });

  it('an EventSource stops after end instead of reconnecting into endless heartbeats', async () => {
    const requests: Array<{ lastEventId: string | null; status: number }> = [];
    const es = new EventSource(`${server.url}/api/operations/${opId}/events/`, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        requests.push({ lastEventId: new Headers(init?.headers).get('last-event-id'), status: res.status });
        return res;
      },
    });
    const seen: string[] = [];
    es.addEventListener('end', (e) => seen.push(`end ${e.lastEventId}`));
    try {
      // After end the server closes; EventSource reconnects once (after retry:) with the end's id, gets 204 and stops.
      await eventually(() => expect(es.readyState).toBe(EventSource.CLOSED), 20_000);
      expect(seen).toEqual([`end ${endId}`]);
      expect(requests).toEqual([
        { lastEventId: null, status: 200 },
        { lastEventId: String(endId), status: 204 },
      ]);
      expect(server.ctx.operationStreams.clientCount(opId)).toBe(0);
    } finally {
      es.close();
    }
  });
});
