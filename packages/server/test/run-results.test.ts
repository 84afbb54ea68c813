import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../src/db/schema.ts';
import { sweepOrphanContent } from '../src/invocations/invocation-files.ts';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { createInvocation, fakeMp4, uploadFile } from './invocations-support.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent, sha256Of } from './support/fake-agent.ts';

/**
 * An execute's second produced file, mm-runner's results.jsonl (docs/runner.md): pulled from
 * the board by its sha256 like the output video, kept with the operation, served by
 * GET /api/invocations/<id>/results/ (the latest run's, or `?operation_id=`), and collected
 * once its operation is gone.
 */
describe.each(dbKinds)('run results (%s database)', (kind) => {
  let server: TestServer;
  let agent: FakeAgent;
  let boardId: string;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_SYNC_WAIT_S: '20' });
    const b = await registerBoard(server, 'results-board');
    boardId = b.id;
    agent = await FakeAgent.online(server.url, b.token);
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  const lines = (n: number, label: string) => Buffer.from(Array.from({ length: n }, (_, i) => `${JSON.stringify({ frame: i, t_ms: i * 40, classes: [{ label, score: 0.9 }] })}\n`).join(''));

  /** Runs an execute whose board reports `results` (or none) beside an output video. */
  async function run(inv: number, results: Buffer | undefined) {
    const started = server.api(`/api/invocations/${inv}/execute/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ board_id: boardId }) });
    const start = await agent.next('op.start');
    const output = agent.produce('output.mp4', fakeMp4(2000 + start.op_id));
    const outcome = agent.outcome(start.op_id, 'succeeded', { output });
    if (results) outcome.results = agent.produce('results.jsonl', results, 'application/x-ndjson');
    await agent.report(outcome);
    const op = await json(await started);
    expect(op.status).toBe('succeeded');
    return op;
  }

  it("pulls results.jsonl with the video, keeps it with the run and serves the latest run's or another's", async () => {
    const inv = await createInvocation(server, 'classified');
    await uploadFile(server, inv, 'parameter', 'p.json', Buffer.from('{"schema":"mm-runner/1","task":"classification"}'));
    expect((await server.api(`/api/invocations/${inv}/results/`)).status).toBe(404);

    const first = lines(30, 'red');
    const op1 = await run(inv, first);
    expect(op1.result.results).toEqual({ filename: 'results.jsonl', size: first.length, sha256: sha256Of(first), url: `/api/invocations/${inv}/results/?operation_id=${op1.id}` });
    expect(agent.pullsOfOwnFiles().filter((s) => s.kind === 'produced').map((s) => (s.kind === 'produced' ? s.sha256 : ''))).toContain(sha256Of(first));

    const res = await server.api(`/api/invocations/${inv}/results/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(Buffer.from(await res.arrayBuffer()).equals(first)).toBe(true);
    const part = await server.api(`/api/invocations/${inv}/results`, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe(first.subarray(0, 10).toString());

    // A second run: the latest is served by default; the first stays by its operation id.
    const second = lines(10, 'blue');
    const op2 = await run(inv, second);
    expect(await (await server.api(`/api/invocations/${inv}/results/`)).text()).toBe(second.toString());
    expect(await (await server.api(`/api/invocations/${inv}/results/?operation_id=${op1.id}`)).text()).toBe(first.toString());
    // A run without results does not hide the latest one that had them.
    const op3 = await run(inv, undefined);
    expect(op3.result.results).toBeUndefined();
    expect(await (await server.api(`/api/invocations/${inv}/results/`)).text()).toBe(second.toString());
    const none = await server.api(`/api/invocations/${inv}/results/?operation_id=${op3.id}`);
    expect(none.status).toBe(404);
    expect((await json(none)).code).toBe('results_not_found');
    // Another invocation's run is not this one's.
    const other = await createInvocation(server, 'other');
    expect((await server.api(`/api/invocations/${other}/results/?operation_id=${op2.id}`)).status).toBe(404);
    expect((await server.api(`/api/invocations/999999/results/`)).status).toBe(404);
    expect((await server.api(`/api/invocations/${inv}/results/?operation_id=abc`)).status).toBe(400);
    expect((await server.api(`/api/invocations/${inv}/results/?operation_id=99999999999`)).status).toBe(400);

    // Kept by the sweep while its run is; collected once the run is gone (retention deletes rows).
    await sweepOrphanContent(server.ctx, { orphanGraceMs: 0 });
    expect(await server.ctx.files.has(sha256Of(first))).toBe(true);
    const { db } = server.ctx.database;
    await db.delete(operations).where(eq(operations.id, op1.id));
    await sweepOrphanContent(server.ctx, { orphanGraceMs: 0 });
    expect(await server.ctx.files.has(sha256Of(first))).toBe(false);
    expect(await server.ctx.files.has(sha256Of(second))).toBe(true);
  });

  it('refuses a parameter file that claims mm-runner/1 and breaks it, storing nothing; others pass unchecked', async () => {
    const inv = await createInvocation(server, 'parameters');
    const bad = Buffer.from('{"schema":"mm-runner/1","task":"segmentation","segmentation":{"alpha":2}}');
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob([new Uint8Array(bad)]), 'p.json');
    const res = await server.api(`/api/invocations/${inv}/upload/`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code: 'invalid_parameter_file', path: '$.segmentation.alpha', errors: [{ field: '$.segmentation.alpha', message: 'must be at most 1' }] });
    expect(problem.detail).toContain('$.segmentation.alpha');
    expect(await server.ctx.files.has(sha256Of(bad))).toBe(false);
    expect((await json(await server.api(`/api/invocations/${inv}/`))).files.parameter).toBeNull();
    for (const fine of ['{"duration_s": 2}', 'not json at all', '{"schema":"something else"}']) {
      expect((await uploadFile(server, inv, 'parameter', 'p.json', Buffer.from(fine))).size).toBe(fine.length);
    }
  });
});
