/**
 * A PAC archive uploaded once for a rollout (docs/rollouts.md): `mm rollouts create
 * pac_install --archive FILE` hashes the file, uploads it resumably on its own (no
 * invocation) only when the server lacks it, and rolls it out to three real simulated boards;
 * each board's step pulls it over its link. A TCP proxy in front of the control plane counts
 * what the client sent: the archive's bytes once.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gzip, realPacEntries, tarArchive } from '../../packages/agent/test/pac-test-support.ts';
import { boards as boardsTable } from '../../packages/server/src/db/schema.ts';
import { cliHome, type CliHome } from '../support/cli.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import type { TestServer } from '../support/test-server.ts';
import { startBoard, startPacServer, stopBoard, type Board } from './pacs-support.ts';
import { post } from './rollouts-support.ts';

vi.setConfig({ testTimeout: 150_000, hookTimeout: 180_000 });

describe('a PAC archive rolled out to three boards, uploaded once', () => {
  let server: TestServer;
  let proxy: TcpProxy;
  let home: CliHome;
  const boards: Board[] = [];

  beforeAll(async () => {
    server = await startPacServer(realDatabaseUrl ? 'postgres' : 'embedded');
    boards.push(...(await Promise.all(['r1', 'r2', 'r3'].map((name) => startBoard(server, name, { MM_SIM_REBOOT_DELAY_MS: '300' })))));
    // Labels as people set them, on all three (the only boards of this server): the labels
    // API is another part's; the column is what the selector reads.
    await server.ctx.database.db.update(boardsTable).set({ labels: { rack: 'a' } });
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(server.url).port) });
    home = await cliHome();
  });
  afterAll(async () => {
    await home?.cleanup();
    await proxy?.close();
    await Promise.all(boards.map((b) => stopBoard(b)));
    await server?.stop();
  });

  it('uploads the archive once, installs it on every matching board, and a second rollout sends nothing', async () => {
    // About 1.5 MB, so the count below tells one upload from two (or from a re-send).
    const archive = gzip(await tarArchive(realPacEntries('big_pac', 'zcu104-big-cfg1', { bitstream: randomBytes(1_100_000).toString('base64') })));
    const file = path.join(home.dir, 'work', 'big_pac.tar.gz');
    await fs.writeFile(file, archive);
    const env = { MM_SERVER_URL: proxy.url };

    const before = proxy.up;
    const first = await home.run(['--json', 'rollouts', 'create', 'pac_install', '--archive', file, '--label', 'rack=a', '--batch-size', '2', '--follow'], env);
    expect(first.code, first.stderr).toBe(0);
    const done = JSON.parse(first.stdout) as { id: number; status: string; params: Record<string, unknown>; boards: Array<{ board_name: string; status: string }> };
    expect(done.status).toBe('succeeded');
    expect(done.params).toMatchObject({ filename: 'big_pac.tar.gz', size: archive.length });
    expect(done.boards.map((b) => [b.board_name, b.status])).toEqual([
      ['r1', 'succeeded'],
      ['r2', 'succeeded'],
      ['r3', 'succeeded'],
    ]);
    const sentFirst = proxy.up - before;
    console.log(`archive ${archive.length} bytes; the client sent ${sentFirst} bytes for the first rollout`);
    expect(sentFirst).toBeGreaterThanOrEqual(archive.length);
    expect(sentFirst).toBeLessThan(archive.length + 64 * 1024);

    for (const b of boards) {
      const q = await json(await post(server, '/api/pacs/query/', { board_id: b.id }));
      expect(q.pacs.map((p: { name: string }) => p.name)).toContain('zcu104-big-cfg1');
    }

    // The server still holds it (the rollout keeps it): a second rollout uploads nothing.
    const mark = proxy.up;
    const second = await home.run(['--json', 'rollouts', 'create', 'pac_install', '--archive', file, '--label', 'rack=a'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(proxy.up - mark).toBeLessThan(16 * 1024);
    expect(second.stderr).not.toMatch(/uploading/);
  });

  it('refuses an upload without invocation that names no sha256, and a rollout of content it lacks', async () => {
    const meta = `filename ${Buffer.from('x.tar.gz').toString('base64')}`;
    const res = await server.api('/api/uploads/', { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '10', 'upload-metadata': meta } });
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toEqual([expect.objectContaining({ field: 'sha256' })]);
    const missing = await post(server, '/api/rollouts/', { kind: 'pac_install', board_selector: { rack: 'a' }, params: { archive_sha256: 'b'.repeat(64) } });
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({ code: 'content_not_found' });
  });
});
