/**
 * Links that each point inside by name but chain upward (issue 46, hole 2): an agent
 * package made `mm-agent` write outside its folder before refusing it. An archive is now
 * checked whole before anything is written, every link is resolved against the links before
 * it, and nothing is written through a link. PAC archives refuse links outright: checked too.
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installPacArchive } from '../src/pac/pac-archive.ts';
import { PacArchiveError } from '../src/pac/pac-errors.ts';
import { DebArchiveError, unpackAgentVersion } from '../src/update/deb-archive.ts';
import { tarArchive, type TarEntrySpec } from './pac-test-support.ts';

/** An `ar` archive (a .deb) of these members. */
function ar(members: Array<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [Buffer.from('!<arch>\n', 'latin1')];
  for (const [name, data] of members) {
    const header = `${name.padEnd(16)}${'0'.padEnd(12)}${'0'.padEnd(6)}${'0'.padEnd(6)}${'100644'.padEnd(8)}${String(data.length).padEnd(10)}\`\n`;
    parts.push(Buffer.from(header, 'latin1'), data);
    if (data.length % 2) parts.push(Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

async function deb(file: string, entries: TarEntrySpec[]): Promise<void> {
  const data = gzipSync(await tarArchive(entries));
  await fsp.writeFile(file, ar([['debian-binary', Buffer.from('2.0\n')], ['control.tar.gz', gzipSync(Buffer.alloc(512))], ['data.tar.gz', data]]));
}

/** Every file and link under `dir` (relative), folders left out. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isDirectory()) out.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return out.sort();
}

const V = './opt/mm-agent';
/**
 * `p/q/r/s -> ../../../e` is `<dest>/e` by name; `p/q/r/s/t -> ../../..` is `<dest>/p` by
 * name, but through `s` it is two levels above `<dest>`; the file is then written there.
 */
const chained: TarEntrySpec[] = [
  { name: `${V}/`, type: 'directory' },
  { name: `${V}/lib/mm-agent.mjs`, content: 'console.log(1)\n' },
  { name: `${V}/e/`, type: 'directory' },
  { name: `${V}/p/q/r/`, type: 'directory' },
  { name: `${V}/p/q/r/s`, type: 'symlink', linkname: '../../../e' },
  { name: `${V}/p/q/r/s/t`, type: 'symlink', linkname: '../../..' },
  { name: `${V}/p/q/r/s/t/pwned.txt`, content: 'pwned\n' },
];

describe('archives whose links chain out of their folder', () => {
  let root: string;
  /** `<root>/l1/l2/staging`: two levels above it is still inside `root`. */
  let dest: string;
  beforeEach(async () => {
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-chain-'));
    await fsp.mkdir(path.join(root, 'l1', 'l2'), { recursive: true });
    dest = path.join(root, 'l1', 'l2', 'staging');
  });
  afterEach(async () => {
    await fsp.rm(root, { recursive: true, force: true });
  });

  it('an agent package: refused, and nothing is written anywhere (not even inside its folder)', async () => {
    const file = path.join(root, 'evil.deb');
    await deb(file, chained);
    await expect(unpackAgentVersion(file, dest)).rejects.toBeInstanceOf(DebArchiveError);
    expect(await tree(root)).toEqual(['evil.deb']);
  });

  it('an agent package with a refused entry at its end writes nothing before refusing', async () => {
    const file = path.join(root, 'late.deb');
    await deb(file, [...chained.slice(0, 2), { name: `${V}/lib/dev`, type: 'character-device' }]);
    await expect(unpackAgentVersion(file, dest)).rejects.toBeInstanceOf(DebArchiveError);
    expect(await tree(root)).toEqual(['late.deb']);
  });

  it.each<[string, TarEntrySpec[]]>([
    ['a link to a link that points out', [{ name: `${V}/a`, type: 'symlink', linkname: 'b/../..' }]],
    // By name `<dest>/f`; through `d/up` (`<dest>/e`) it is `<dest>/../f`.
    ['a link that climbs out through another link', [{ name: `${V}/d/`, type: 'directory' }, { name: `${V}/e/`, type: 'directory' }, { name: `${V}/d/up`, type: 'symlink', linkname: '../e' }, { name: `${V}/x`, type: 'symlink', linkname: 'd/up/../../f' }]],
    ['a file written through a link that points inside', [{ name: `${V}/d/`, type: 'directory' }, { name: `${V}/l`, type: 'symlink', linkname: 'd' }, { name: `${V}/l/f`, content: 'x' }]],
    ['a file and a link of the same name', [{ name: `${V}/f`, content: 'x' }, { name: `${V}/f`, type: 'symlink', linkname: 'lib' }]],
    ['a link loop', [{ name: `${V}/a`, type: 'symlink', linkname: 'b' }, { name: `${V}/b`, type: 'symlink', linkname: 'a/c' }]],
    ['a hard link', [{ name: `${V}/h`, type: 'link', linkname: 'opt/mm-agent/lib/mm-agent.mjs' }]],
  ])('refuses %s', async (_what, extra) => {
    const file = path.join(root, 'bad.deb');
    await deb(file, [...chained.slice(0, 2), ...extra]);
    await expect(unpackAgentVersion(file, dest)).rejects.toBeInstanceOf(DebArchiveError);
    expect(await tree(root)).toEqual(['bad.deb']);
  });

  it('still unpacks links that stay inside, also through other links, made after the files', async () => {
    const file = path.join(root, 'good.deb');
    await deb(file, [
      { name: `${V}/`, type: 'directory' },
      { name: `${V}/bin/start`, type: 'symlink', linkname: '../lib/mm-agent.mjs' },
      { name: `${V}/lib/mm-agent.mjs`, content: 'console.log(1)\n', mode: 0o755 },
      { name: `${V}/node/bin/node`, content: 'elf', mode: 0o755 },
      { name: `${V}/current`, type: 'symlink', linkname: 'node' },
      { name: `${V}/node-bin`, type: 'symlink', linkname: 'current/bin/node' },
    ]);
    expect(await unpackAgentVersion(file, dest)).toEqual({ files: 2 });
    expect(await fsp.readFile(path.join(dest, 'bin/start'), 'utf8')).toBe('console.log(1)\n');
    expect(await fsp.readFile(path.join(dest, 'node-bin'), 'utf8')).toBe('elf');
    expect((await fsp.stat(path.join(dest, 'lib/mm-agent.mjs'))).mode & 0o777).toBe(0o755);
  });

  it('a PAC archive with the same chain: refused (links are not allowed), nothing written outside', async () => {
    const pacDir = path.join(dest, 'pacs');
    const archive = await tarArchive([
      { name: 'evil-pac/' },
      { name: 'evil-pac/manifest.yaml', content: 'name: x\n' },
      { name: 'evil-pac/e/' },
      { name: 'evil-pac/p/q/r/' },
      { name: 'evil-pac/p/q/r/s', type: 'symlink', linkname: '../../../e' },
      { name: 'evil-pac/p/q/r/s/t', type: 'symlink', linkname: '../../../..' },
      { name: 'evil-pac/p/q/r/s/t/pwned.txt', content: 'pwned\n' },
    ]);
    await expect(installPacArchive(Readable.from([archive]), { pacDir })).rejects.toBeInstanceOf(PacArchiveError);
    expect(await tree(root)).toEqual([]);
  });
});
