import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { Api } from './api.ts';
import { ApiProblemError, CliError, EXIT, InterruptedError, UnreachableError, unreachable } from './errors.ts';
import type { HashedFile } from './hash-cache.ts';
import type { ProgressBar } from './progress.ts';
import { cacheDir } from './settings.ts';
import { type StateFile, stateFile } from './state-file.ts';

const TUS = { 'tus-resumable': '1.0.0' };
const READ_CHUNK = 1024 * 1024;
/** How often a broken upload is retried before giving up (with backoff up to 10 s). */
const MAX_RETRIES = 12;

export interface TusUploadInput {
  api: Api;
  file: HashedFile;
  /** Undefined: the content is stored on its own by sha256 (a PAC archive a rollout names). */
  invocationId: number | undefined;
  kind: string;
  filename: string;
  bar: ProgressBar;
  signal: AbortSignal;
  /** Told about retries (a dropped connection, a server restart). */
  note?: (line: string) => void;
}

export interface TusUploadResult {
  /** Where this run started (bytes the server already had from an earlier, interrupted run). */
  resumedFrom: number;
  /** Bytes this run put on the wire (request bodies). */
  bytesSent: number;
}

/** Upload URLs of unfinished uploads, so an interrupted command continues where it stopped. */
export function uploadResumeState(dir = cacheDir()): StateFile<string> {
  return stateFile<string>(path.join(dir, 'uploads.json'));
}

const encodeMetadata = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([k, v]) => `${k} ${Buffer.from(v, 'utf8').toString('base64')}`)
    .join(',');

class TransientError extends Error {}

/**
 * Sends one file with tus 1.0: resumes a known upload (HEAD) or creates one, then PATCHes
 * the rest in one streamed request; a broken request is retried from the server's offset.
 * The upload URL is kept on disk until the server has the whole file.
 */
export async function tusUpload(input: TusUploadInput, resume = uploadResumeState()): Promise<TusUploadResult> {
  const { api, file, signal } = input;
  const key = `${api.server} ${input.invocationId ?? 'content'} ${input.kind} ${file.sha256} ${file.size}`;
  let location = await resume.get(key);
  let offset = 0;
  let resumedFrom = 0;
  let bytesSent = 0;
  if (location) {
    const known = await headOffset(api, location, signal).catch((err: unknown) => {
      if (err instanceof TransientError) return undefined;
      throw err;
    });
    if (known && known.length === file.size) offset = resumedFrom = known.offset;
    else location = undefined;
  }
  if (!location) {
    location = await create(api, input);
    // An empty file is complete (and attached) once created: there is nothing to PATCH.
    if (file.size === 0) return { resumedFrom: 0, bytesSent: 0 };
    await resume.set(key, location);
  }
  input.bar.set(offset);

  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw new InterruptedError('Upload interrupted; run the same command again to continue.');
    try {
      const sent = await patch(api, location, file.path, offset, file.size, input.bar, signal);
      bytesSent += sent.bytes;
      offset = sent.offset;
      if (offset === file.size) break;
    } catch (err) {
      if (err instanceof SentSoFar) bytesSent += err.bytes;
      const cause = err instanceof SentSoFar ? err.cause : err;
      if (signal.aborted) throw new InterruptedError('Upload interrupted; run the same command again to continue.');
      if (cause instanceof ApiProblemError && cause.code === 'upload_not_found' && attempt < MAX_RETRIES) {
        // Expired or removed meanwhile: start over with a new upload.
        location = await create(api, input);
        await resume.set(key, location);
        offset = 0;
        input.bar.set(0);
        continue;
      }
      const retriable = cause instanceof TransientError || (cause instanceof ApiProblemError && (cause.code === 'offset_mismatch' || cause.code === 'upload_busy' || cause.status >= 500));
      if (!retriable) {
        if (cause instanceof ApiProblemError && cause.code === 'checksum_mismatch') await resume.set(key, undefined);
        throw cause;
      }
      if (attempt >= MAX_RETRIES) throw unreachable(api.server, cause);
      input.note?.(`${input.kind}: connection lost (${(cause as Error).message}); retrying`);
      await sleep(Math.min(10_000, 250 * 2 ** attempt), signal);
      const known = await headOffset(api, location, signal).catch((e: unknown) => {
        if (e instanceof TransientError) return undefined;
        throw e;
      });
      if (known) {
        offset = known.offset;
        input.bar.set(offset);
      }
    }
  }
  await resume.set(key, undefined);
  return { resumedFrom, bytesSent };
}

