import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installAppArchive } from '../src/accelerator/app-archive.ts';
import { AppArchiveError } from '../src/accelerator/app-errors.ts';
import { zipArchive, type ZipEntrySpec } from '../../../test/support/zip-builder.ts';
import { gzip, listTree, tarArchive, type TarEntrySpec } from './pac-test-support.ts';

/** The files of a good app folder. */
const good = (app = 'my-app', shell: unknown = { shell_type: 'XRT_FLAT', num_slots: '1' }): Record<string, string> => ({
  [`${app}/shell.json`]: JSON.stringify(shell),
  [`${app}/${app}.bit.bin`]: 'bits',
  [`${app}/${app}.dtbo`]: 'overlay',
  [`${app}/dpu.xclbin`]: 'xclbin',
});
const tarOf = (files: Record<string, string>, extra: TarEntrySpec[] = []) => tarArchive([...Object.entries(files).map(([name, content]) => ({ name, content })), ...extra]);
const zipOf = (files: Record<string, string>, extra: ZipEntrySpec[] = []) => zipArchive([...Object.entries(files).map(([name, content]) => ({ name, content })), ...extra]);

describe('app archives (the agent installs them as strictly as PACs)', () => {
  let root: string;
  let appsDir: string;

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-app-archive-'));
    appsDir = path.join(root, 'firmware', 'xilinx');
    await fs.mkdir(appsDir, { recursive: true });
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
  });

  const install = (bytes: Buffer, opts: { maxBytes?: number } = {}) => installAppArchive(Readable.from([bytes]), { appsDir, ...opts });
  const refused = async (bytes: Buffer, problem: string, reason: RegExp) => {
    const before = await listTree(root);
    const err = await install(bytes).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppArchiveError);
    expect((err as AppArchiveError).problem).toBe(problem);
    expect((err as AppArchiveError).message).toMatch(reason);
    // Nothing left anywhere: not in the apps folder, not in the staging folder beside it.
    expect(await listTree(root)).toEqual(before);
  };

  it.each([
    ['tar', async () => tarOf(good())],
    ['tar.gz', async () => gzip(await tarOf(good()))],
    ['zip', async () => zipOf(good())],
  ])('installs a %s of one app folder', async (_kind, build) => {
    const installed = await install(await build());
    expect(installed).toMatchObject({ app: 'my-app', files: 4, shellType: 'XRT_FLAT', replaced: false });
    expect((await fs.readdir(path.join(appsDir, 'my-app'))).sort()).toEqual(['dpu.xclbin', 'my-app.bit.bin', 'my-app.dtbo', 'shell.json']);
    expect(await fs.readdir(path.dirname(appsDir))).toEqual(['xilinx']);
  });

  it('replaces an app of the same name only once the new one is complete', async () => {
    await install(await tarOf(good()));
    await fs.writeFile(path.join(appsDir, 'my-app', 'old-file'), 'old');
    const installed = await install(await tarOf({ ...good(), 'my-app/accel.json': '{"accel_type":"XRT_PL_DFX"}' }));
    expect(installed.replaced).toBe(true);
    expect((await fs.readdir(path.join(appsDir, 'my-app'))).sort()).toEqual(['accel.json', 'dpu.xclbin', 'my-app.bit.bin', 'my-app.dtbo', 'shell.json']);
    // A refused archive leaves the installed one as it was.
    await refused(await tarOf({ ...good(), 'my-app/shell.json': '{"shell_type":"NOPE"}' }), 'bad_shell_json', /NOPE/);
    expect(await fs.readFile(path.join(appsDir, 'my-app', 'accel.json'), 'utf8')).toContain('XRT_PL_DFX');
  });

  it.each<[string, () => Promise<Buffer>, string, RegExp]>([
    ['an absolute path (tar)', () => tarOf(good(), [{ name: '/tmp/evil', content: 'x' }]), 'unsafe_path', /absolute/],
    ['a ".." segment (tar)', () => tarOf(good(), [{ name: 'my-app/../../evil', content: 'x' }]), 'unsafe_path', /\.\./],
    ['a symbolic link (tar)', () => tarOf(good(), [{ name: 'my-app/link', type: 'symlink', linkname: '/etc/passwd' }]), 'link', /symbolic link/],
    ['a hard link (tar)', () => tarOf(good(), [{ name: 'my-app/hard', type: 'link', linkname: 'my-app/shell.json' }]), 'link', /hard link/],
    ['a device (tar)', () => tarOf(good(), [{ name: 'my-app/null', type: 'character-device', devmajor: 1, devminor: 3 }]), 'special_file', /device/],
    ['a fifo (tar)', () => tarOf(good(), [{ name: 'my-app/pipe', type: 'fifo' }]), 'special_file', /fifo/],
    ['two top-level folders', () => tarOf({ ...good('one'), ...good('two') }), 'layout', /more than one top-level/],
    ['a file at the top level', () => tarOf({ 'shell.json': '{}' }), 'layout', /top level/],
    ['a hidden app folder', () => tarOf(good('.hidden')), 'layout', /hidden/],
    ['no shell.json', () => tarOf({ 'my-app/my-app.bit.bin': 'b', 'my-app/my-app.dtbo': 'o' }), 'missing_file', /shell\.json/],
    ['no bitstream', () => tarOf({ 'my-app/shell.json': '{"shell_type":"XRT_FLAT"}', 'my-app/my-app.dtbo': 'o' }), 'missing_file', /bitstream/],
    ['no overlay', () => tarOf({ 'my-app/shell.json': '{"shell_type":"XRT_FLAT"}', 'my-app/my-app.bit.bin': 'b' }), 'missing_file', /overlay/],
    ['a shell.json that is not JSON', () => tarOf({ ...good(), 'my-app/shell.json': '{ shell_type: XRT_FLAT' }), 'bad_shell_json', /not valid JSON/],
    ['an unknown shell_type', () => tarOf(good('my-app', { shell_type: 'MAGIC' })), 'bad_shell_json', /MAGIC/],
    ['a PL_DFX shell without slots', () => tarOf(good('my-app', { shell_type: 'PL_DFX' })), 'bad_shell_json', /num_pl_slots/],
    ['an accel.json that is not an object', () => tarOf({ ...good(), 'my-app/accel.json': '[1,2]' }), 'bad_accel_json', /not a JSON object/],
    ['a ".." segment (zip)', () => Promise.resolve(zipOf(good(), [{ name: 'my-app/../../evil', content: 'x' }])), 'unsafe_path', /\.\./],
    ['an absolute path (zip)', () => Promise.resolve(zipOf(good(), [{ name: '/tmp/evil', content: 'x' }])), 'unsafe_path', /absolute/],
    ['a backslash (zip)', () => Promise.resolve(zipOf(good(), [{ name: 'my-app\\..\\evil', content: 'x' }])), 'unsafe_path', /backslash/],
    ['a symbolic link (zip)', () => Promise.resolve(zipOf(good(), [{ name: 'my-app/link', content: '/etc/passwd', unixMode: 0o120777 }])), 'link', /symbolic link/],
    ['a truncated zip', () => Promise.resolve(zipOf(good()).subarray(0, 120)), 'truncated', /damaged|truncated/],
    ['a truncated tar', async () => (await tarOf(good())).subarray(0, 1200), 'truncated', /truncated/],
    ['a gzip of no tar', () => Promise.resolve(gzip(Buffer.from('hello, no tar in here\n'.repeat(50)))), 'not_an_archive', /tar/],
    ['an empty file', () => Promise.resolve(Buffer.alloc(0)), 'empty', /empty/],
  ])('refuses %s, leaving nothing', async (_what, build, problem, reason) => {
    await refused(await build(), problem, reason);
  });

  it('refuses an archive past the size bound', async () => {
    const big = await tarOf({ ...good(), 'my-app/big.bin': 'x'.repeat(64 * 1024) });
    const err = await install(big, { maxBytes: 32 * 1024 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ problem: 'too_large' });
    expect(await fs.readdir(appsDir)).toEqual([]);
  });
});
