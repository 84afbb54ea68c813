import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installPacArchive } from '../src/pac/pac-archive.ts';
import { PacArchiveError, type PacArchiveProblem } from '../src/pac/pac-errors.ts';
import { flatPacEntries, gzip, listTree, realPacEntries, tarArchive, type TarEntrySpec } from './pac-test-support.ts';

let root: string; // the test's sandbox: pacDir's parent and a sibling "outside" folder
let pacDir: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-pac-archive-'));
  pacDir = path.join(root, 'firmware', 'xlnx-config');
  await fs.mkdir(pacDir, { recursive: true });
  await fs.mkdir(path.join(root, 'outside'));
  await fs.writeFile(path.join(root, 'outside', 'keep.txt'), 'keep\n');
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Writes the archive to a real file and installs it from a read stream of that file. */
async function installFile(archive: Buffer, options: { highWaterMark?: number; maxBytes?: number } = {}) {
  const file = path.join(os.tmpdir(), `mm-pac-upload-${randomBytes(6).toString('hex')}`);
  await fs.writeFile(file, archive);
  try {
    const source = createReadStream(file, { highWaterMark: options.highWaterMark ?? 64 * 1024 });
    return await installPacArchive(source, { pacDir, maxBytes: options.maxBytes });
  } finally {
    await fs.rm(file, { force: true });
  }
}

async function expectRefused(archive: Buffer, problem: PacArchiveProblem, options: { maxBytes?: number } = {}) {
  const before = await listTree(root);
  const error = await installFile(archive, options).then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(PacArchiveError);
  expect((error as PacArchiveError).code).toBe('invalid_pac_archive');
  expect((error as PacArchiveError).problem).toBe(problem);
  expect((error as PacArchiveError).message).not.toBe('');
  expect(await listTree(root)).toEqual(before);
  return error as PacArchiveError;
}

/** A good PAC, then one bad entry: the good files get written before the refusal. */
const goodThen = (...bad: TarEntrySpec[]): TarEntrySpec[] => [...realPacEntries('evil-pac', 'evil-cfg'), ...bad];

