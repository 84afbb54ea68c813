import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boards } from '../../packages/server/src/db/schema.ts';
import { gzip, realPacEntries, tarArchive } from '../../packages/agent/test/pac-test-support.ts';
import { createInvocation, uploadFile } from '../../packages/server/test/invocations-support.ts';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import {
  contentFiles,
  eventually,
  getBoard,
  getOperation,
  installPac,
  operationEnded,
  postJson,
  SAMPLE_PAC,
  startBoard,
  startPacServer,
  stopBoard,
  type Board,
} from './pacs-support.ts';

/**
 * PACs end to end (docs/api.md, "PACs"): the real control plane and a real
 * `mm-agent --simulate` process, whose simulated xlnx-config keeps PAC folders on disk and
 * whose simulated reboot drops the link, changes the boot id and comes back.
 */
// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('PACs on a simulated board (%s database)', (kind) => {
  let server: TestServer;
  let board: Board;

  beforeAll(async () => {
    server = await startPacServer(kind, { MM_REBOOT_TIMEOUT_S: '60' });
    board = await startBoard(server, 'pac-board');
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
  });

  it('queries the PACs (row 10) as a pac_query operation, synchronously and asynchronously', async () => {
    // The only board: board_id may be left out, the body too.
    const res = await server.api('/api/pacs/query/', { method: 'POST' });
    expect(res.status).toBe(200);
    const answer = await json(res);
    expect(answer).toEqual({
      board_id: board.id,
      active: null,
      pacs: [{ name: SAMPLE_PAC, active: false, board: 'zcu104', assets_dir: path.join(board.pacDir, 'sim-sample-pac', 'hwconfig', 'cfg1', 'zcu104') }],
    });

    const ops = await json(await server.api(`/api/operations/?kind=pac_query&board_id=${board.id}`));
    expect(ops.total).toBe(1);
    expect(ops.operations[0]).toMatchObject({ kind: 'pac_query', status: 'succeeded', result: answer });

    const async = await postJson(server, '/api/pacs/query/', { board_id: board.id }, { prefer: 'respond-async' });
    expect(async.status).toBe(202);
    const op = await json(async);
    expect(async.headers.get('location')).toBe(`/api/operations/${op.id}/`);
    expect(op).toMatchObject({ kind: 'pac_query', board_id: board.id });
    expect(await operationEnded(server, op.id)).toMatchObject({ status: 'succeeded', result: answer });
  });

  it('a query asked while the same one still waits last in the board\'s queue joins it; one asked after other work is its own', async () => {
    const invocation = await createInvocation(server, 'keeps-the-board-busy');
    await uploadFile(server, invocation, 'parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 60 })));
    const busy = await json(await postJson(server, `/api/invocations/${invocation}/execute/`, { board_id: board.id }, { prefer: 'respond-async' }));
    await eventually(async () => expect((await getOperation(server, busy.id)).status).toBe('running'), 30_000);
    const queries = async () => (await json(await server.api(`/api/operations/?kind=pac_query&board_id=${board.id}`))).total as number;
    const before = await queries();

    // Three asks at once (a double click and a page visit): one operation answers them all.
    const asks = await Promise.all([1, 2, 3].map(() => postJson(server, '/api/pacs/query/', { board_id: board.id }, { prefer: 'respond-async' })));
    expect(asks.map((r) => r.status)).toEqual([202, 202, 202]);
    const ids = new Set((await Promise.all(asks.map((r) => json(r)))).map((op) => op.id as number));
    expect(ids.size).toBe(1);
    const [first] = [...ids] as [number];
    expect(await queries()).toBe(before + 1);

    // Work queued after it: a later ask must see what that work did, so it is a query of its own.
    const later = await json(await postJson(server, `/api/invocations/${invocation}/execute/`, { board_id: board.id }, { prefer: 'respond-async' }));
    const after = await json(await postJson(server, '/api/pacs/query/', { board_id: board.id }, { prefer: 'respond-async' }));
    expect(after.id).not.toBe(first);
    expect(await queries()).toBe(before + 2);

    for (const id of [busy.id, later.id]) expect((await server.api(`/api/operations/${id}/cancel/`, { method: 'POST' })).status).toBeLessThan(300);
    expect(await operationEnded(server, first)).toMatchObject({ status: 'succeeded', result: { board_id: board.id } });
    expect(await operationEnded(server, after.id)).toMatchObject({ status: 'succeeded' });
    // Its files go: a later test counts what the content store holds.
    expect((await server.api(`/api/invocations/${invocation}/`, { method: 'DELETE' })).status).toBeLessThan(300);
  });

  it('keeps the last list a query took: GET /api/boards/<id>/pacs/ answers it with its age, queues nothing, and says when it is stale', async () => {
    const queries = async () => (await json(await server.api(`/api/operations/?kind=pac_query&board_id=${board.id}`))).total as number;
    const before = await queries();
    const stored = async () => json(await server.api(`/api/boards/${board.id}/pacs/`));
    const fresh = await stored();
    expect(fresh).toMatchObject({ board_id: board.id, active: null, stale: false, stale_reason: null, query_operation_id: null });
    expect(fresh.pacs).toEqual([expect.objectContaining({ name: SAMPLE_PAC, board: 'zcu104' })]);
    expect(Date.parse(fresh.listed_at)).not.toBeNaN();
    expect(fresh.age_s).toBeGreaterThanOrEqual(0);
    expect(await queries()).toBe(before);

    // The board connected again after that list was taken: it may have changed meanwhile. (Its only board: no `where`.)
    const db = server.ctx.database.db;
    const listedAt = new Date(fresh.listed_at);
    await db.update(boards).set({ connectedAt: new Date(listedAt.getTime() + 1000) });
    expect(await stored()).toMatchObject({ stale: true, stale_reason: 'listed before the board last connected' });
    // A day old.
    await db.update(boards).set({ connectedAt: new Date(listedAt.getTime() - 25 * 3600_000), pacsListedAt: new Date(listedAt.getTime() - 25 * 3600_000) });
    expect(await stored()).toMatchObject({ stale: true, stale_reason: 'listed more than 24 h ago' });
    // A query makes it fresh again.
    expect((await server.api('/api/pacs/query/', { method: 'POST' })).status).toBe(200);
    expect(await stored()).toMatchObject({ stale: false, pacs: fresh.pacs });
    expect((await server.api('/api/boards/00000000-0000-4000-8000-000000000000/pacs/')).status).toBe(404);
  });

  it('installs a PAC (row 12), which the query then lists; the upload is not kept', async () => {
    const archive = gzip(await tarArchive(realPacEntries('lab_pac', 'zcu104-lab-cfg1')));
    const res = await installPac(server, archive, { boardId: board.id, filename: 'lab_pac.tar.gz' });
    expect(res.status).toBe(201);
    const answer = await json(res);
    expect(answer).toMatchObject({ board_id: board.id, pac: 'lab_pac', active: null });
    expect(answer.pacs.map((p: { name: string }) => p.name)).toEqual(['zcu104-lab-cfg1', SAMPLE_PAC]);
    expect(await fs.readFile(path.join(board.pacDir, 'lab_pac/hwconfig/cfg1/zcu104/system.bit'), 'utf8')).toBe('bitstream of zcu104-lab-cfg1\n');

    const query = await json(await postJson(server, '/api/pacs/query/', { board_id: board.id }));
    expect(query.pacs).toEqual(answer.pacs);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));

    // A plain .tar works as well, and replaces the PAC of the same folder.
    const tar = await tarArchive(realPacEntries('lab_pac', 'zcu104-lab-cfg1', { bitstream: 'version 2\n' }));
    const again = await installPac(server, tar, { boardId: board.id, filename: 'lab_pac.tar' });
    expect(again.status).toBe(201);
    expect(await fs.readFile(path.join(board.pacDir, 'lab_pac/hwconfig/cfg1/zcu104/system.bit'), 'utf8')).toBe('version 2\n');
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('refuses to activate a PAC the board does not list: 400, nothing run, no reboot', async () => {
    const before = await getBoard(server, board.id);
    const bootIdFile = await fs.readFile(path.join(board.agent.agentDir, 'simulated-board', 'boot_id'), 'utf8');
    const res = await postJson(server, '/api/pacs/activate/', { board_id: board.id, pac: 'no-such-pac' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code: 'pac_not_found', pacs: ['zcu104-lab-cfg1', SAMPLE_PAC] });
    expect(problem.detail).toContain('no-such-pac');

    expect((await json(await server.api('/api/operations/?kind=pac_activate'))).total).toBe(0);
    const after = await getBoard(server, board.id);
    expect(after).toMatchObject({ status: 'online', boot_id: before.boot_id, active_pac: before.active_pac });
    expect(await fs.readFile(path.join(board.agent.agentDir, 'simulated-board', 'boot_id'), 'utf8')).toBe(bootIdFile);
    expect((await json(await postJson(server, '/api/pacs/query/', { board_id: board.id }))).active).toBeNull();
    expect(board.agent.log.some((line) => line.includes('simulated reboot'))).toBe(false);
  });

  it('activates a PAC (row 11): rebooting, back with a new boot id and the PAC active; work queued meanwhile runs after', async () => {
    const before = await getBoard(server, board.id);
    const res = await postJson(server, '/api/pacs/activate/', { board_id: board.id, pac: 'zcu104-lab-cfg1' }, { prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const activation = await json(res);
    expect(activation).toMatchObject({ kind: 'pac_activate', board_id: board.id });

    await eventually(async () => expect((await getBoard(server, board.id)).status).toBe('rebooting'), 20_000, 20);
    // Once the board is off the link, an unknown PAC cannot be checked at once: that request
    // waits its turn, and the agent's own check refuses it then (still 400, still no reboot).
    await eventually(() => expect(server.ctx.agents.connection(board.id)).toBeUndefined(), 20_000, 10);
    const unknownWhileRebooting = postJson(server, '/api/pacs/activate/', { board_id: board.id, pac: 'no-such-pac' });
    await eventually(async () => expect((await json(await server.api(`/api/operations/?kind=pac_activate&status=queued`))).total).toBe(1));

    // An execute asked for while the board reboots waits for it.
    const invocation = await createInvocation(server, 'after-reboot');
    await uploadFile(server, invocation, 'parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 0 })));
    const exec = await postJson(server, `/api/invocations/${invocation}/execute/`, { board_id: board.id }, { prefer: 'respond-async' });
    expect(exec.status).toBe(202);
    const execution = await json(exec);
    expect((await getOperation(server, execution.id)).status).toBe('queued');

    const activated = await operationEnded(server, activation.id);
    expect(activated).toMatchObject({ status: 'succeeded', error: null });
    expect(activated.result).toMatchObject({ board_id: board.id, pac: 'zcu104-lab-cfg1', active: 'zcu104-lab-cfg1', previous_boot_id: before.boot_id });
    expect(activated.result.boot_id).not.toBe(before.boot_id);

    const after = await getBoard(server, board.id);
    expect(after).toMatchObject({ status: 'online', active_pac: 'zcu104-lab-cfg1', boot_id: activated.result.boot_id });

    const refused = await unknownWhileRebooting;
    expect(refused.status).toBe(400);
    const problem = await json(refused);
    expect(problem).toMatchObject({ code: 'pac_not_found', operation: { kind: 'pac_activate', status: 'failed', error: { code: 'pac_not_found' } } });
    expect(Date.parse(problem.operation.started_at)).toBeGreaterThanOrEqual(Date.parse(activated.finished_at));

    const executed = await operationEnded(server, execution.id);
    expect(executed.status).toBe('succeeded');
    expect(Date.parse(executed.started_at)).toBeGreaterThanOrEqual(Date.parse(problem.operation.finished_at));
    expect((await getBoard(server, board.id)).boot_id).toBe(activated.result.boot_id);

    const log = await (await server.api(`/api/operations/${activation.id}/log/`)).text();
    expect(log).toContain('Activating assets for  zcu104-lab-cfg1 on the zcu104');
    expect(log).toContain('the board is back');
  });

  it('activates synchronously: 200 with the operation once the board is back with the PAC active', async () => {
    const before = await getBoard(server, board.id);
    const res = await postJson(server, '/api/pacs/activate/', { board_id: board.id, pac: SAMPLE_PAC });
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op).toMatchObject({ kind: 'pac_activate', status: 'succeeded', result: { pac: SAMPLE_PAC, active: SAMPLE_PAC } });
    const after = await getBoard(server, board.id);
    expect(after).toMatchObject({ status: 'online', active_pac: SAMPLE_PAC });
    expect(after.boot_id).not.toBe(before.boot_id);
  });

  it('ends a run the reboot interrupts as a real reboot would (agent_restarted), and runs the next one', async () => {
    const invocation = await createInvocation(server, 'interrupted');
    await uploadFile(server, invocation, 'parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 60 })));
    const exec = await postJson(server, `/api/invocations/${invocation}/execute/`, { board_id: board.id }, { prefer: 'respond-async' });
    const execution = await json(exec);
    await eventually(async () => {
      const log = await (await server.api(`/api/operations/${execution.id}/log/`)).text();
      expect(log).toContain('progress');
    }, 30_000);
    // What board.reboot does, while the runner runs (through the API the reboot waits its turn).
    expect(await server.ctx.agents.call(board.id, 'board.reboot', {})).toEqual({ accepted: true });
    const ended = await operationEnded(server, execution.id);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'agent_restarted' } });
    await eventually(async () => expect((await getBoard(server, board.id)).status).toBe('online'), 30_000);

    await uploadFile(server, invocation, 'parameter', 'params.json', Buffer.from(JSON.stringify({ duration_s: 0 })));
    const next = await postJson(server, `/api/invocations/${invocation}/execute/`, { board_id: board.id });
    expect(next.status).toBe(200);
    expect((await json(next)).status).toBe('succeeded');
  });
});
