import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzip, realPacEntries, tarArchive } from '../../agent/test/pac-test-support.ts';
import { json } from '../../../test/support/http.ts';
import type { TestServer } from '../../../test/support/test-server.ts';
import { contentFiles, eventually, installPac, postJson, startBoard, startPacServer, stopBoard, type Board } from '../../../test/e2e/pacs-support.ts';
import { multipart } from './invocations-support.ts';

const MAX_UPLOAD = 256 * 1024;

/**
 * Requests to the PAC routes that must be refused before anything reaches a board, and the
 * board-selection rules; the flows themselves are in test/e2e/pacs*.test.ts.
 */
describe('PAC routes: request checks (embedded database)', () => {
  let server: TestServer;
  let offlineBoard: string;
  let board: Board | undefined;

  beforeAll(async () => {
    server = await startPacServer('embedded', { MM_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
  });

  const archive = async () => gzip(await tarArchive(realPacEntries('req-pac', 'zcu104-req-cfg1')));
  const operationCount = async () => (await json(await server.api('/api/operations/'))).total as number;

  it('no board registered: 503 no_board', async () => {
    for (const res of [
      await postJson(server, '/api/pacs/query/', {}),
      await postJson(server, '/api/pacs/activate/', { pac: 'x' }),
      await installPac(server, await archive()),
    ]) {
      expect(res.status).toBe(503);
      expect((await json(res)).code).toBe('no_board');
    }
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('a registered board that is not connected: 503 board_offline, nothing started, the upload not kept', async () => {
    const res = await postJson(server, '/api/boards/', { name: 'offline-board' });
    offlineBoard = (await json(res)).id;
    for (const r of [
      await server.api('/api/pacs/query/', { method: 'POST' }),
      await postJson(server, '/api/pacs/activate/', { pac: 'x' }),
      await installPac(server, await archive(), { boardId: offlineBoard }),
    ]) {
      expect(r.status).toBe(503);
      expect(await json(r)).toMatchObject({ code: 'board_offline', board_id: offlineBoard });
    }
    expect(await operationCount()).toBe(0);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('activate: pac missing, not a string or empty → 400 validation_failed naming the field', async () => {
    for (const body of [{}, { pac: 5 }, { pac: '' }, { pac: null }, { board_id: offlineBoard, pac: ['a'] }]) {
      const res = await postJson(server, '/api/pacs/activate/', body);
      expect(res.status).toBe(400);
      const problem = await json(res);
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((e: { field: string }) => e.field)).toContain('pac');
    }
    expect(await operationCount()).toBe(0);
  });

  it('activate: not JSON → 415; malformed JSON → 400', async () => {
    const text = await server.api('/api/pacs/activate/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'pac=x' });
    expect(text.status).toBe(415);
    const bad = await server.api('/api/pacs/activate/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"pac":' });
    expect(bad.status).toBe(400);
  });

  it('board_id: not a UUID → 400 validation_failed; unknown → 404 board_not_found (all three routes)', async () => {
    const unknown = randomUUID();
    for (const [res, status] of [
      [await postJson(server, '/api/pacs/query/', { board_id: 'nope' }), 400],
      [await postJson(server, '/api/pacs/activate/', { board_id: 'nope', pac: 'x' }), 400],
      [await installPac(server, await archive(), { boardId: 'nope' }), 400],
      [await postJson(server, '/api/pacs/query/', { board_id: unknown }), 404],
      [await postJson(server, '/api/pacs/activate/', { board_id: unknown, pac: 'x' }), 404],
      [await installPac(server, await archive(), { boardId: unknown }), 404],
    ] as const) {
      expect(res.status).toBe(status);
      const problem = await json(res);
      if (status === 400) expect(problem).toMatchObject({ code: 'validation_failed', errors: [{ field: 'board_id' }] });
      else expect(problem.code).toBe('board_not_found');
    }
    expect(await operationCount()).toBe(0);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('install: no file part → 400; not multipart → 415; no boundary → 400; too large → 413; nothing kept', async () => {
    const noFile = multipart([{ name: 'board_id', value: offlineBoard }]);
    const res = await server.api('/api/pacs/install/', { method: 'POST', headers: { 'content-type': noFile.contentType }, body: noFile.body });
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'file' }] });

    const asJson = await postJson(server, '/api/pacs/install/', { file: 'x' });
    expect(asJson.status).toBe(415);
    const noBoundary = await server.api('/api/pacs/install/', { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    expect(noBoundary.status).toBe(400);

    const tooLarge = await installPac(server, Buffer.alloc(MAX_UPLOAD + 1, 1), { boardId: offlineBoard });
    expect(tooLarge.status).toBe(413);
    expect(await operationCount()).toBe(0);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('several boards and none named → 400 board_required; board_id may follow the file part', async () => {
    board = await startBoard(server, 'online-board');
    for (const res of [await postJson(server, '/api/pacs/query/', {}), await postJson(server, '/api/pacs/activate/', { pac: 'x' })]) {
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('board_required');
    }

    const { body, contentType } = multipart([
      { name: 'file', filename: 'req-pac.tar.gz', data: await archive() },
      { name: 'board_id', value: board.id },
    ]);
    const res = await server.api('/api/pacs/install/', { method: 'POST', headers: { 'content-type': contentType }, body });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ board_id: board.id, pac: 'req-pac' });
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('install with Prefer: respond-async → 202 with the operation, whose result is the answer', async () => {
    const res = await installPac(server, await archive(), { boardId: board!.id, headers: { prefer: 'respond-async' } });
    expect(res.status).toBe(202);
    const op = await json(res);
    expect(res.headers.get('location')).toBe(`/api/operations/${op.id}/`);
    const ended = await eventually(async () => {
      const current = await json(await server.api(`/api/operations/${op.id}/`));
      expect(current.status).toBe('succeeded');
      return current;
    });
    expect(ended.result).toMatchObject({ board_id: board!.id, pac: 'req-pac' });
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('the three routes are in the OpenAPI document', async () => {
    const doc = await json(await server.api('/api/openapi.json'));
    for (const p of ['/api/pacs/query/', '/api/pacs/activate/', '/api/pacs/install/']) expect(doc.paths[p]?.post).toBeDefined();
  });
});