describe('installPacArchive refuses, leaving nothing behind', () => {
  const outside = () => path.join(root, 'outside', 'evil.txt');

  it('an absolute path', async () => {
    const error = await expectRefused(await tarArchive(goodThen({ name: outside(), content: 'evil' })), 'unsafe_path');
    expect(error.message).toMatch(/absolute/);
  });

  it.each([
    ['a ".." segment', 'evil-pac/../../outside/evil.txt'],
    ['a ".." segment after normalisation', 'evil-pac/hwconfig/./cfg1/../../../../outside/evil.txt'],
    ['a "./" prefix and ".."', './evil-pac/./../outside/evil.txt'],
    ['a ".." folder entry', 'evil-pac/hwconfig/../../'],
  ])('%s', async (_what, name) => {
    const entry: TarEntrySpec = name.endsWith('/') ? { name } : { name, content: 'evil' };
    await expectRefused(await tarArchive(goodThen(entry)), 'unsafe_path');
  });

  it.each([
    ['backslash separators with ".."', 'evil-pac\\..\\..\\outside\\evil.txt'],
    ['a backslash-rooted path', '\\outside\\evil.txt'],
    ['a drive letter', 'C:/outside/evil.txt'],
  ])('%s', async (_what, name) => {
    await expectRefused(await tarArchive(goodThen({ name, content: 'evil' })), 'unsafe_path');
  });

  it('a symbolic link', async () => {
    const archive = await tarArchive(goodThen({ name: 'evil-pac/link', type: 'symlink', linkname: outside() }));
    expect((await expectRefused(archive, 'link')).message).toMatch(/symbolic link/);
  });

  it('a symbolic link followed by a file written through it', async () => {
    const archive = await tarArchive([
      { name: 'evil-pac/manifest.yaml', content: 'name: x\n' },
      { name: 'evil-pac/out', type: 'symlink', linkname: path.join(root, 'outside') },
      { name: 'evil-pac/out/evil.txt', content: 'evil' },
    ]);
    await expectRefused(archive, 'link');
  });

  it('a hard link', async () => {
    const archive = await tarArchive(goodThen({ name: 'evil-pac/hard', type: 'link', linkname: 'evil-pac/hwconfig/cfg1/manifest.yaml' }));
    expect((await expectRefused(archive, 'link')).message).toMatch(/hard link/);
  });

  it.each([
    ['a character device', { name: 'evil-pac/null', type: 'character-device', devmajor: 1, devminor: 3 }],
    ['a block device', { name: 'evil-pac/sda', type: 'block-device', devmajor: 8, devminor: 0 }],
    ['a fifo', { name: 'evil-pac/pipe', type: 'fifo' }],
  ] as const)('%s', async (_what, entry) => {
    await expectRefused(await tarArchive(goodThen({ ...entry })), 'special_file');
  });

  it('two top-level folders', async () => {
    const archive = await tarArchive([...realPacEntries('pac-a', 'cfg-a'), ...realPacEntries('pac-b', 'cfg-b')]);
    expect((await expectRefused(archive, 'layout')).message).toMatch(/more than one top-level/);
  });

  it('a file beside the top-level folder', async () => {
    await expectRefused(await tarArchive(goodThen({ name: 'README.md', content: 'hello' })), 'layout');
  });

  it('a single file at the top level', async () => {
    await expectRefused(await tarArchive([{ name: 'manifest.yaml', content: 'name: x\n' }]), 'layout');
  });

  it('a hidden top-level folder (could collide with the staging folders)', async () => {
    await expectRefused(await tarArchive(flatPacEntries('.old-123456')), 'layout');
  });

  it('no manifest.yaml', async () => {
    const archive = await tarArchive([
      { name: 'no-manifest/hwconfig/cfg1/zcu104/system.bit', content: 'bits' },
      { name: 'no-manifest/notes/manifest.yaml', content: 'name: misplaced\n' },
      { name: 'no-manifest/hwconfig/cfg1/zcu104/manifest.yaml', content: 'name: too deep\n' },
    ]);
    expect((await expectRefused(archive, 'no_manifest')).message).toMatch(/manifest\.yaml/);
  });

  it('a folder called manifest.yaml', async () => {
    const archive = await tarArchive([{ name: 'pac/manifest.yaml/' }, { name: 'pac/manifest.yaml/x', content: 'x' }]);
    await expectRefused(archive, 'no_manifest');
  });

  it('a file that is not an archive', async () => {
    await expectRefused(randomBytes(4096), 'not_an_archive');
  });

  it('a short text file', async () => {
    const error = await expectRefused(Buffer.from('hello, this is not a tar\n'), 'truncated');
    expect(error.message).toMatch(/truncated/);
  });

  it('a gzip stream that does not hold a tar', async () => {
    await expectRefused(gzip(randomBytes(8192)), 'not_an_archive');
  });

  it('gzip magic bytes followed by garbage', async () => {
    await expectRefused(Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(1000)]), 'not_an_archive');
  });

  it('a truncated .tar.gz', async () => {
    const whole = gzip(await tarArchive(realPacEntries('cut-pac', 'cut', { bitstream: randomBytes(20_000).toString('hex') })));
    await expectRefused(whole.subarray(0, Math.floor(whole.length / 2)), 'truncated');
  });

  it('a .tar cut in the middle of a file', async () => {
    const whole = await tarArchive(realPacEntries('cut-pac', 'cut', { bitstream: 'b'.repeat(10_000) }));
    await expectRefused(whole.subarray(0, whole.length - 1024 - 5000), 'truncated');
  });

  it('a .tar cut at an entry boundary (no end-of-archive blocks)', async () => {
    const whole = await tarArchive(realPacEntries('cut-pac', 'cut'));
    await expectRefused(whole.subarray(0, whole.length - 1024), 'truncated');
  });

  it('an empty file', async () => {
    await expectRefused(Buffer.alloc(0), 'empty');
  });

  it('an empty tar (end-of-archive blocks only), plain and gzipped', async () => {
    const empty = await tarArchive([]);
    await expectRefused(empty, 'empty');
    await expectRefused(gzip(empty), 'empty');
  });

  it('an empty gzip stream', async () => {
    await expectRefused(gzip(Buffer.alloc(0)), 'empty');
  });

  it('files adding up to more than the limit', async () => {
    const archive = await tarArchive(realPacEntries('big-pac', 'big', { bitstream: 'x'.repeat(50_000) }));
    await expectRefused(archive, 'too_large', { maxBytes: 10_000 });
  });

  it('a file appearing twice', async () => {
    await expectRefused(await tarArchive(goodThen({ name: 'evil-pac/hwconfig/cfg1/zcu104/system.bit', content: 'again' })), 'layout');
  });

  it('and removes a pacDir it had to create', async () => {
    await fs.rm(pacDir, { recursive: true });
    const before = await listTree(root);
    await expect(installFile(await tarArchive(goodThen({ name: 'evil-pac/l', type: 'symlink', linkname: '/' })))).rejects.toThrow(
      PacArchiveError,
    );
    expect(await listTree(root)).toEqual(before);
  });
});

