import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeMp4, patterned, uploadFile } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent, sha256Of } from './support/fake-agent.ts';
import { asVideo } from '../../../test/support/fake-video.ts';

async function onlineBoard(server: TestServer, name = 'board') {
  const b = await registerBoard(server, name);
  const agent = await FakeAgent.online(server.url, b.token);
  return { ...b, agent };
}

function post(server: TestServer, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return server.api(path, {
    method: 'POST',
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

const async = { prefer: 'respond-async' };

async function getOp(server: TestServer, id: number) {
  return json(await server.api(`/api/operations/${id}/`));
}

async function waitForStatus(server: TestServer, id: number, status: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const op = await getOp(server, id);
    if (op.status === status) return op;
    if (Date.now() > deadline) throw new Error(`operation ${id} is ${op.status}, not ${status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface SseEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

/** Reads an SSE response until the stream ends; answers its events (comments skipped). */
async function readSse(res: Response): Promise<SseEvent[]> {
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length) events.push({ id, event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

describe.each(dbKinds)('operations (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_SYNC_WAIT_S: '20' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('transfers the files the board asks for, with progress, log and events', async () => {
    const board = await onlineBoard(server, 'transfer');
    const inv = await createInvocation(server, 'transfer-me');
    const weights = patterned(3 * 1024 * 1024 + 17);
    const param = Buffer.from('{"duration_s": 1}');
    await uploadFile(server, inv, 'weights', 'model.bin', weights);
    await uploadFile(server, inv, 'parameter', 'params.json', param);

    const res = await post(server, `/api/invocations/${inv}/transfer/`, { board_id: board.id }, async);
    expect(res.status).toBe(202);
    const accepted = await json(res);
    expect(res.headers.get('location')).toBe(`/api/operations/${accepted.id}/`);
    expect(accepted).toMatchObject({ kind: 'transfer', board_id: board.id, invocation_id: inv, result: null, error: null });
    expect(['queued', 'running']).toContain(accepted.status);

    const start = await board.agent.next('op.start');
    expect(start).toMatchObject({ op_id: accepted.id, kind: 'transfer', invocation: { id: inv, name: 'transfer-me' } });
    expect(start.files.map((f) => f.kind)).toEqual(['parameter', 'weights']);
    expect(start.files[1]).toEqual({ kind: 'weights', filename: 'model.bin', sha256: sha256Of(weights), size: weights.length });
    expect((await getOp(server, accepted.id)).status).toBe('running');

    // A window of two chunks makes the server wait for credit many times over.
    const pulled = await board.agent.pullContent(sha256Of(weights), 0, 1024 * 1024);
    expect(pulled.size).toBe(weights.length);
    expect(sha256Of(pulled.data)).toBe(sha256Of(weights));
    // The parameter file is "already cached": not pulled.
    board.agent.send({ type: 'op.progress', op_id: accepted.id, progress: { phase: 'transfer', bytes_done: weights.length, bytes_total: weights.length + param.length } });
    board.agent.send({ type: 'op.log', op_id: accepted.id, stream: 'agent', data: 'parameter cached\n' });
    await board.agent.report(board.agent.outcome(accepted.id, 'succeeded', { result: { skipped: 1 } }));

    const done = await getOp(server, accepted.id);
    expect(done).toMatchObject({ status: 'succeeded', error: null });
    expect(done.result).toMatchObject({ skipped: 1, bytes_sent: weights.length });
    expect(done.result.pulls).toEqual([{ filename: 'model.bin', sha256: sha256Of(weights), offset: 0, bytes: weights.length, wire_bytes: weights.length, complete: true }]);
    // The fake agent names no compression: as many bytes on the wire as in the file.
    expect(done.result.wire_bytes_sent).toBe(weights.length);
    expect(done.progress).toEqual({ phase: 'transfer', bytes_done: weights.length, bytes_total: weights.length + param.length });
    for (const t of ['created_at', 'started_at', 'finished_at']) expect(done[t]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const log = await server.api(`/api/operations/${accepted.id}/log/`);
    expect(log.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await log.text();
    expect(text).toContain(`sending model.bin (${weights.length} bytes)`);
    expect(text).toContain('parameter cached\n');

    // An ended operation's events: everything from the start, then end, then the stream closes.
    const events = await readSse(await server.api(`/api/operations/${accepted.id}/events/`));
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    expect(events[0]).toMatchObject({ event: 'status', data: { status: 'queued' } });
    expect(events.map((e) => e.event)).toContain('progress');
    expect(events.map((e) => e.event)).toContain('log');
    expect(events.at(-2)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { id: accepted.id, status: 'succeeded' } });
    // Last-Event-ID resumes after that event.
    const resumed = await readSse(await server.api(`/api/operations/${accepted.id}/events/`, { headers: { 'last-event-id': '2' } }));
    expect(resumed.map((e) => e.id)).toEqual(events.slice(2).map((e) => e.id));
    await board.agent.close();
  });

  it('resumes a pull from an offset and says so in the log and result', async () => {
    const board = await onlineBoard(server, 'resume');
    const inv = await createInvocation(server, 'resume');
    const video = asVideo(patterned(2 * 1024 * 1024));
    await uploadFile(server, inv, 'input_video', 'in.mp4', video);
    expect((await post(server, `/api/invocations/${inv}/transfer/`, { board_id: board.id }, async)).status).toBe(202);
    const start = await board.agent.next('op.start');
    const offset = 1024 * 1024 + 3;
    const rest = await board.agent.pullContent(start.files[0]!.sha256, offset);
    expect(rest.size).toBe(video.length);
    expect(rest.data.equals(video.subarray(offset))).toBe(true);
    await board.agent.report(board.agent.outcome(start.op_id, 'succeeded'));
    const done = await getOp(server, start.op_id);
    expect(done.result.pulls).toEqual([{ filename: 'in.mp4', sha256: sha256Of(video), offset, bytes: video.length - offset, wire_bytes: video.length - offset, complete: true }]);
    expect(await (await server.api(`/api/operations/${start.op_id}/log/`)).text()).toContain(`sending in.mp4: resuming at byte ${offset} of ${video.length}`);
    await board.agent.close();
  });

  it('executes and attaches the returned video; the sync POST answers 200 with the operation', async () => {
    const board = await onlineBoard(server, 'execute');
    const inv = await createInvocation(server, 'run-me');
    await uploadFile(server, inv, 'parameter', 'p.json', Buffer.from('{}'));
    const video = fakeMp4(300_000);
    const pending = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
    const start = await board.agent.next('op.start');
    expect(start.kind).toBe('execute');
    board.agent.send({ type: 'op.log', op_id: start.op_id, stream: 'stdout', data: 'frame 1\n' });
    board.agent.send({ type: 'op.log', op_id: start.op_id, stream: 'stderr', data: 'warn\n' });
    const output = board.agent.produce('out.mp4', video);
    board.agent.send({ type: 'op.result', outcome: board.agent.outcome(start.op_id, 'succeeded', { output, result: { exit_code: 0, duration_ms: 12 } }) });
    const res = await pending;
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op).toMatchObject({ id: start.op_id, kind: 'execute', status: 'succeeded', result: { exit_code: 0, duration_ms: 12 } });
    expect(op.result.output_video).toMatchObject({ kind: 'output_video', filename: 'out.mp4', sha256: output.sha256, size: video.length });
    await board.agent.next('op.result.ack', (a) => a.op_id === start.op_id);
    const got = Buffer.from(await (await server.api(`/api/invocations/${inv}/video/`)).arrayBuffer());
    expect(sha256Of(got)).toBe(output.sha256);
    const details = await json(await server.api(`/api/invocations/${inv}/`));
    expect(details.files.output_video.sha256).toBe(output.sha256);
    expect(details.operations[0]).toMatchObject({ id: op.id, status: 'succeeded' });
    expect(await (await server.api(`/api/operations/${op.id}/log/`)).text()).toContain('frame 1\nwarn\n');

    // An execute without any input files still runs.
    const bare = await createInvocation(server, 'bare');
    const pending2 = post(server, `/api/invocations/${bare}/execute/`, { board_id: board.id });
    const start2 = await board.agent.next('op.start');
    expect(start2.files).toEqual([]);
    await board.agent.report(board.agent.outcome(start2.op_id, 'succeeded', { output: board.agent.produce('x.mp4', fakeMp4(1000)) }));
    expect((await pending2).status).toBe(200);
    await board.agent.close();
  });

  it('answers 502 with the operation when it fails and 409 when it is cancelled', async () => {
    const board = await onlineBoard(server, 'fail');
    const inv = await createInvocation(server, 'fails');
    const failing = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
    const s1 = await board.agent.next('op.start');
    await board.agent.report(board.agent.outcome(s1.op_id, 'failed', { error: { code: 'runner_failed', message: 'exit status 3' }, result: { exit_code: 3 } }));
    const r1 = await failing;
    expect(r1.status).toBe(502);
    expect(r1.headers.get('content-type')).toBe('application/problem+json');
    const p1 = await json(r1);
    expect(p1).toMatchObject({ status: 502, code: 'operation_failed', operation: { id: s1.op_id, status: 'failed', error: { code: 'runner_failed' }, result: { exit_code: 3 } } });

    const cancelled = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
    const s2 = await board.agent.next('op.start');
    const c = await post(server, `/api/operations/${s2.op_id}/cancel/`);
    expect(c.status).toBe(202);
    expect((await json(c)).status).toBe('running');
    await board.agent.next('op.cancel', (m) => m.op_id === s2.op_id);
    await board.agent.report(board.agent.outcome(s2.op_id, 'cancelled'));
    const r2 = await cancelled;
    expect(r2.status).toBe(409);
    expect(await json(r2)).toMatchObject({ code: 'operation_cancelled', operation: { id: s2.op_id, status: 'cancelled' } });
    const again = await post(server, `/api/operations/${s2.op_id}/cancel/`);
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe('operation_finished');
    await board.agent.close();
  });

  it('runs one operation per board at a time, in order; a queued one cancels at once', async () => {
    const board = await onlineBoard(server, 'queue');
    const inv = await createInvocation(server, 'queued');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async))).id);
    const s1 = await board.agent.next('op.start');
    expect(s1.op_id).toBe(ids[0]);
    expect((await getOp(server, ids[1]!)).status).toBe('queued');
    expect((await json(await server.api(`/api/boards/${board.id}/`))).busy).toBe(true);
    const c = await post(server, `/api/operations/${ids[1]}/cancel/`);
    expect(c.status).toBe(202);
    expect(await json(c)).toMatchObject({ status: 'cancelled', started_at: null });
    await new Promise((r) => setTimeout(r, 100));
    expect(board.agent.received.filter((m) => m.type === 'op.start')).toHaveLength(1);
    await board.agent.report(board.agent.outcome(s1.op_id, 'succeeded'));
    const s3 = await board.agent.next('op.start');
    expect(s3.op_id).toBe(ids[2]);
    await board.agent.report(board.agent.outcome(s3.op_id, 'succeeded'));
    const first = await getOp(server, ids[0]!);
    const third = await getOp(server, ids[2]!);
    expect(Date.parse(third.started_at)).toBeGreaterThanOrEqual(Date.parse(first.finished_at));
    expect((await json(await server.api(`/api/boards/${board.id}/`))).busy).toBe(false);

    const list = await json(await server.api(`/api/operations/?board_id=${board.id}`));
    expect(list.total).toBe(3);
    expect(list.operations.map((o: { id: number }) => o.id)).toEqual([...ids].reverse());
    const cancelledOnly = await json(await server.api(`/api/operations/?board_id=${board.id}&status=cancelled`));
    expect(cancelledOnly.operations.map((o: { id: number }) => o.id)).toEqual([ids[1]]);
    const byInv = await json(await server.api(`/api/operations/?invocation_id=${inv}&kind=execute&limit=1`));
    expect(byInv).toMatchObject({ total: 3, operations: [{ id: ids[2] }] });
    expect((await server.api('/api/operations/?status=bogus')).status).toBe(400);
    expect((await server.api('/api/operations/999999/')).status).toBe(404);
    expect((await server.api('/api/operations/abc/')).status).toBe(404);
    await board.agent.close();
  });

  it('streams live events to a subscriber until the end', async () => {
    const board = await onlineBoard(server, 'sse');
    const inv = await createInvocation(server, 'sse');
    const op = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    await board.agent.next('op.start');
    const streaming = server.api(`/api/operations/${op.id}/events/`).then(readSse);
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 5; i++) board.agent.send({ type: 'op.log', op_id: op.id, stream: 'stdout', data: `line ${i}\n` });
    await board.agent.report(board.agent.outcome(op.id, 'succeeded'));
    const events = await streaming;
    const logText = events.filter((e) => e.event === 'log').map((e) => (e.data as { data: string }).data).join('');
    expect(logText).toBe('line 0\nline 1\nline 2\nline 3\nline 4\n');
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.event).toBe('end');
    await board.agent.close();
  });

  it('settles a reconnecting agent: restarts what it lost, takes its finished outcomes, cancels what ended meanwhile', async () => {
    const b = await registerBoard(server, 'reconnect');
    let agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'reconnect');
    const op = await json(await post(server, `/api/invocations/${inv}/transfer/`, { board_id: b.id }, async));
    const s1 = await agent.next('op.start');
    agent.terminate();
    await agent.closed;
    // Offline for a moment: the operation stays running and the board shows it.
    expect((await getOp(server, op.id)).status).toBe('running');

    // Back without it: started again.
    agent = await FakeAgent.online(server.url, b.token);
    const s2 = await agent.next('op.start');
    expect(s2).toEqual(s1);
    await agent.close();

    // Back with its outcome in hello.finished: handled and acknowledged.
    agent = await FakeAgent.connect(server.url, b.token);
    await agent.hello({ finished: [agent.outcome(op.id, 'succeeded', { result: { from: 'journal' } })] });
    await agent.next('op.result.ack', (a) => a.op_id === op.id);
    expect(await getOp(server, op.id)).toMatchObject({ status: 'succeeded', result: { from: 'journal' } });
    await agent.close();

    // A run cancelled while the board was away: cancelled at once, and op.cancel on return.
    agent = await FakeAgent.online(server.url, b.token);
    const op2 = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: b.id }, async));
    await agent.next('op.start');
    await agent.close();
    await new Promise((r) => setTimeout(r, 50));
    const c = await post(server, `/api/operations/${op2.id}/cancel/`);
    expect((await json(c)).status).toBe('cancelled');
    agent = await FakeAgent.online(server.url, b.token, { running: [op2.id] });
    await agent.next('op.cancel', (m) => m.op_id === op2.id);
    // Its late outcome is just acknowledged.
    await agent.report(agent.outcome(op2.id, 'cancelled'));
    expect((await getOp(server, op2.id)).status).toBe('cancelled');
    await agent.close();
  });

  describe('an output video offered before the agent has hashed it (op.output)', () => {
    async function executeWithOffer(name: string, offered: (video: Buffer) => Buffer | undefined) {
      const board = await onlineBoard(server, name);
      const inv = await createInvocation(server, name);
      const video = fakeMp4(700_000);
      const pending = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
      const start = await board.agent.next('op.start');
      const early = offered(video);
      if (early) board.agent.offerOutput(start.op_id, 'out.mp4', early);
      else board.agent.send({ type: 'op.output', op_id: start.op_id, filename: 'out.mp4', size: video.length, content_type: 'video/mp4' });
      // The server pulls the offer at once, before any op.result.
      await board.agent.next('stream.pull', (p) => p.source.kind === 'output');
      const output = board.agent.produce('out.mp4', video);
      board.agent.send({ type: 'op.result', outcome: board.agent.outcome(start.op_id, 'succeeded', { output }) });
      const res = await pending;
      expect(res.status).toBe(200);
      const op = await json(res);
      const stored = Buffer.from(await (await server.api(`/api/invocations/${inv}/video/`)).arrayBuffer());
      await board.agent.close();
      return { op, output, stored, video, pulls: board.agent.pullsOfOwnFiles() };
    }

    it('is announced by the welcome and kept without a second pull when it is the reported content', async () => {
      const b = await registerBoard(server, 'early-welcome');
      const agent = await FakeAgent.connect(server.url, b.token);
      expect((await agent.hello()).features).toContain('op.output');
      await agent.close();

      const { op, output, stored, video, pulls } = await executeWithOffer('early-same', (v) => v);
      expect(op).toMatchObject({ status: 'succeeded', result: { output_video: { sha256: output.sha256, size: video.length } } });
      expect(sha256Of(stored)).toBe(output.sha256);
      expect(pulls).toEqual([{ kind: 'output', op_id: op.id }]);
      // One pull, raw (the fake agent names no compression): its bytes, on the wire as in the file.
      expect(op.result).toMatchObject({ output_bytes_received: video.length, output_wire_bytes: video.length });
    });

    it('pulls the reported content by sha256 when the offered bytes differ (the file changed while hashed)', async () => {
      const { op, output, stored, pulls } = await executeWithOffer('early-changed', (v) => {
        const changed = Buffer.from(v);
        const last = changed.length - 1;
        changed.writeUInt8(changed.readUInt8(last) ^ 0xff, last);
        return changed;
      });
      expect(op).toMatchObject({ status: 'succeeded', result: { output_video: { sha256: output.sha256 } } });
      expect(sha256Of(stored)).toBe(output.sha256);
      expect(pulls).toEqual([
        { kind: 'output', op_id: op.id },
        { kind: 'produced', sha256: output.sha256 },
      ]);
      // Both attempts moved the whole file over the link: both count.
      expect(op.result).toMatchObject({ output_bytes_received: 2 * output.size, output_wire_bytes: 2 * output.size });
    });

    it('pulls the reported content by sha256 when the offer was shorter, or its pull failed', async () => {
      const shorter = await executeWithOffer('early-short', (v) => v.subarray(0, v.length - 10));
      expect(shorter.op.status).toBe('succeeded');
      expect(sha256Of(shorter.stored)).toBe(shorter.output.sha256);
      expect(shorter.pulls.map((p) => p.kind)).toEqual(['output', 'produced']);
      // No bytes on offer: the agent aborts the output stream (not_found).
      const failed = await executeWithOffer('early-failed', () => undefined);
      expect(failed.op.status).toBe('succeeded');
      expect(sha256Of(failed.stored)).toBe(failed.output.sha256);
      expect(failed.pulls.map((p) => p.kind)).toEqual(['output', 'produced']);
    });

    it('drops an offer whose operation ends without an output, and ignores one for a transfer', async () => {
      const board = await onlineBoard(server, 'early-dropped');
      const inv = await createInvocation(server, 'early-dropped');
      const pending = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
      const start = await board.agent.next('op.start');
      board.agent.offerOutput(start.op_id, 'out.mp4', fakeMp4(50_000));
      await board.agent.next('stream.pull', (p) => p.source.kind === 'output');
      await board.agent.report(board.agent.outcome(start.op_id, 'failed'));
      await pending;
      expect((await getOp(server, start.op_id)).status).toBe('failed');
      // What its pull wrote is gone (the store's temporary folder holds nothing of it).
      const temp = path.join(server.dataDir, 'content', '.tmp');
      await eventually(async () => expect(await fsp.readdir(temp).catch(() => [])).toEqual([]));
      expect((await json(await server.api(`/api/invocations/${inv}/`))).files.output_video).toBeNull();

      await uploadFile(server, inv, 'parameter', 'p.json', Buffer.from('{}'));
      const transfer = post(server, `/api/invocations/${inv}/transfer/`, { board_id: board.id });
      const t = await board.agent.next('op.start');
      board.agent.offerOutput(t.op_id, 'out.mp4', fakeMp4(1000));
      await board.agent.report(board.agent.outcome(t.op_id, 'succeeded'));
      await transfer;
      expect((await getOp(server, t.op_id)).status).toBe('succeeded');
      expect(board.agent.pullsOfOwnFiles()).toEqual([{ kind: 'output', op_id: start.op_id }]);
      await board.agent.close();
    });
  });

  it('waits for the output video again when the link drops while it is pulled', async () => {
    const b = await registerBoard(server, 'drop-output');
    let agent = await FakeAgent.online(server.url, b.token);
    const inv = await createInvocation(server, 'drop-output');
    const op = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: b.id }, async));
    await agent.next('op.start');
    const video = fakeMp4(50_000);
    const output = agent.produce('o.mp4', video);
    agent.holdPulls = true; // the pull gets no data: it stays open until the link drops
    const outcome = agent.outcome(op.id, 'succeeded', { output });
    agent.send({ type: 'op.result', outcome });
    await agent.next('stream.pull');
    agent.terminate();
    await agent.closed;
    await new Promise((r) => setTimeout(r, 100));
    expect((await getOp(server, op.id)).status).toBe('running');
    agent = await FakeAgent.connect(server.url, b.token);
    agent.produce('o.mp4', video);
    await agent.hello({ finished: [outcome] });
    await agent.next('op.result.ack', (a) => a.op_id === op.id);
    const done = await getOp(server, op.id);
    expect(done).toMatchObject({ status: 'succeeded', result: { output_video: { sha256: output.sha256 } } });
    await agent.close();
  });

  it('fails an execute whose output does not match its sha256', async () => {
    const board = await onlineBoard(server, 'corrupt');
    const inv = await createInvocation(server, 'corrupt');
    const pending = post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id });
    const s = await board.agent.next('op.start');
    const output = board.agent.produce('o.mp4', fakeMp4(10_000));
    board.agent.produced.set(output.sha256, fakeMp4(10_001));
    await board.agent.report(board.agent.outcome(s.op_id, 'succeeded', { output }));
    const res = await pending;
    expect(res.status).toBe(502);
    expect((await json(res)).operation.error.code).toBe('output_unavailable');
    expect((await json(await server.api(`/api/invocations/${inv}/`))).files.output_video).toBeNull();
    await board.agent.close();
  });

  it('refuses to start work for an offline or unknown board', async () => {
    const b = await registerBoard(server, 'offline');
    const inv = await createInvocation(server, 'offline');
    const r1 = await post(server, `/api/invocations/${inv}/execute/`, { board_id: b.id });
    expect(r1.status).toBe(503);
    expect(await json(r1)).toMatchObject({ code: 'board_offline' });
    expect((await json(await server.api(`/api/operations/?board_id=${b.id}`))).total).toBe(0);
    const r2 = await post(server, `/api/invocations/${inv}/execute/`, { board_id: '00000000-0000-4000-8000-000000000000' });
    expect(r2.status).toBe(404);
    expect((await json(r2)).code).toBe('board_not_found');
    const r3 = await post(server, `/api/invocations/${inv}/execute/`);
    expect(r3.status).toBe(400);
    expect((await json(r3)).code).toBe('board_required');
    const r4 = await post(server, `/api/invocations/999999/execute/`, { board_id: b.id });
    expect(r4.status).toBe(404);
    expect((await json(r4)).code).toBe('invocation_not_found');
    const r5 = await post(server, `/api/invocations/${inv}/transfer/`, { board_id: 'nope' });
    expect(r5.status).toBe(400);
  });

  it('cancels the operations of an invocation that is deleted', async () => {
    const board = await onlineBoard(server, 'delete-inv');
    const inv = await createInvocation(server, 'delete-me');
    const running = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    const queued = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    await board.agent.next('op.start');
    const del = server.api(`/api/invocations/${inv}/`, { method: 'DELETE' });
    await board.agent.next('op.cancel', (m) => m.op_id === running.id);
    await board.agent.report(board.agent.outcome(running.id, 'cancelled'));
    expect((await del).status).toBe(204);
    expect((await getOp(server, running.id)).status).toBe('cancelled');
    expect((await getOp(server, queued.id)).status).toBe('cancelled');
    await board.agent.close();
  });

  it('cancels the work of a deleted board', async () => {
    const board = await onlineBoard(server, 'delete-board');
    const inv = await createInvocation(server, 'orphan');
    const running = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    const queued = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    await board.agent.next('op.start');
    expect((await server.api(`/api/boards/${board.id}/`, { method: 'DELETE' })).status).toBe(204);
    expect(await board.agent.closed).toBe(4003);
    for (const id of [running.id, queued.id]) expect((await getOp(server, id)).status).toBe('cancelled');
  });

  it('replays a history longer than a page, then follows live events, each exactly once; /log/ streams it all', async () => {
    const board = await onlineBoard(server, 'long-log');
    const inv = await createInvocation(server, 'long log');
    const op = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    await board.agent.next('op.start');
    // Alternating streams, so chunks never merge into one event: well over one page (500) of events.
    const say = (i: number) => board.agent.send({ type: 'op.log', op_id: op.id, stream: i % 2 ? 'stdout' : 'stderr', data: `line ${i}\n` });
    for (let i = 0; i < 600; i++) say(i);
    for (;;) {
      if ((await (await server.api(`/api/operations/${op.id}/log/`)).text()).includes('line 599\n')) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const streaming = server.api(`/api/operations/${op.id}/events/`).then(readSse);
    // More while the client replays, then the end.
    for (let i = 600; i < 800; i++) say(i);
    await board.agent.report(board.agent.outcome(op.id, 'succeeded'));
    const events = await streaming;
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
    const logged = events.filter((e) => e.event === 'log').map((e) => (e.data as { data: string }).data);
    const expected = Array.from({ length: 800 }, (_, i) => `line ${i}\n`);
    expect(logged.filter((l) => l.startsWith('line '))).toEqual(expected);
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { id: op.id, status: 'succeeded' } });
    const log = await (await server.api(`/api/operations/${op.id}/log/`)).text();
    expect(log).toContain(expected.join(''));
    await board.agent.close();
  });
});

describe.each(dbKinds)('a long log\'s tail (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('replays only the last N bytes of a finished log after log_skipped, every status event, and never cuts a character', async () => {
    const board = await onlineBoard(server, 'tail');
    const inv = await createInvocation(server, 'tail');
    const op = await json(await post(server, `/api/invocations/${inv}/execute/`, { board_id: board.id }, async));
    await board.agent.next('op.start');
    // Alternating streams (so chunks stay separate events), some with two-byte characters.
    const lines = Array.from({ length: 700 }, (_, i) => `line ${i} ${i % 7 === 0 ? 'ééé' : 'abc'}\n`);
    lines.forEach((data, i) => board.agent.send({ type: 'op.log', op_id: op.id, stream: i % 2 ? 'stdout' : 'stderr', data }));
    await board.agent.report(board.agent.outcome(op.id, 'succeeded'));
    await waitForStatus(server, op.id, 'succeeded');
    const full = await (await server.api(`/api/operations/${op.id}/log/`)).text();
    const fullBytes = Buffer.from(full, 'utf8');
    const all = await server.api(`/api/operations/${op.id}/events/`).then(readSse);

    for (const n of [1000, 4097, 1, fullBytes.length - 1]) {
      const events = await server.api(`/api/operations/${op.id}/events/?log_tail_bytes=${n}`).then(readSse);
      const skipped = events.filter((e) => e.event === 'log_skipped');
      expect(skipped).toHaveLength(1);
      expect(events[0]!.event).toBe('log_skipped');
      expect(skipped[0]!.id).toBeUndefined();
      const tail = events.filter((e) => e.event === 'log').map((e) => (e.data as { data: string }).data).join('');
      const tailBytes = Buffer.byteLength(tail, 'utf8');
      // Exactly the end of the whole log: N bytes, or up to 3 fewer where a character was cut.
      expect(full.endsWith(tail)).toBe(true);
      expect(tailBytes).toBeLessThanOrEqual(n);
      expect(tailBytes).toBeGreaterThanOrEqual(n - 3);
      expect(tail).not.toContain('\uFFFD');
      // What came before the N bytes asked for (a character cut at the boundary is dropped whole).
      expect((skipped[0]!.data as { bytes: number }).bytes).toBe(fullBytes.length - n);
      // Every event that is not the log, with its id, as in a full replay; the end last.
      const notLog = (list: typeof events) => list.filter((e) => e.event !== 'log' && e.event !== 'log_skipped').map((e) => `${e.id} ${e.event}`);
      expect(notLog(events)).toEqual(notLog(all));
      expect(events.at(-1)).toMatchObject({ event: 'end', data: { status: 'succeeded' } });
    }

    // A tail larger than the log: everything, nothing said skipped.
    const whole = await server.api(`/api/operations/${op.id}/events/?log_tail_bytes=${fullBytes.length}`).then(readSse);
    expect(whole.some((e) => e.event === 'log_skipped')).toBe(false);
    expect(whole.filter((e) => e.event === 'log').map((e) => (e.data as { data: string }).data).join('')).toBe(full);
    // Resuming with Last-Event-ID ignores the tail: what follows that id, as always.
    const resumed = await server.api(`/api/operations/${op.id}/events/?log_tail_bytes=10`, { headers: { 'last-event-id': '3' } }).then(readSse);
    expect(resumed[0]!.id).toBe('4');
    expect(resumed.some((e) => e.event === 'log_skipped')).toBe(false);
    // Bad values are a 400 naming the parameter.
    for (const bad of ['0', '-5', 'abc', '1.5', String(16 * 1024 * 1024 + 1)]) {
      const res = await server.api(`/api/operations/${op.id}/events/?log_tail_bytes=${bad}`);
      expect(res.status, bad).toBe(400);
      expect((await json(res)).errors[0].field).toBe('log_tail_bytes');
    }
    await board.agent.close();
  });
});

describe.each(dbKinds)('operations: sync wait and board choice (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_SYNC_WAIT_S: '0.3' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 503 no_board with no board, uses the only board, and 202 when the wait runs out', async () => {
    const inv = await createInvocation(server, 'only');
    const none = await post(server, `/api/invocations/${inv}/transfer/`);
    expect(none.status).toBe(503);
    expect((await json(none)).code).toBe('no_board');
    const board = await onlineBoard(server, 'the-only-one');
    // No body at all, even with a JSON content type, means "no board named".
    const res = await server.api(`/api/invocations/${inv}/transfer/`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(202);
    const op = await json(res);
    expect(op.board_id).toBe(board.id);
    expect(res.headers.get('location')).toBe(`/api/operations/${op.id}/`);
    expect(res.headers.get('preference-applied')).toBeNull();
    await board.agent.next('op.start');
    await board.agent.report(board.agent.outcome(op.id, 'succeeded'));
    expect((await waitForStatus(server, op.id, 'succeeded')).status).toBe('succeeded');
    await board.agent.close();
  });
});

describe.each(dbKinds)('operations across a server restart (%s database)', (kind) => {
  /**
   * Runs `body` with a kept server, a board named `name` online on it (a FakeAgent) and an
   * invocation; `restart()` starts a second server on the first one's data folder and
   * database. Both go away afterwards, whatever happened.
   */
  const withRestart = async (
    name: string,
    body: (s: { first: TestServer; board: { id: string; token: string }; agent: FakeAgent; inv: number; restart: () => Promise<TestServer> }) => Promise<void>,
  ) => {
    const first = await startTestServer(kind, {}, { keep: true });
    let restarted: TestServer | undefined;
    try {
      const board = await registerBoard(first, name);
      const agent = await FakeAgent.online(first.url, board.token);
      const inv = await createInvocation(first, name);
      const restart = async () =>
        (restarted = await startTestServer(kind, { MM_DATA_DIR: first.dataDir }, { keep: false, ...(first.scratchDatabase ? { scratchDatabase: first.scratchDatabase } : {}) }));
      await body({ first, board, agent, inv, restart });
    } finally {
      await restarted?.stop();
      await fsp.rm(first.dataDir, { recursive: true, force: true });
    }
  };

  it('keeps queued work and settles running work when the agent comes back', async () => {
    await withRestart('restart', async ({ first, board: b, agent: firstAgent, inv, restart }) => {
      let agent = firstAgent;
      await uploadFile(first, inv, 'bitstream', 'b.bit', patterned(100_000));
      const running = await json(await post(first, `/api/invocations/${inv}/execute/`, { board_id: b.id }, async));
      const queued = await json(await post(first, `/api/invocations/${inv}/transfer/`, { board_id: b.id }, async));
      await agent.next('op.start');
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'before restart\n' });
      await new Promise((r) => setTimeout(r, 100));
      await first.stop();
      expect([1001, 1000]).toContain(await agent.closed);

      const restarted = await restart();
      expect((await getOp(restarted, running.id)).status).toBe('running');
      expect((await getOp(restarted, queued.id)).status).toBe('queued');
      const video = fakeMp4(20_000);
      agent = await FakeAgent.connect(restarted.url, b.token);
      const output = agent.produce('late.mp4', video);
      await agent.hello({ finished: [agent.outcome(running.id, 'succeeded', { output })] });
      await agent.next('op.result.ack', (a) => a.op_id === running.id);
      expect(await getOp(restarted, running.id)).toMatchObject({ status: 'succeeded', result: { output_video: { sha256: output.sha256 } } });
      const next = await agent.next('op.start');
      expect(next.op_id).toBe(queued.id);
      await agent.report(agent.outcome(queued.id, 'succeeded'));
      expect(await (await restarted.api(`/api/operations/${running.id}/log/`)).text()).toContain('before restart\n');
      await agent.close();
    });
  });

  it('serves a pull resumed at once by an agent coming back mid-transfer, before its hello is settled', async () => {
    await withRestart('resume-at-once', async ({ first, board: b, agent: firstAgent, inv, restart }) => {
      let agent = firstAgent;
      const bitstream = patterned(300_000);
      await uploadFile(first, inv, 'bitstream', 'b.bit', bitstream);
      const running = await json(await post(first, `/api/invocations/${inv}/transfer/`, { board_id: b.id }, async));
      await agent.next('op.start');
      await first.stop();
      await agent.closed;

      // A restarted server (like a replica the board moved to) knows the run only from the
      // database. The agent resumes its pull in the same breath as its hello, before the
      // server has read its running operations back: the pull waits for that, it is not refused.
      const restarted = await restart();
      agent = await FakeAgent.connect(restarted.url, b.token);
      const welcome = agent.hello({ running: [running.id] });
      const pulled = await agent.pullContent(sha256Of(bitstream), 100_000);
      expect(pulled.size).toBe(bitstream.length);
      expect(pulled.data.equals(bitstream.subarray(100_000))).toBe(true);
      await welcome;
      await agent.report(agent.outcome(running.id, 'succeeded'));
      expect((await getOp(restarted, running.id)).status).toBe('succeeded');
      await agent.close();
    });
  });

  it('stores agent log text sent again after a restart once: what it already has is dropped, the rest kept', async () => {
    await withRestart('log-resend', async ({ first, board: b, agent: firstAgent, inv, restart }) => {
      let agent = firstAgent;
      const running = await json(await post(first, `/api/invocations/${inv}/execute/`, { board_id: b.id }, async));
      await agent.next('op.start');
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'one\n', offset: 0 });
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'two\n', offset: 4 });
      // The same text again on the same link (a resend racing the original) is not doubled.
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'one\n', offset: 0 });
      const logOf = async (srv: TestServer) => (await srv.api(`/api/operations/${running.id}/log/`)).text();
      for (let i = 0; i < 100 && !(await logOf(first)).includes('two'); i++) await new Promise((r) => setTimeout(r, 50));
      await first.stop();
      await agent.closed;

      const restarted = await restart();
      agent = await FakeAgent.connect(restarted.url, b.token);
      await agent.hello({ running: [running.id] });
      // The agent sends its kept text again from the start, then what is new.
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'one\n', offset: 0 });
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'two\nthr', offset: 4 });
      agent.send({ type: 'op.log', op_id: running.id, stream: 'stdout', data: 'ee\n', offset: 11 });
      await agent.report(agent.outcome(running.id, 'failed', { error: { code: 'runner_failed', message: 'exit 1' } }));
      expect(await logOf(restarted)).toBe('one\ntwo\nthree\n');
      const events = await (await restarted.api(`/api/operations/${running.id}/events/`)).text();
      expect(events).toContain('"data":"thr"');
      expect(events).not.toContain('agent_end');
      await agent.close();
    });
  });
});
