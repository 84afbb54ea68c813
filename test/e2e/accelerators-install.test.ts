import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzip, listTree, tarArchive, type TarEntrySpec } from '../../packages/agent/test/pac-test-support.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { zipArchive } from '../support/zip-builder.ts';
import { contentFiles } from './pacs-support.ts';
import { appFiles, appsDirOf, boardApps, eventually, getBoard, installApp, loadApp, startBoard, stopBoard, type Board } from './accelerators-support.ts';

/**
 * App install end to end (multipart upload → server → link → agent): good archives (tar.gz,
 * zip) land under MM_APPS_DIR atomically and the board lists and loads them; hostile ones are
 * refused with 400 `invalid_app_archive` and the agent's reason, and nothing is written on the
 * board (in its apps folder or around it) nor kept on the server. The agent's own tests
 * (packages/agent/test/app-archive.unit.test.ts) cover every rule; these prove the wiring.
 */
describe('app install, end to end (embedded database)', () => {
  let server: TestServer;
  let board: Board;
  let outside: string;

  const entries = (app: string, files: Record<string, string>): TarEntrySpec[] => Object.entries(files).map(([name, content]) => ({ name: `${app}/${name}`, content }));
  const good = (app: string) => appFiles({ name: app, sim: { dpu: { arch: 'DPUCZDX8G_ISA1_B512', fingerprint: '0x101000016010200', frequency_mhz: 200, cores: 1 } } });
  /** What must not change: the simulated board's folder (its GPIO lines aside) and the agent folder's top level. */
  const boardFiles = async () => {
    const simulated = path.join(board.agent.agentDir, 'simulated-board');
    return [...(await fs.readdir(board.agent.agentDir)).sort(), ...(await listTree(simulated)).filter((l) => !l.startsWith('gpio/') && !l.startsWith('dfx-mgr-sim-state'))];
  };

  beforeAll(async () => {
    server = await startTestServer('embedded');
    board = await startBoard(server, 'install-board');
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-app-outside-'));
    await eventually(async () => expect((await boardApps(server, board.id)).active).not.toBeNull());
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
    if (outside) await fs.rm(outside, { recursive: true, force: true });
  });

  it('installs a tar.gz of an app folder; the board lists it and loads it; its DPU shows', async () => {
    const res = await installApp(server, gzip(await tarArchive(entries('custom-b512', good('custom-b512')))), { boardId: board.id, filename: 'custom-b512.tar.gz' });
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op).toMatchObject({ kind: 'app_install', status: 'succeeded', result: { app: 'custom-b512', listed: true, shell_type: 'XRT_FLAT', replaced: false } });
    expect(op.result.apps.map((a: { name: string }) => a.name)).toContain('custom-b512');
    expect((await fs.readdir(path.join(appsDirOf(board), 'custom-b512'))).sort()).toEqual(['custom-b512.bit.bin', 'custom-b512.dtbo', 'dpu.xclbin', 'shell.json', 'sim.json']);
    const loaded = await json(await loadApp(server, board.id, 'custom-b512'));
    expect(loaded).toMatchObject({ status: 'succeeded', result: { active: 'custom-b512', dpu: { arch: 'DPUCZDX8G_ISA1_B512', fingerprint: '0x101000016010200' } } });
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
  });

  it('installs a zip of an app folder', async () => {
    const files = good('zipped-app');
    const res = await installApp(server, zipArchive(Object.entries(files).map(([name, content]) => ({ name: `zipped-app/${name}`, content }))), { boardId: board.id, filename: 'zipped-app.zip' });
    expect(res.status).toBe(200);
    expect((await json(res)).result).toMatchObject({ app: 'zipped-app', listed: true });
  });

  const tag = () => Math.random().toString(16).slice(2, 10);
  const cases: Array<[string, () => Promise<Buffer>, RegExp]> = [
    ['an absolute path', async () => gzip(await tarArchive([...entries('evil-app', good('evil-app')), { name: path.join(outside, `abs-${tag()}`), content: 'evil' }])), /absolute/],
    ['a ".." segment', async () => tarArchive([...entries('evil-app', good('evil-app')), { name: `evil-app/../../../evil-${tag()}`, content: 'evil' }]), /\.\./],
    ['a symbolic link out', async () => tarArchive([...entries('evil-app', good('evil-app')), { name: 'evil-app/firmware.bin', type: 'symlink', linkname: outside }]), /symbolic link/],
    ['a ".." segment in a zip', async () => zipArchive([...Object.entries(good('evil-app')).map(([n, content]) => ({ name: `evil-app/${n}`, content })), { name: `evil-app/../../evil-${tag()}`, content: 'evil' }]), /\.\./],
    ['a link in a zip', async () => zipArchive([...Object.entries(good('evil-app')).map(([n, content]) => ({ name: `evil-app/${n}`, content })), { name: 'evil-app/x', content: outside, unixMode: 0o120777 }]), /symbolic link/],
    ['a shell.json of an unknown shell_type', async () => tarArchive(entries('odd-app', { ...good('odd-app'), 'shell.json': '{"shell_type":"MYSTERY"}' })), /shell_type/],
    ['no overlay', async () => tarArchive(entries('bare-app', { 'shell.json': '{"shell_type":"XRT_FLAT"}', 'bare-app.bit.bin': 'b' })), /overlay/],
    ['neither tar nor zip', async () => Buffer.from('this is not an archive of any kind\n'.repeat(100)), /tar|zip|archive/],
  ];

  it.each(cases)('%s: 400 invalid_app_archive, nothing written, the upload not kept', async (_what, build, reason) => {
    const before = await boardFiles();
    const outsideBefore = await fs.readdir(outside);
    const res = await installApp(server, await build(), { boardId: board.id });
    expect(res.status).toBe(400);
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code: 'invalid_app_archive' });
    expect(problem.detail).toMatch(reason);
    expect(problem.operation).toMatchObject({ kind: 'app_install', status: 'failed', error: { code: 'invalid_app_archive' } });
    expect(await boardFiles()).toEqual(before);
    expect(await fs.readdir(outside)).toEqual(outsideBefore);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
    expect((await getBoard(server, board.id)).status).toBe('online');
  });
});
