import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import {
  addSimApp,
  B3136,
  B3136_APP,
  B4096,
  B4096_APP,
  boardApps,
  boardLabels,
  eventually,
  getBoard,
  loadApp,
  operationEnded,
  operationLog,
  PLAIN_APP,
  startBoard,
  stopBoard,
  unloadApp,
  vartConfOf,
  appsDirOf,
  type Board,
} from './accelerators-support.ts';

/**
 * Accelerator facts and app loads end to end (docs/accelerators.md): a real control plane and
 * a real agent on the simulated board, whose simulated dfx-mgr-client, xmutil and xdputil
 * print what the real ones print and fail the way they fail (exit 0 on a failed load, "no
 * empty slot", a load that hangs, a fingerprint that changes with the loaded app).
 */
describe('accelerated applications on a simulated board (embedded database)', () => {
  let server: TestServer;
  let board: Board;

  beforeAll(async () => {
    server = await startTestServer('embedded');
    // A short load bound, so the hanging app is killed within the test.
    board = await startBoard(server, 'accel-board', { MM_APP_LOAD_TIMEOUT_S: '3' });
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
  });

  it('reports the accelerator at hello: facts, read-only labels, the apps', async () => {
    const facts = await eventually(async () => {
      const b = (await json(await server.api(`/api/boards/${board.id}/`))) as { facts: { accelerator?: Record<string, unknown> } };
      expect(b.facts.accelerator).toBeDefined();
      return b.facts.accelerator!;
    });
    expect(facts).toMatchObject({
      dpu: { arch: 'DPUCZDX8G_ISA1_B4096', fingerprint: B4096, frequency_mhz: 300, cores: 1 },
      vai_version: '2.5.0',
      vart_target: `${appsDirOf(board)}/${B4096_APP}/dpu.xclbin`,
    });
    expect(await boardLabels(server, board.id)).toMatchObject({
      'mm/dpu-arch': 'DPUCZDX8G_ISA1_B4096',
      'mm/dpu-fingerprint': B4096,
      'mm/app': B4096_APP,
      'mm/vai-version': '2.5.0',
    });
    const apps = await boardApps(server, board.id);
    expect(apps).toMatchObject({ board_id: board.id, active: B4096_APP, dpu: { fingerprint: B4096 }, vai_version: '2.5.0' });
    expect(apps.apps.map((a: { name: string }) => a.name)).toEqual([B3136_APP, B4096_APP, PLAIN_APP]);
    expect(apps.apps.find((a: { name: string }) => a.name === B4096_APP)).toMatchObject({ type: 'XRT_FLAT', base: B4096_APP, active: true, slot: 0 });
    expect(apps.reported_at).toEqual(expect.any(String));
    // mm/ labels are the agent's: a PATCH may not set them.
    const patch = await server.api(`/api/boards/${board.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ labels: { 'mm/app': 'x' } }) });
    expect(patch.status).toBe(400);
  });

  it('?refresh=1 asks the board (an app_query operation)', async () => {
    const apps = await boardApps(server, board.id, true);
    expect(apps).toMatchObject({ board_id: board.id, active: B4096_APP });
    const ops = await json(await server.api(`/api/operations/?board_id=${board.id}&kind=app_query`));
    expect(ops.total).toBeGreaterThanOrEqual(1);
  });

  it('loads an app: unloads what holds the slot, verifies; the fingerprint, vart.conf and labels follow', async () => {
    const res = await loadApp(server, board.id, B3136_APP);
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op).toMatchObject({ kind: 'app_load', status: 'succeeded', result: { app: B3136_APP, loaded: true, slot: 0, unloaded: [B4096_APP], active: B3136_APP, dpu: { fingerprint: B3136, cores: 2 } } });
    const log = await operationLog(server, op.id);
    expect(log).toContain(`remove from slot 0 returns: 0 (Ok)`);
    expect(log).toContain(`${B3136_APP}: loaded to slot 0`);
    expect(log).toContain(`fingerprint ${B3136}`);
    expect(await fs.readFile(vartConfOf(board), 'utf8')).toBe(`firmware: ${appsDirOf(board)}/${B3136_APP}/dpu.xclbin\n`);
    expect(await boardLabels(server, board.id)).toMatchObject({ 'mm/app': B3136_APP, 'mm/dpu-fingerprint': B3136, 'mm/dpu-arch': 'DPUCZDX8G_ISA1_B3136' });
    // The board remembers which fingerprint each app showed.
    const apps = await boardApps(server, board.id);
    expect(apps.apps.find((a: { name: string }) => a.name === B4096_APP).dpu_fingerprint).toBe(B4096);
    expect(apps.apps.find((a: { name: string }) => a.name === B3136_APP).dpu_fingerprint).toBe(B3136);
  });

  it('loading the active app changes nothing', async () => {
    const op = await json(await loadApp(server, board.id, B3136_APP));
    expect(op).toMatchObject({ status: 'succeeded', result: { loaded: false, unloaded: [], active: B3136_APP } });
  });

  it('an app the board does not list: 400 app_not_found before anything runs', async () => {
    const before = (await json(await server.api(`/api/operations/?board_id=${board.id}&kind=app_load`))).total;
    const res = await loadApp(server, board.id, 'no-such-app');
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem).toMatchObject({ code: 'app_not_found', apps: expect.arrayContaining([B4096_APP]) });
    expect((await json(await server.api(`/api/operations/?board_id=${board.id}&kind=app_load`))).total).toBe(before);
  });

  it('an app without a DPU loads; xdputil then finds none (none expected: no xclbin)', async () => {
    const op = await json(await loadApp(server, board.id, PLAIN_APP));
    expect(op).toMatchObject({ status: 'succeeded', result: { app: PLAIN_APP, loaded: true, dpu: null } });
    await eventually(async () => {
      const labels = await boardLabels(server, board.id);
      expect(labels['mm/app']).toBe(PLAIN_APP);
      expect(labels['mm/dpu-fingerprint']).toBeUndefined();
    });
  });

  it('a load that fails while the tool exits 0: app_load_failed with its output', async () => {
    await addSimApp(board, { name: 'sim-broken-app', sim: { dpu: null, load: 'fail' } });
    const res = await loadApp(server, board.id, 'sim-broken-app');
    expect(res.status).toBe(502);
    const problem = await json(res);
    expect(problem.operation).toMatchObject({ kind: 'app_load', status: 'failed', error: { code: 'app_load_failed' } });
    expect(problem.operation.error.message).toContain('sim-broken-app: load Error: -1');
    expect(await operationLog(server, problem.operation.id)).toContain('load Error: -1');
  });

  it('an app whose DPU does not answer: app_load_failed (the listing alone is not enough)', async () => {
    await addSimApp(board, { name: 'sim-mute-dpu', sim: { dpu: { arch: 'DPUCZDX8G_ISA1_B4096', fingerprint: B4096 }, dpu_answers: false } });
    const problem = await json(await loadApp(server, board.id, 'sim-mute-dpu'));
    expect(problem.operation).toMatchObject({ status: 'failed', error: { code: 'app_load_failed' } });
    expect(problem.operation.error.message).toMatch(/DPU does not answer/);
  });

  it('another app that will not leave its slot: no_empty_slot', async () => {
    await addSimApp(board, { name: 'sim-sticky-app', sim: { dpu: null, unload: 'fail' } });
    expect((await json(await loadApp(server, board.id, 'sim-sticky-app'))).status).toBe('succeeded');
    const problem = await json(await loadApp(server, board.id, B4096_APP));
    expect(problem.operation).toMatchObject({ status: 'failed', error: { code: 'no_empty_slot' } });
    expect(problem.operation.error.message).toContain('sim-sticky-app still holds slot 0');
    expect(problem.operation.error.message).toContain('(Error)');
    // Unload fails the same way, and says so.
    const unload = await json(await unloadApp(server, board.id));
    expect(unload.operation).toMatchObject({ kind: 'app_unload', status: 'failed', error: { code: 'app_unload_failed' } });
    // Put the board back: the app's unload works again.
    await addSimApp(board, { name: 'sim-sticky-app', sim: { dpu: null } });
    expect((await json(await unloadApp(server, board.id))).result).toMatchObject({ unloaded: ['sim-sticky-app'], active: null });
  });

  it('a load that hangs is killed after the bound: app_load_timeout', async () => {
    await addSimApp(board, { name: 'sim-hanging-app', sim: { dpu: null, load: 'hang' } });
    const res = await loadApp(server, board.id, 'sim-hanging-app', { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const op = await operationEnded(server, (await json(res)).id);
    expect(op).toMatchObject({ status: 'failed', error: { code: 'app_load_timeout' } });
    expect(op.error.message).toMatch(/did not finish within 3 s/);
    // Killed with its process group: the board takes the next load at once.
    const next = await json(await loadApp(server, board.id, B4096_APP));
    expect(next).toMatchObject({ status: 'succeeded', result: { active: B4096_APP, dpu: { fingerprint: B4096 } } });
    expect((await getBoard(server, board.id)).status).toBe('online');
  });
});

describe('a board without dfx-mgr-client loads through xmutil; one without xdputil has no fingerprint (embedded database)', () => {
  let server: TestServer;
  let board: Board;

  beforeAll(async () => {
    server = await startTestServer('embedded');
    board = await startBoard(server, 'xmutil-board', { MM_DFX_MGR_CLIENT: '/nonexistent/dfx-mgr-client', MM_XDPUTIL: '/nonexistent/xdputil' });
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
  });

  it('lists and loads through xmutil, and reports no DPU', async () => {
    const apps = await eventually(async () => {
      const a = await boardApps(server, board.id);
      expect(a.active).toBe(B4096_APP);
      return a;
    });
    expect(apps.dpu).toBeNull();
    const labels = await boardLabels(server, board.id);
    expect(labels['mm/app']).toBe(B4096_APP);
    expect(labels['mm/dpu-fingerprint']).toBeUndefined();
    const op = await json(await loadApp(server, board.id, B3136_APP));
    expect(op).toMatchObject({ status: 'succeeded', result: { app: B3136_APP, loaded: true, dpu: null } });
    const log = await operationLog(server, op.id);
    expect(log).toContain('xmutil.mjs loadapp kv260-benchmark-b3136');
    expect(log).toContain('xdputil is not available');
  });
});
