import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzip, realPacEntries, tarArchive, type TarEntrySpec } from '../../packages/agent/test/pac-test-support.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { boardFiles, contentFiles, eventually, getBoard, installPac, postJson, startBoard, startPacServer, stopBoard, type Board } from './pacs-support.ts';

/**
 * Row 12 with hostile archives, through the whole path (multipart upload → server → link →
 * agent): each is refused with 400 `invalid_pac_archive` and the agent's reason, and nothing
 * is written on the board, inside MM_PAC_DIR or around it, nor kept on the server.
 * (The agent's own tests cover more variants of each rule; these prove the wiring.)
 */
describe('PAC install refuses hostile archives, end to end (embedded database)', () => {
  let server: TestServer;
  let board: Board;
  /** A folder outside the board's, where absolute paths point. */
  let outside: string;

  beforeAll(async () => {
    server = await startPacServer('embedded');
    board = await startBoard(server, 'pac-archive-board');
    outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-pac-outside-'));
    // The simulated xlnx-config seeds the board on its first run: let that happen first.
    expect((await postJson(server, '/api/pacs/query/', {})).status).toBe(200);
  });
  afterAll(async () => {
    await stopBoard(board);
    await server?.stop();
    if (outside) await fs.rm(outside, { recursive: true, force: true });
  });

  /** A good PAC first (its files get written to staging before the bad entry comes), then the bad entry. */
  const goodThen = (...bad: TarEntrySpec[]): TarEntrySpec[] => [...realPacEntries('evil-pac', 'zcu104-evil-cfg1'), ...bad];
  const tag = () => randomBytes(4).toString('hex');

  const cases: Array<[string, () => Promise<Buffer>, RegExp]> = [
    ['an absolute path', async () => gzip(await tarArchive(goodThen({ name: path.join(outside, `abs-${tag()}.txt`), content: 'evil' }))), /absolute/i],
    ['a ".." segment', async () => gzip(await tarArchive(goodThen({ name: `evil-pac/../../../evil-${tag()}.txt`, content: 'evil' }))), /\.\./],
    ['a symbolic link', async () => tarArchive(goodThen({ name: 'evil-pac/link', type: 'symlink', linkname: outside })), /symbolic link/i],
    ['a hard link', async () => tarArchive(goodThen({ name: 'evil-pac/hard', type: 'link', linkname: 'evil-pac/hwconfig/cfg1/manifest.yaml' })), /hard link/i],
    ['a character device', async () => tarArchive(goodThen({ name: 'evil-pac/null', type: 'character-device', devmajor: 1, devminor: 3 })), /device/i],
    ['a fifo', async () => tarArchive(goodThen({ name: 'evil-pac/pipe', type: 'fifo' })), /fifo/i],
    ['two top-level folders', async () => gzip(await tarArchive([...realPacEntries('one-pac', 'one-cfg'), ...realPacEntries('two-pac', 'two-cfg')])), /top-level/i],
    [
      'no manifest.yaml',
      async () => gzip(await tarArchive([{ name: 'bare-pac/' }, { name: 'bare-pac/hwconfig/cfg1/zcu104/system.bit', content: 'bits\n' }])),
      /manifest\.yaml/,
    ],
    ['a file that is neither tar nor gzip', async () => randomBytes(4096), /tar|gzip|archive/i],
    ['a gzip stream that holds no tar', async () => gzip(Buffer.from('just some text, not a tar archive\n'.repeat(40))), /tar|archive/i],
    ['an empty file', async () => Buffer.alloc(0), /empty/i],
  ];

  it.each(cases)('%s: 400 invalid_pac_archive, nothing written, the upload not kept', async (_what, build, reason) => {
    const before = await boardFiles(board);
    const outsideBefore = await fs.readdir(outside);
    const bootId = (await getBoard(server, board.id)).boot_id;

    const res = await installPac(server, await build(), { boardId: board.id });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await json(res);
    expect(problem).toMatchObject({ status: 400, code: 'invalid_pac_archive' });
    expect(problem.detail).toMatch(reason);
    expect(problem.operation).toMatchObject({ kind: 'pac_install', status: 'failed', error: { code: 'invalid_pac_archive' } });

    expect(await boardFiles(board)).toEqual(before);
    expect(await fs.readdir(outside)).toEqual(outsideBefore);
    await eventually(async () => expect(await contentFiles(server)).toEqual([]));
    expect(await getBoard(server, board.id)).toMatchObject({ status: 'online', boot_id: bootId });
  });

  it('and still installs a good archive afterwards', async () => {
    const res = await installPac(server, gzip(await tarArchive(realPacEntries('good-pac', 'zcu104-good-cfg1'))));
    expect(res.status).toBe(201);
    expect((await json(res)).pacs.map((p: { name: string }) => p.name)).toContain('zcu104-good-cfg1');
    expect((await fs.readdir(board.pacDir)).sort()).toEqual(['good-pac', 'sim-sample-pac']);
  });
});
