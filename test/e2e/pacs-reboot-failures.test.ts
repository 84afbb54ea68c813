import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { eventually, getBoard, postJson, SAMPLE_PAC, startBoard, startPacServer, stopBoard, type Board } from './pacs-support.ts';

/**
 * Row 11 when the reboot goes wrong, on simulated boards told how to misbehave
 * (MM_SIM_REBOOT_*): the activation fails with a clear code and the board's state is true.
 */
describe('PAC activation whose reboot goes wrong (embedded database)', () => {
  let server: TestServer;
  let board: Board | undefined;

  beforeAll(async () => {
    // Short, so the board that never comes back fails the operation soon.
    server = await startPacServer('embedded', { MM_REBOOT_TIMEOUT_S: '4' });
  });
  afterEach(async () => {
    await stopBoard(board);
    board = undefined;
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function activateSample(b: Board) {
    const res = await postJson(server, '/api/pacs/activate/', { board_id: b.id, pac: SAMPLE_PAC });
    const body = await json(res);
    return { status: res.status, body };
  }

  it('a board that never comes back: 502 reboot_timeout after MM_REBOOT_TIMEOUT_S, the board offline', async () => {
    board = await startBoard(server, 'never-back', { MM_SIM_REBOOT_NEVER_RETURN: '1' });
    const before = await getBoard(server, board.id);
    const { status, body } = await activateSample(board);
    expect(status).toBe(502);
    expect(body).toMatchObject({ code: 'operation_failed', operation: { kind: 'pac_activate', status: 'failed', error: { code: 'reboot_timeout' } } });
    expect(body.operation.error.message).toMatch(/did not come back within 4 s/);
    expect(await getBoard(server, board.id)).toMatchObject({ status: 'offline', boot_id: before.boot_id, active_pac: null });

    // Work for it is refused while it is gone, rather than queued forever.
    expect((await postJson(server, '/api/pacs/query/', { board_id: board.id })).status).toBe(503);
  });

  it('a board that comes back with the same boot id: 502 reboot_not_observed, the board online again', async () => {
    board = await startBoard(server, 'same-boot', { MM_SIM_REBOOT_SAME_BOOT_ID: '1', MM_SIM_REBOOT_DELAY_MS: '200' });
    const before = await getBoard(server, board.id);
    const { status, body } = await activateSample(board);
    expect(status).toBe(502);
    expect(body.operation.error).toMatchObject({ code: 'reboot_not_observed' });
    expect(body.operation.error.message).toContain(before.boot_id);

    const after = await getBoard(server, board.id);
    expect(after).toMatchObject({ status: 'online', boot_id: before.boot_id });
    // Its active_pac is what the board reports now (xlnx-config did mark the PAC for the next boot).
    const query = await postJson(server, '/api/pacs/query/', { board_id: board.id });
    expect(query.status).toBe(200);
    expect((await getBoard(server, board.id)).active_pac).toBe((await json(query)).active);
  });

  it('a board that comes back with another PAC active: 502 pac_not_active, online with its new boot id', async () => {
    board = await startBoard(server, 'fallback', { MM_SIM_REBOOT_FALLBACK: '1', MM_SIM_REBOOT_DELAY_MS: '200' });
    const before = await getBoard(server, board.id);
    const { status, body } = await activateSample(board);
    expect(status).toBe(502);
    expect(body.operation.error).toMatchObject({ code: 'pac_not_active' });
    expect(body.operation.result).toMatchObject({ pac: SAMPLE_PAC, active: null });
    expect(body.operation.result.boot_id).not.toBe(before.boot_id);

    await eventually(async () => expect((await getBoard(server, board!.id)).status).toBe('online'));
    const after = await getBoard(server, board.id);
    expect(after).toMatchObject({ active_pac: null, boot_id: body.operation.result.boot_id });
  });
});