describe('installPacArchive installs', () => {
  it('a .tar of a real PAC layout (manifest.yaml in hwconfig/<cfg>/)', async () => {
    const bitstream = randomBytes(300_000);
    const entries = realPacEntries('vadd_pac', 'vadd');
    entries.push({ name: 'vadd_pac/hwconfig/cfg1/zcu104/vadd.xclbin', content: bitstream, mode: 0o4755 });
    const result = await installFile(await tarArchive(entries));

    const files = entries.filter((entry) => entry.content !== undefined);
    expect(result).toEqual({
      pac: 'vadd_pac',
      files: files.length,
      bytes: files.reduce((sum, entry) => sum + Buffer.from(entry.content ?? '').length, 0),
    });
    const installed = path.join(pacDir, 'vadd_pac', 'hwconfig', 'cfg1');
    expect(await fs.readFile(path.join(installed, 'zcu104', 'vadd.xclbin'))).toEqual(bitstream);
    expect(await fs.readFile(path.join(installed, 'manifest.yaml'), 'utf8')).toMatch(/^name: vadd$/m);
    // setuid dropped, executable kept
    expect((await fs.stat(path.join(installed, 'zcu104', 'vadd.xclbin'))).mode & 0o7777).toBe(0o755);
    // no staging or old folders left
    expect(await fs.readdir(pacDir)).toEqual(['vadd_pac']);
  });

  it('a .tar.gz with manifest.yaml in the PAC folder, "./" names and no folder entries, read a byte at a time', async () => {
    const archive = gzip(await tarArchive([{ name: './' }, ...flatPacEntries('flat-pac', { prefix: './' })]));
    const result = await installFile(archive, { highWaterMark: 1 });
    expect(result).toMatchObject({ pac: 'flat-pac', files: 3 });
    expect(await fs.readFile(path.join(pacDir, 'flat-pac', 'hwconfig', 'cfg1', 'zcu104', 'system.bit'), 'utf8')).toBe(
      'bitstream of flat-pac\n',
    );
    expect(await fs.readdir(pacDir)).toEqual(['flat-pac']);
  });

  it('into a pacDir that does not exist yet', async () => {
    await fs.rm(pacDir, { recursive: true });
    const result = await installFile(await tarArchive(realPacEntries('new-pac', 'new')));
    expect(result.pac).toBe('new-pac');
    expect(await fs.readdir(pacDir)).toEqual(['new-pac']);
  });

  it('a long entry name (pax header)', async () => {
    const deep = `deep-pac/hwconfig/cfg1/zcu104/${'d'.repeat(120)}/${'e'.repeat(120)}.bin`;
    const result = await installFile(await tarArchive([...flatPacEntries('deep-pac'), { name: deep, content: 'deep' }]));
    expect(result.files).toBe(4);
    expect(await fs.readFile(path.join(pacDir, deep), 'utf8')).toBe('deep');
  });

  it('over an existing PAC of the same name, replacing it whole', async () => {
    await installFile(await tarArchive([...realPacEntries('same-pac', 'v1'), { name: 'same-pac/only-in-v1.txt', content: 'v1' }]));
    await fs.mkdir(path.join(pacDir, 'other-pac'));
    const result = await installFile(await tarArchive(realPacEntries('same-pac', 'v2')));
    expect(result.pac).toBe('same-pac');
    expect(await fs.readFile(path.join(pacDir, 'same-pac', 'hwconfig', 'cfg1', 'manifest.yaml'), 'utf8')).toMatch(/name: v2/);
    await expect(fs.stat(path.join(pacDir, 'same-pac', 'only-in-v1.txt'))).rejects.toThrow();
    expect((await fs.readdir(pacDir)).sort()).toEqual(['other-pac', 'same-pac']);
  });

  it('but keeps the existing PAC intact when the new archive is bad', async () => {
    await installFile(await tarArchive(realPacEntries('same-pac', 'v1')));
    const before = await listTree(root);
    const bad = await tarArchive([
      ...realPacEntries('same-pac', 'v2', { bitstream: 'v2 bits' }),
      { name: 'same-pac/escape', type: 'symlink', linkname: '/etc' },
    ]);
    await expect(installFile(bad)).rejects.toThrow(PacArchiveError);
    expect(await listTree(root)).toEqual(before);
    expect(await fs.readFile(path.join(pacDir, 'same-pac', 'hwconfig', 'cfg1', 'zcu104', 'system.bit'), 'utf8')).toBe('bitstream of v1\n');

    const truncated = gzip(await tarArchive(realPacEntries('same-pac', 'v3')));
    await expect(installFile(truncated.subarray(0, truncated.length - 20))).rejects.toThrow(PacArchiveError);
    expect(await listTree(root)).toEqual(before);
  });
});

describe('installPacArchive and its source', () => {
  it("rethrows the source's own error as it is and leaves nothing", async () => {
    const archive = await tarArchive(realPacEntries('src-pac', 'src', { bitstream: 'z'.repeat(100_000) }));
    const transferFailed = new Error('the link dropped');
    const source = Readable.from(
      (async function* () {
        yield archive.subarray(0, 20_000);
        throw transferFailed;
      })(),
    );
    const before = await listTree(root);
    await expect(installPacArchive(source, { pacDir })).rejects.toBe(transferFailed);
    expect(await listTree(root)).toEqual(before);
  });

  it('destroys the source when it refuses the archive', async () => {
    const archive = await tarArchive(goodThen({ name: '/etc/evil', content: 'x' }, ...realPacEntries('evil-pac-2', 'more')));
    const source = Readable.from([archive.subarray(0, 3000), archive.subarray(3000)]);
    await expect(installPacArchive(source, { pacDir })).rejects.toThrow(PacArchiveError);
    expect(source.destroyed).toBe(true);
  });
});
