/**
 * Progress during a transfer: every report reaches the live SSE clients at once, from
 * memory, while the database stores it at most once a second (and always the last one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, patterned, uploadFile } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

interface SseEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** Reads SSE events as they come, until `until` says stop or the stream ends. */
async function readLive(res: Response, until: (events: SseEvent[]) => boolean): Promise<SseEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffered = '';
  try {
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      let at: number;
      while ((at = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        let id: string | undefined;
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (data.length) events.push({ id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

/**
 * The live-only progress reports: not stored, each carries the id of the last stored event
 * before it (so `Last-Event-ID` resumes after that one); a stored event's id is always new.
 */
function liveOnlyProgress(events: SseEvent[]): SseEvent[] {
  let lastId = 0;
  const out: SseEvent[] = [];
  for (const e of events) {
    const id = Number(e.id);
    if (e.event === 'progress' && id <= lastId) out.push(e);
    lastId = Math.max(lastId, id);
  }
  return out;
}

describe.each(dbKinds)('operation progress (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_SYNC_WAIT_S: '20' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('sends every report to live clients, stores at most one a second and always the last', async () => {
    const b = await registerBoard(server, 'progress');
    const agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'progress');
    await uploadFile(server, inv, 'weights', 'w.bin', patterned(1000));
    const res = await server.api(`/api/invocations/${inv}/transfer/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ board_id: b.id }),
    });
    const op = await json(res);
    await agent.next('op.start');

    const live = server.api(`/api/operations/${op.id}/events/`);
    const stream = await live;
    // Joined live once the stored events are replayed (the first status arrives with an id).
    const reports = 30;
    const reading = readLive(stream, (events) => liveOnlyProgress(events).length >= reports);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    for (let i = 1; i <= reports; i++) {
      agent.send({ type: 'op.progress', op_id: op.id, progress: { phase: 'transfer', bytes_done: i * 50, bytes_total: reports * 50 } });
      // Reports over about two seconds: stored every 250 ms that would be 8 or more.
      await new Promise((r) => setTimeout(r, 65));
    }
    const events = await reading;
    const elapsedS = (Date.now() - started) / 1000;
    // Every event has an id, the live-only reports too.
    expect(events.filter((e) => e.id === undefined)).toEqual([]);
    const liveOnly = liveOnlyProgress(events);
    expect(liveOnly.map((e) => e.data.bytes_done)).toEqual(Array.from({ length: reports }, (_, i) => (i + 1) * 50));

    // The last report lands in the row within a second, and the stored progress events are few.
    await new Promise((r) => setTimeout(r, 1200));
    expect((await json(await server.api(`/api/operations/${op.id}/`))).progress).toEqual({ phase: 'transfer', bytes_done: reports * 50, bytes_total: reports * 50 });
    await agent.report(agent.outcome(op.id, 'succeeded'));
    const stored = await (await server.api(`/api/operations/${op.id}/events/`)).text();
    const storedProgress = stored.split('\n\n').filter((block) => block.includes('event: progress') && /^id: /m.test(block));
    // The first progress is stored with op.start's params; then at most one a second (+1 for the last).
    expect(storedProgress.length).toBeLessThanOrEqual(Math.ceil(elapsedS) + 2);
    expect(storedProgress.length).toBeLessThan(reports);
    await agent.close();
  });
});
