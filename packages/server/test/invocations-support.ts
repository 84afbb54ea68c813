/**
 * Helpers of the invocation tests: multipart bodies built byte by byte (so filenames and
 * part order are exactly what a test says), a small ZIP reader, raw HTTP for paths and
 * aborts fetch would not send, and looks into the server's data folder.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { expect } from 'vitest';
import { json } from '../../../test/support/http.ts';
import type { TestServer } from '../../../test/support/test-server.ts';

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; data: Uint8Array; contentType?: string };

export function multipart(parts: Part[], boundary = `----mm-test-${Math.random().toString(16).slice(2)}`) {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    if ('value' in p) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `Content-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n` +
            `Content-Type: ${p.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
      );
      chunks.push(Buffer.from(p.data), Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function createInvocation(server: TestServer, name = 'test', description = ''): Promise<number> {
  const res = await server.api('/api/invocations/create/', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, description }),
  });
  expect(res.status).toBe(201);
  return (await json(res)).id as number;
}

export async function upload(server: TestServer, id: number | string, parts: Part[]): Promise<Response> {
  const { body, contentType } = multipart(parts);
  return server.api(`/api/invocations/${id}/upload/`, { method: 'POST', headers: { 'content-type': contentType }, body });
}

export async function uploadFile(server: TestServer, id: number, kind: string, filename: string, data: Uint8Array) {
  const res = await upload(server, id, [
    { name: 'file_type', value: kind },
    { name: 'file', filename, data },
  ]);
  expect(res.status).toBe(201);
  return json(res);
}

/** Files (not folders) under a folder, relative paths; [] when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => !e.isDirectory()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

export const contentDir = (server: TestServer) => path.join(server.dataDir, 'content');
export const storedContent = async (server: TestServer) => (await filesUnder(contentDir(server))).filter((f) => !f.startsWith('.tmp'));
export const tempFiles = async (server: TestServer) => filesUnder(path.join(contentDir(server), '.tmp'));

/** Waits (polling) until the condition holds; fails the test if it never does. */
export async function eventually(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still not true after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A GET with the path sent exactly as given (fetch would normalise `..` and `%2e%2e`). */
export function rawGet(server: TestServer, rawPath: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: 'GET', path: rawPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface ZipEntry {
  name: string;
  method: number;
  crc32: number;
  data: Buffer;
}

/** Reads a ZIP from its central directory (stored and deflated entries; no ZIP64 needed here). */
export function readZip(zip: Buffer): ZipEntry[] {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65_535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('no end of central directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`bad central directory entry at ${p}`);
    const method = zip.readUInt16LE(p + 10);
    const crc32 = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLength).toString('utf8');
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(dataStart, dataStart + compressedSize);
    const data = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : Buffer.alloc(0);
    entries.push({ name, method, crc32, data });
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** A minimal MP4 head (an `ftyp` box) followed by filler: enough for content sniffing. */
export function fakeMp4(size = 4096): Buffer {
  const b = Buffer.alloc(size, 7);
  Buffer.from([0, 0, 0, 0x18]).copy(b, 0);
  Buffer.from('ftypisom\0\0\x02\0isomiso2', 'latin1').copy(b, 4);
  return b;
}

/** A RIFF/AVI head followed by filler. */
export function fakeAvi(size = 4096): Buffer {
  const b = Buffer.alloc(size, 9);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(size - 8, 4);
  b.write('AVI LIST', 8, 'latin1');
  return b;
}

/** Bytes whose every position is recognisable (for Range checks). */
export function patterned(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + (i >> 8)) & 0xff;
  return b;
}
