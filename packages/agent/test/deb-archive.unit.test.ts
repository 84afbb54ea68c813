import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebArchiveError, unpackAgentVersion } from '../src/update/deb-archive.ts';

type Entry = { name: string; type?: 'file' | 'directory' | 'symlink' | 'character-device'; body?: string; linkname?: string; mode?: number };

/** A tar of these entries, gzip-compressed, as dpkg-deb -Zgzip writes data.tar.gz. */
async function dataTarGz(entries: Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    const isFile = (e.type ?? 'file') === 'file';
    const body = isFile ? (e.body ?? '') : '';
    const header = { name: e.name, type: e.type ?? 'file', mode: e.mode ?? 0o644, size: Buffer.byteLength(body), ...(e.linkname ? { linkname: e.linkname } : {}) };
    if (isFile) pack.entry(header, body);
    else pack.entry(header, () => {});
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

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

describe('unpacking an agent package', () => {
  let dir: string;
  let n = 0;
  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mm-deb-'));
  });
  afterAll(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });
  const deb = async (members: Array<[string, Buffer]>) => {
    const file = path.join(dir, `p${++n}.deb`);
    await fsp.writeFile(file, ar(members));
    return { file, dest: path.join(dir, `v${n}`) };
  };
  const control = (): [string, Buffer] => ['control.tar.gz', gzipSync(Buffer.alloc(1024))];

  it('unpacks opt/mm-agent/ with its modes and links, and nothing else of the package', async () => {
    const data = await dataTarGz([
      { name: './opt/mm-agent/', type: 'directory' },
      { name: './opt/mm-agent/lib/mm-agent.mjs', body: 'console.log(1)\n', mode: 0o755 },
      { name: './opt/mm-agent/bin/start', type: 'symlink', linkname: '../lib/mm-agent.mjs' },
      { name: './etc/mm-agent/mm-agent.env', body: 'MM_X=1\n' },
    ]);
    const { file, dest } = await deb([['debian-binary', Buffer.from('2.0\n')], control(), ['data.tar.gz', data]]);
    expect(await unpackAgentVersion(file, dest)).toEqual({ files: 1 });
    expect(await fsp.readFile(path.join(dest, 'lib/mm-agent.mjs'), 'utf8')).toBe('console.log(1)\n');
    expect((await fsp.stat(path.join(dest, 'lib/mm-agent.mjs'))).mode & 0o777).toBe(0o755);
    expect(await fsp.readlink(path.join(dest, 'bin/start'))).toBe('../lib/mm-agent.mjs');
    await expect(fsp.access(path.join(dest, 'etc'))).rejects.toThrow();
  });

  it.each<[string, Entry]>([
    ['a path that climbs out', { name: './opt/mm-agent/../../../escaped', body: 'x' }],
    ['a link that points out', { name: './opt/mm-agent/lib/out', type: 'symlink', linkname: '../../../../etc/passwd' }],
    ['an absolute link', { name: './opt/mm-agent/lib/abs', type: 'symlink', linkname: '/etc/passwd' }],
    ['a device', { name: './opt/mm-agent/lib/dev', type: 'character-device' }],
  ])('refuses %s', async (_what, entry) => {
    const { file, dest } = await deb([['debian-binary', Buffer.from('2.0\n')], control(), ['data.tar.gz', await dataTarGz([entry])]]);
    await expect(unpackAgentVersion(file, dest)).rejects.toBeInstanceOf(DebArchiveError);
    await expect(fsp.access(path.join(dir, 'escaped'))).rejects.toThrow();
  });

  it('refuses what is no gzip Debian package, saying why', async () => {
    const xz = await deb([['debian-binary', Buffer.from('2.0\n')], control(), ['data.tar.xz', Buffer.from('not really')]]);
    await expect(unpackAgentVersion(xz.file, xz.dest)).rejects.toThrow(/only gzip-compressed packages/);
    const none = path.join(dir, 'none.deb');
    await fsp.writeFile(none, 'hello');
    await expect(unpackAgentVersion(none, path.join(dir, 'vnone'))).rejects.toThrow(/not a Debian package/);
  });
});
