import path from 'node:path';
import type { Api, FileRecord, InputKind } from './api.ts';
import { ApiProblemError, UsageError } from './errors.ts';
import { bytes } from './format.ts';
import { HashCache, type HashedFile } from './hash-cache.ts';
import type { Progress } from './progress.ts';
import { tusUpload } from './tus-upload.ts';
import fs from 'node:fs/promises';

export interface LocalFile {
  kind: InputKind;
  path: string;
}

export interface SentFile {
  kind: string;
  filename: string;
  size: number;
  sha256: string;
  /** `attached`: the server already held the bytes; `uploaded`: sent (resumably). */
  action: 'attached' | 'uploaded';
  resumed_from: number;
  bytes_sent: number;
}

export interface Timings {
  hashMs: number;
  uploadMs: number;
}

/** Checks that each file is a readable regular file before anything is created on the server. */
export async function checkLocalFiles(files: LocalFile[]): Promise<void> {
  for (const f of files) {
    let st;
    try {
      st = await fs.stat(f.path);
    } catch {
      throw new UsageError(`Cannot read the ${f.kind} file ${f.path}: it does not exist.`);
    }
    if (!st.isFile()) throw new UsageError(`The ${f.kind} file ${f.path} is not a regular file.`);
  }
}

/** sha256 of every file (the cache skips unchanged ones), with progress. */
export async function hashFiles(files: LocalFile[], progress: Progress, signal: AbortSignal, cache = new HashCache()): Promise<Map<string, HashedFile>> {
  const out = new Map<string, HashedFile>();
  await Promise.all(
    files.map(async (f) => {
      const size = (await fs.stat(f.path)).size;
      const bar = progress.bar(`hashing ${f.kind}`, size);
      const hashed = await cache.hash(f.path, (n) => bar.add(n), signal);
      bar.done(hashed.cached ? 'cached' : undefined);
      out.set(f.kind, hashed);
    }),
  );
  return out;
}

/**
 * Gives the invocation each file: attached by digest when the server already holds the
 * bytes, otherwise uploaded resumably (all files at once).
 */
export async function sendFiles(
  api: Api,
  invocationId: number,
  files: LocalFile[],
  hashed: Map<string, HashedFile>,
  progress: Progress,
  signal: AbortSignal,
): Promise<SentFile[]> {
  return Promise.all(
    files.map(async (f): Promise<SentFile> => {
      const file = hashed.get(f.kind)!;
      const filename = path.basename(f.path);
      const attached = await attachByDigest(api, invocationId, f.kind, file, filename, signal);
      if (attached) {
        progress.note(`${f.kind}: the server already holds ${filename} (${bytes(file.size)}), not sent`);
        return { kind: f.kind, filename, size: file.size, sha256: file.sha256, action: 'attached', resumed_from: file.size, bytes_sent: 0 };
      }
      const bar = progress.bar(`uploading ${f.kind}`, file.size);
      const result = await tusUpload({ api, file, invocationId, kind: f.kind, filename, bar, signal, note: (l) => progress.note(l) });
      bar.done();
      return { kind: f.kind, filename, size: file.size, sha256: file.sha256, action: 'uploaded', resumed_from: result.resumedFrom, bytes_sent: result.bytesSent };
    }),
  );
}

async function attachByDigest(api: Api, invocationId: number, kind: InputKind, file: HashedFile, filename: string, signal: AbortSignal): Promise<FileRecord | undefined> {
  try {
    return await api.call(api.client.PUT('/api/invocations/{id}/files/{kind}/', { params: { path: { id: invocationId, kind } }, body: { sha256: file.sha256, filename }, signal }));
  } catch (err) {
    if (err instanceof ApiProblemError && err.code === 'content_not_found') return undefined;
    throw err;
  }
}
