import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { OperationError } from '../operations/operation-errors.ts';

/** A bitstream with its overlay in one file stays small: more is refused. */
const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
const MAX_ENTRIES = 16;
const BITSTREAM = /\.(bit|bin)$/i;
const OVERLAY = /\.dtbo$/i;

/** What fpgautil loads: the bitstream, and its device-tree overlay when the bundle has one. */
export interface BitstreamFiles {
  bitstream: string;
  overlay?: string;
}

/**
 * The invocation's bitstream file as fpgautil takes it: a raw `.bit`/`.bin`/`.bit.bin` as it
 * is, or a `.tar` / `.tar.gz` holding one bitstream and at most one `.dtbo` overlay (at its
 * top or in one folder), unpacked into `into`. Anything else in the archive (links, more
 * bitstreams, an app's `shell.json`, paths with `..`) is refused with
 * `bitstream_load_failed` before anything is loaded.
 */
export async function bitstreamFiles(file: string, into: string): Promise<BitstreamFiles> {
  const head = Buffer.alloc(512);
  const handle = await fsp.open(file, 'r');
  let read: number;
  try {
    ({ bytesRead: read } = await handle.read(head, 0, head.length, 0));
  } finally {
    await handle.close();
  }
  const gzip = read >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  const ustar = read >= 262 && head.toString('latin1', 257, 262) === 'ustar';
  if (!gzip && !ustar) return { bitstream: file };

  const refuse = (why: string) => new OperationError('bitstream_load_failed', `the bitstream archive ${path.basename(file)} ${why}`);
  await fsp.mkdir(into, { recursive: true });
  const extract = tar.extract();
  const found: { bitstream?: string; overlay?: string } = {};
  let entries = 0;
  let bytes = 0;
  const reading = (async () => {
    for await (const entry of extract) {
      const h = entry.header;
      entries++;
      if (entries > MAX_ENTRIES) throw refuse(`has more than ${MAX_ENTRIES} entries`);
      const name = h.name.replace(/^\.\//, '').replace(/\/$/, '');
      const parts = name.split('/').filter(Boolean);
      if (h.type === 'directory' && parts.length <= 1 && !parts.includes('..')) {
        entry.resume();
        continue;
      }
      if (h.type !== 'file') throw refuse(`holds ${JSON.stringify(h.name)}, a ${h.type}: only files are taken`);
      if (parts.length === 0 || parts.length > 2 || parts.some((p) => p === '..' || p === '.') || h.name.startsWith('/')) throw refuse(`holds ${JSON.stringify(h.name)}: files go at its top or in one folder`);
      const base = parts[parts.length - 1]!;
      if (base === 'shell.json') throw refuse('is an accelerator app (it has a shell.json): install and load it as an app, not as a run\'s bitstream');
      const kind = OVERLAY.test(base) ? 'overlay' : BITSTREAM.test(base) ? 'bitstream' : undefined;
      if (!kind) {
        entry.resume();
        continue;
      }
      if (found[kind]) throw refuse(`holds more than one ${kind === 'overlay' ? '.dtbo overlay' : 'bitstream'}`);
      bytes += h.size ?? 0;
      if (bytes > MAX_BUNDLE_BYTES) throw refuse(`holds more than ${MAX_BUNDLE_BYTES} bytes`);
      const target = path.join(into, kind === 'overlay' ? 'overlay.dtbo' : `bitstream${base.toLowerCase().endsWith('.bit') ? '.bit' : '.bin'}`);
      await pipeline(entry, fs.createWriteStream(target, { flags: 'wx', mode: 0o600 }));
      found[kind] = target;
    }
  })();
  try {
    const source = fs.createReadStream(file);
    await Promise.all([gzip ? pipeline(source, createGunzip(), extract) : pipeline(source, extract), reading]);
  } catch (err) {
    extract.destroy();
    if (err instanceof OperationError) throw err;
    throw refuse(`cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!found.bitstream) throw refuse('holds no bitstream (.bit, .bin or .bit.bin)');
  return { bitstream: found.bitstream, ...(found.overlay ? { overlay: found.overlay } : {}) };
}