async function create(api: Api, input: TusUploadInput): Promise<string> {
  const header = {
    ...TUS,
    'upload-length': String(input.file.size),
    'upload-metadata': encodeMetadata({
      ...(input.invocationId !== undefined ? { invocation_id: String(input.invocationId), file_type: input.kind } : {}),
      filename: input.filename,
      sha256: input.file.sha256,
    }),
  };
  const res = await api.answer(api.client.POST('/api/uploads/', { params: { header }, signal: input.signal }));
  const location = res.headers.get('location');
  if (!location) throw new CliError(EXIT.failed, 'The server created the upload but did not say where it is (no Location header).');
  return new URL(location, `${api.server}/`).toString();
}

async function headOffset(api: Api, location: string, signal: AbortSignal): Promise<{ offset: number; length: number } | undefined> {
  let res: Response;
  try {
    res = await api.fetchRaw(location, { method: 'HEAD', headers: TUS, signal });
  } catch (err) {
    if (signal.aborted) throw new InterruptedError('Upload interrupted; run the same command again to continue.');
    if (!(err instanceof UnreachableError)) throw err;
    throw new TransientError(err.message);
  }
  if (res.status === 404 || res.status === 410) return undefined;
  if (res.status >= 500) throw new TransientError(`HTTP ${res.status}`);
  if (!res.ok) throw await api.problemOf(res);
  return { offset: Number(res.headers.get('upload-offset')), length: Number(res.headers.get('upload-length')) };
}

class SentSoFar extends Error {
  constructor(
    readonly bytes: number,
    override readonly cause: unknown,
  ) {
    super('request failed');
  }
}

/** One PATCH of bytes [offset, size): resolves with the server's new offset. */
function patch(api: Api, location: string, file: string, offset: number, size: number, bar: ProgressBar, signal: AbortSignal): Promise<{ offset: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(location);
    const client = url.protocol === 'https:' ? https : http;
    let sent = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      source.destroy();
      req.destroy();
      signal.removeEventListener('abort', onAbort);
      reject(new SentSoFar(sent, err));
    };
    const req = client.request(url, {
      method: 'PATCH',
      headers: {
        ...api.authHeaders(),
        ...TUS,
        'upload-offset': String(offset),
        'content-type': 'application/offset+octet-stream',
        'content-length': String(size - offset),
      },
    });
    const source = size > offset ? fs.createReadStream(file, { start: offset, end: size - 1, highWaterMark: READ_CHUNK }) : fs.createReadStream(file, { start: 0, end: -1 });
    const onAbort = () => fail(new InterruptedError());
    signal.addEventListener('abort', onAbort, { once: true });
    source.on('data', (chunk) => {
      sent += (chunk as Buffer).length;
      bar.add((chunk as Buffer).length);
    });
    source.on('error', fail);
    req.on('error', (err) => fail(new TransientError(err.message)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', (err) => fail(new TransientError(err.message)));
      res.on('end', () => {
        if (settled) return;
        const status = res.statusCode ?? 0;
        if (status === 204 || status === 200) {
          settled = true;
          signal.removeEventListener('abort', onAbort);
          source.destroy();
          resolve({ offset: Number(res.headers['upload-offset'] ?? offset + sent), bytes: sent });
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        void api.problemOf(new Response(body, { status, headers: { 'content-type': String(res.headers['content-type'] ?? '') } })).then(fail);
      });
    });
    source.pipe(req);
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new InterruptedError('Upload interrupted; run the same command again to continue.'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new InterruptedError('Upload interrupted; run the same command again to continue.'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
