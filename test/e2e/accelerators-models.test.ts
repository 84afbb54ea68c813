import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { truncatedXmodel, xmodelBytes } from '../support/xmodel-builder.ts';
import {
  B3136,
  B3136_APP,
  B4096,
  B4096_APP,
  boardLabels,
  cacheFiles,
  createInvocation,
  eventually,
  loadApp,
  operationEnded,
  operationLog,
  patchInvocation,
  postJson,
  startBoard,
  stopBoard,
  uploadFile,
  type Board,
} from './accelerators-support.ts';
import { asVideo } from '../support/fake-video.ts';

/**
 * The model's needs and the check before any byte moves, end to end (docs/accelerators.md):
 * `.xmodel` weights read at upload, an execute on a board of another DPU refused with nothing
 * sent, a selector run landing only on a fitting board, `requires_app` loading the app first
 * (and not again), and a board of unknown fingerprint running with the check skipped.
 */
describe('models and the boards they fit (embedded database)', () => {
  let server: TestServer;
  /** Keeps its default app: a B4096 DPU. */
  let b4096: Board;
  /** Switched to the B3136 app: another fingerprint. */
  let b3136: Board;
  /** No xdputil: its fingerprint is unknown. */
  let blind: Board;

  const model = (fingerprint: string) =>
    xmodelBytes({ name: 'resnet50', inputs: [{ name: 'input_0', shape: [1, 224, 224, 3] }], dpuSubgraphs: [{ name: 'subgraph_conv1', fingerprint }], cpuSubgraphs: ['subgraph_softmax'], weightBytes: 300_000 });
  const params = Buffer.from(JSON.stringify({ duration_s: 0 }));

  beforeAll(async () => {
    server = await startTestServer('embedded');
    [b4096, b3136, blind] = await Promise.all([
      startBoard(server, 'board-b4096', { MM_RUN_TIMEOUT_S: '120' }),
      startBoard(server, 'board-b3136'),
      startBoard(server, 'board-blind', { MM_XDPUTIL: '/nonexistent/xdputil' }),
    ]);
    const switched = await json(await loadApp(server, b3136.id, B3136_APP));
    expect(switched.status).toBe('succeeded');
    for (const [board, fp] of [
      [b4096, B4096],
      [b3136, B3136],
    ] as const) {
      await eventually(async () => expect((await boardLabels(server, board.id))['mm/dpu-fingerprint']).toBe(fp));
    }
    await eventually(async () => expect((await boardLabels(server, blind.id))['mm/app']).toBe(B4096_APP));
    // Each board is labelled, so selectors can name the three of them.
    for (const board of [b4096, b3136, blind]) {
      const res = await server.api(`/api/boards/${board.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ labels: { pool: 'accel' } }) });
      expect(res.status).toBe(200);
    }
  });
  afterAll(async () => {
    await Promise.all([stopBoard(b4096), stopBoard(b3136), stopBoard(blind)]);
    await server?.stop();
  });

  it('an .xmodel weights file is read at upload: its DPU subgraphs and inputs are in the file record', async () => {
    const id = await createInvocation(server, 'model-record');
    const res = await uploadFile(server, id, 'weights', 'resnet50.xmodel', model(B4096));
    expect(res.status).toBe(201);
    const record = await json(res);
    expect(record.model).toEqual({
      format: 'xmodel',
      dpu_subgraphs: [{ name: 'subgraph_conv1', dpu_fingerprint: B4096, dpu_name: 'DPUCZDX8G_ISA1_B4096' }],
      inputs: [{ name: 'input_0', shape: [1, 224, 224, 3], dtype: 'xint8' }],
    });
    const inv = await json(await server.api(`/api/invocations/${id}/`));
    expect(inv.files.weights.model.dpu_subgraphs[0].dpu_fingerprint).toBe(B4096);
    // Other weights are left alone.
    const other = await json(await uploadFile(server, id, 'weights', 'weights.bin', Buffer.from('not a model')));
    expect(other.model).toBeUndefined();
  });

  it('an .xmodel that does not parse: 400 invalid_xmodel, nothing stored (multipart and attach by digest)', async () => {
    const id = await createInvocation(server, 'bad-model');
    for (const bytes of [truncatedXmodel({ dpuSubgraphs: [{ name: 's', fingerprint: B4096 }], weightBytes: 100_000 }), Buffer.from('plain text that is no protobuf at all')]) {
      const res = await uploadFile(server, id, 'weights', 'broken.xmodel', bytes);
      expect(res.status).toBe(400);
      expect(await json(res)).toMatchObject({ code: 'invalid_xmodel' });
    }
    expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights).toBeNull();
    // The same bytes stored under another name, then attached by digest as an xmodel: refused too.
    const holder = await createInvocation(server, 'holder');
    const text = Buffer.from('plain text that is no protobuf at all');
    const stored = await json(await uploadFile(server, holder, 'parameter', 'p.txt', text));
    const attach = await server.api(`/api/invocations/${id}/files/weights/`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sha256: stored.sha256, filename: 'again.xmodel' }) });
    expect(attach.status).toBe(400);
    expect(await json(attach)).toMatchObject({ code: 'invalid_xmodel' });
    expect((await json(await server.api(`/api/invocations/${id}/`))).files.weights).toBeNull();
  });

  it('execute on a board of another DPU: 409 dpu_fingerprint_mismatch, no operation, nothing sent', async () => {
    const id = await createInvocation(server, 'mismatch');
    expect((await uploadFile(server, id, 'weights', 'resnet50.xmodel', model(B4096))).status).toBe(201);
    expect((await uploadFile(server, id, 'parameter', 'params.json', params)).status).toBe(201);
    const cacheBefore = await cacheFiles(b3136);
    const res = await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b3136.id });
    expect(res.status).toBe(409);
    const problem = await json(res);
    expect(problem).toMatchObject({ code: 'dpu_fingerprint_mismatch', model_fingerprints: [B4096], board_fingerprint: B3136 });
    expect(problem.fitting_boards).toEqual([{ id: b4096.id, name: 'board-b4096' }]);
    expect((await json(await server.api(`/api/operations/?invocation_id=${id}`))).total).toBe(0);
    expect(await cacheFiles(b3136)).toEqual(cacheBefore);
    // The fitting board runs it, with the check in its log.
    const ok = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b4096.id }));
    expect(ok).toMatchObject({ status: 'succeeded', result: { dpu_check: 'passed', dpu_fingerprint: B4096 } });
    expect(await operationLog(server, ok.id)).toContain(`DPU fingerprint check: the board's DPUCZDX8G_ISA1_B4096 (${B4096}) fits the model`);
  });

  it('a selector run lands only on a fitting board; none fitting: 400 no_matching_board, reason dpu_fingerprint', async () => {
    const id = await createInvocation(server, 'selector');
    expect((await uploadFile(server, id, 'weights', 'm.xmodel', model(B3136))).status).toBe(201);
    expect((await uploadFile(server, id, 'parameter', 'params.json', params)).status).toBe(201);
    // The board of unknown fingerprint may take it too: keep it out of this selector.
    const off = await server.api(`/api/boards/${blind.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ maintenance: true }) });
    expect(off.status).toBe(200);
    try {
      for (let i = 0; i < 3; i++) {
        const op = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_selector: { pool: 'accel' } }));
        expect(op).toMatchObject({ status: 'succeeded', board_id: b3136.id });
      }
    } finally {
      await server.api(`/api/boards/${blind.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ maintenance: false }) });
    }
    const nowhere = await createInvocation(server, 'no-fit');
    expect((await uploadFile(server, nowhere, 'weights', 'm.xmodel', model('0x1234567890abcdef'))).status).toBe(201);
    const res = await postJson(server, `/api/invocations/${nowhere}/execute/`, { board_selector: { 'mm/app': B4096_APP, 'mm/dpu-arch': 'DPUCZDX8G_ISA1_B4096' } });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'no_matching_board', reason: 'dpu_fingerprint', model_fingerprints: ['0x1234567890abcdef'], fitting_boards: [] });
    expect((await json(await server.api(`/api/operations/?invocation_id=${nowhere}`))).total).toBe(0);
  });

  it('requires_app: the run loads the app first (recorded in its log and result), the next run does not', async () => {
    const id = await createInvocation(server, 'needs-app');
    expect((await uploadFile(server, id, 'weights', 'm.xmodel', model(B3136))).status).toBe(201);
    expect((await uploadFile(server, id, 'parameter', 'params.json', params)).status).toBe(201);
    const patched = await patchInvocation(server, id, { requires_app: B3136_APP });
    expect(patched.status).toBe(200);
    expect((await json(patched)).requires_app).toBe(B3136_APP);
    // The B4096 board has the app's fingerprint for that app (it remembers none yet: unknown) → not refused.
    const first = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b4096.id }));
    expect(first).toMatchObject({ status: 'succeeded', result: { app: B3136_APP, app_loaded: true, dpu_check: 'passed', dpu_fingerprint: B3136 } });
    const log = await operationLog(server, first.id);
    expect(log).toContain(`the run needs the app ${B3136_APP}`);
    expect(log).toContain(`loaded ${B3136_APP} in slot 0 before the run`);
    expect(log.indexOf('before the run')).toBeLessThan(log.indexOf('running ['));
    await eventually(async () => expect(await boardLabels(server, b4096.id)).toMatchObject({ 'mm/app': B3136_APP, 'mm/dpu-fingerprint': B3136 }));
    const second = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b4096.id }));
    expect(second).toMatchObject({ status: 'succeeded', result: { app: B3136_APP, app_loaded: false } });
    expect(await operationLog(server, second.id)).toContain(`${B3136_APP} is active already: not loaded again`);
    // Back to its default app for the other tests.
    expect((await json(await loadApp(server, b4096.id, B4096_APP))).status).toBe('succeeded');
  });

  it('with requires_app, a board is judged by the fingerprint it showed with that app', async () => {
    const id = await createInvocation(server, 'needs-b4096-app');
    expect((await uploadFile(server, id, 'weights', 'm.xmodel', model(B4096))).status).toBe(201);
    expect((await patchInvocation(server, id, { requires_app: B3136_APP })).status).toBe(200);
    // board-b4096 showed B3136 while that app was active (previous test): it would not fit.
    const res = await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b4096.id });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ code: 'dpu_fingerprint_mismatch', board_fingerprint: B3136 });
  });

  it('a board of unknown fingerprint: the run goes ahead, its log says the check was skipped', async () => {
    const id = await createInvocation(server, 'blind');
    expect((await uploadFile(server, id, 'weights', 'm.xmodel', model(B3136))).status).toBe(201);
    expect((await uploadFile(server, id, 'parameter', 'params.json', params)).status).toBe(201);
    const op = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_id: blind.id }));
    expect(op).toMatchObject({ status: 'succeeded', board_id: blind.id, result: { dpu_check: 'skipped' } });
    expect(await operationLog(server, op.id)).toContain("DPU fingerprint check skipped: the board's DPU fingerprint is unknown");
  });

  it('a mismatch the agent finds itself (the board changed after the request) fails the run before any transfer', async () => {
    const id = await createInvocation(server, 'late-mismatch');
    expect((await uploadFile(server, id, 'weights', 'm.xmodel', model(B4096))).status).toBe(201);
    const clip = await json(await uploadFile(server, id, 'input_video', 'clip.bin', asVideo(Buffer.alloc(200_000, 7))));
    // Queue a long run first, so the execute waits while the board switches its app.
    const slowParams = await createInvocation(server, 'slow');
    expect((await uploadFile(server, slowParams, 'parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 2 })))).status).toBe(201);
    const slow = await json(await postJson(server, `/api/invocations/${slowParams}/execute/`, { board_id: b4096.id }, { prefer: 'respond-async' }));
    const load = await json(await postJson(server, '/api/apps/load/', { board_id: b4096.id, app: B3136_APP }, { prefer: 'respond-async' }));
    const run = await json(await postJson(server, `/api/invocations/${id}/execute/`, { board_id: b4096.id }, { prefer: 'respond-async' }));
    const ended = await operationEnded(server, run.id);
    await operationEnded(server, slow.id);
    expect((await operationEnded(server, load.id)).status).toBe('succeeded');
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'dpu_fingerprint_mismatch' } });
    expect(ended.error.message).toContain(`has ${B3136}`);
    // Not one byte of its files reached the board (complete or partial).
    expect((await cacheFiles(b4096)).filter((line) => line.includes(clip.sha256))).toEqual([]);
    expect((await json(await loadApp(server, b4096.id, B4096_APP))).status).toBe('succeeded');
  });
});
