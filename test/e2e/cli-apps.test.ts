/**
 * `mm apps ls|load|unload|install` end to end: the client's bundle as a process against the
 * real control plane and real `mm-agent --simulate` boards with their simulated dfx-mgr-client
 * and xdputil (docs/accelerators.md); and the rollout kinds `app_install` and `app_load`.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzip, tarArchive } from '../../packages/agent/test/pac-test-support.ts';
import { cliHome, type CliHome } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { zipArchive } from '../support/zip-builder.ts';
import { appFiles, B3136, B3136_APP, B4096_APP, boardApps, eventually, startBoard, stopBoard, type Board } from './accelerators-support.ts';

describe('mm apps, end to end (embedded database)', () => {
  let server: TestServer;
  let board: Board;
  let second: Board;
  let cli: CliHome;
  let scratch: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-cli-apps-'));
    server = await startTestServer('embedded');
    board = await startBoard(server, 'apps-cli-board', { MM_APP_LOAD_TIMEOUT_S: '3' });
    await eventually(async () => expect((await boardApps(server, board.id)).active).toBe(B4096_APP));
    cli = await cliHome();
    env = { MM_SERVER_URL: server.url };
  }, 300_000);
  afterAll(async () => {
    await stopBoard(second);
    await stopBoard(board);
    await cli?.cleanup();
    await server?.stop();
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  it('mm apps ls: the apps, the active one, the DPU', async () => {
    const r = await cli.run(['apps', 'ls'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${B4096_APP} +XRT_FLAT +yes +0 `, 'm'));
    expect(r.stdout).toContain('DPU: DPUCZDX8G_ISA1_B4096 0x101000016010407, Vitis AI 2.5.0');
    const asJson = JSON.parse((await cli.run(['apps', 'ls', '--board', 'apps-cli-board', '--refresh', '--json'], env)).stdout);
    expect(asJson).toMatchObject({ board_id: board.id, active: B4096_APP });
  }, 120_000);

  it('mm apps load: follows the load, then the board reports the new DPU; an unknown app exits 1 with the reason', async () => {
    const r = await cli.run(['apps', 'load', B3136_APP], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${B3136_APP} is loaded in slot 0; DPU ${B3136}.`);
    expect(r.stderr).toContain(`${B3136_APP}: loaded to slot 0`);
    const bad = await cli.run(['apps', 'load', 'no-such-app'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/lists no app named "no-such-app"/);
  }, 120_000);

  it('mm apps install and unload', async () => {
    const archive = path.join(scratch, 'cli-app.tar.gz');
    const files = appFiles({ name: 'cli-app', sim: { dpu: null } });
    await fs.writeFile(archive, gzip(await tarArchive(Object.entries(files).map(([name, content]) => ({ name: `cli-app/${name}`, content })))));
    const r = await cli.run(['apps', 'install', archive], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Installed cli-app on board ${board.id}.`);
    const unload = await cli.run(['apps', 'unload'], env);
    expect(unload.code, unload.stderr).toBe(0);
    expect(unload.stdout).toContain(`Unloaded ${B3136_APP}.`);
  }, 120_000);

  it('rollouts of kinds app_install and app_load across two boards', async () => {
    second = await startBoard(server, 'apps-cli-second');
    for (const b of [board, second]) {
      const res = await server.api(`/api/boards/${b.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ labels: { rack: 'apps' } }) });
      expect(res.status).toBe(200);
    }
    const archive = path.join(scratch, 'fleet-app.zip');
    const files = appFiles({ name: 'fleet-app', sim: { dpu: { arch: 'DPUCZDX8G_ISA1_B1024', fingerprint: '0x101000016010209' } } });
    await fs.writeFile(archive, zipArchive(Object.entries(files).map(([name, content]) => ({ name: `fleet-app/${name}`, content }))));
    const install = await cli.run(['rollouts', 'create', 'app_install', '--archive', archive, '--label', 'rack=apps', '--follow', '--json'], env);
    expect(install.code, install.stderr).toBe(0);
    const installed = JSON.parse(install.stdout) as { status: string; kind: string; boards: Array<{ status: string }> };
    expect(installed).toMatchObject({ kind: 'app_install', status: 'succeeded' });
    expect(installed.boards.map((b) => b.status)).toEqual(['succeeded', 'succeeded']);
    const load = await cli.run(['rollouts', 'create', 'app_load', '--app', 'fleet-app', '--label', 'rack=apps', '--follow', '--json'], env);
    expect(load.code, load.stderr).toBe(0);
    expect(JSON.parse(load.stdout)).toMatchObject({ kind: 'app_load', status: 'succeeded' });
    for (const b of [board, second]) {
      await eventually(async () => expect(await boardApps(server, b.id)).toMatchObject({ active: 'fleet-app', dpu: { fingerprint: '0x101000016010209' } }));
    }
  }, 240_000);
});
