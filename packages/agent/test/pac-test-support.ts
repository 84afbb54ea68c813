/** Helpers of the PAC tests: real tar archives built with tar-stream, and folder listings. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';

export interface TarEntrySpec {
  name: string;
  /** Default: 'file' when `content` is given, else 'directory'. */
  type?: tar.Header['type'];
  content?: string | Buffer;
  linkname?: string;
  mode?: number;
  devmajor?: number;
  devminor?: number;
}

/** A tar archive holding `entries` in order, as tar-stream packs it (with end blocks). */
export async function tarArchive(entries: TarEntrySpec[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (entry.content !== undefined) {
        const content = Buffer.from(entry.content);
        pack.entry(
          { name: entry.name, type: entry.type ?? 'file', size: content.length, mode: entry.mode ?? 0o644 },
          content,
          done,
        );
      } else {
        pack.entry(
          {
            name: entry.name,
            type: entry.type ?? 'directory',
            size: 0,
            mode: entry.mode ?? 0o755,
            linkname: entry.linkname,
            devmajor: entry.devmajor,
            devminor: entry.devminor,
          },
          done,
        );
      }
    });
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

export const gzip = (archive: Buffer): Buffer => gzipSync(archive);

/**
 * The entries of a PAC laid out like a real one: `<folder>/hwconfig/<cfg>/manifest.yaml`
 * naming the configuration, and its assets under `<folder>/hwconfig/<cfg>/<board>/`.
 */
export function realPacEntries(folder: string, cfgName: string, options: { board?: string; bitstream?: string } = {}): TarEntrySpec[] {
  const board = options.board ?? 'zcu104';
  return [
    { name: `${folder}/` },
    { name: `${folder}/hwconfig/` },
    { name: `${folder}/hwconfig/cfg1/` },
    {
      name: `${folder}/hwconfig/cfg1/manifest.yaml`,
      content: `name: ${cfgName}\ndescription: Boot assets of ${cfgName}\nrevision: 1\nassets:\n  ${board}: ${board}\n`,
    },
    { name: `${folder}/hwconfig/cfg1/${board}/` },
    { name: `${folder}/hwconfig/cfg1/${board}/bootgen.bif`, content: 'the_ROM_image:\n{\n}\n' },
    { name: `${folder}/hwconfig/cfg1/${board}/system.bit`, content: options.bitstream ?? `bitstream of ${cfgName}\n` },
    { name: `${folder}/hwconfig/cfg1/${board}/system.dtb`, content: 'dtb\n' },
  ];
}

/**
 * The entries of a PAC with its manifest.yaml directly in the PAC folder and no manifest in
 * the configuration folder (the simulator then names the configuration after the folder).
 */
export function flatPacEntries(folder: string, options: { board?: string; prefix?: string } = {}): TarEntrySpec[] {
  const board = options.board ?? 'zcu104';
  const prefix = options.prefix ?? '';
  return [
    { name: `${prefix}${folder}/manifest.yaml`, content: `name: ${folder}\ndescription: test PAC\nrevision: 1\n` },
    { name: `${prefix}${folder}/hwconfig/cfg1/${board}/system.bit`, content: `bitstream of ${folder}\n` },
    { name: `${prefix}${folder}/hwconfig/cfg1/${board}/bootgen.bif`, content: 'the_ROM_image:\n{\n}\n' },
  ];
}

/** Every path under `root` with its type and size (files) — to compare before and after. */
export async function listTree(root: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(root, full);
      const stat = await fs.lstat(full);
      if (stat.isDirectory()) {
        lines.push(`${relative}/`);
        await walk(full);
      } else if (stat.isFile()) {
        lines.push(`${relative} ${stat.size}`);
      } else {
        lines.push(`${relative} (special)`);
      }
    }
  };
  await walk(root);
  return lines.sort();
}
