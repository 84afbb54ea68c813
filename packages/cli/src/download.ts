import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Api } from './api.ts';
import { ApiProblemError, CliError, EXIT, InterruptedError, UnreachableError, unreachable } from './errors.ts';
import type { ProgressBar } from './progress.ts';

const MAX_RETRIES = 12;

export interface DownloadInput {
  api: Api;
  /** The typed GET of the file with these extra headers, `parseAs: 'stream'` (e.g. the invocation's video). */
  request: (headers: Record<string, string>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  out: string;
  size: number;
  /** Checked once the whole file is there; a mismatch removes it. */
  sha256?: string;
  bar: ProgressBar;
  signal: AbortSignal;
  note?: (line: string) => void;
}

/**
 * Downloads into `<out>.part`, continuing a partial one with `Range` (and `If-Range`, so a
 * changed file starts over), retries a broken connection from where it stopped, checks
 * the sha256, then renames to `out`.
 */
export async function downloadFile(input: DownloadInput): Promise<{ bytesReceived: number; resumedFrom: number }> {
  const { api, signal } = input;
  const part = `${input.out}.part`;
  let have = await fsp.stat(part).then((s) => s.size, () => 0);
  if (have > input.size) {
    await fsp.rm(part, { force: true });
    have = 0;
  }
  const resumedFrom = have;
  let received = 0;
  input.bar.set(have);
  for (let attempt = 0; have < input.size || input.size === 0; attempt++) {
    if (signal.aborted) throw new InterruptedError(`Download interrupted; ${part} is kept and the next try continues it.`);
    const headers: Record<string, string> = {};
    if (have > 0) {
      headers.range = `bytes=${have}-`;
      if (input.sha256) headers['if-range'] = `"${input.sha256}"`;
    }
    try {
      let res: Response;
      try {
        res = await api.answer(input.request(headers));
      } catch (err) {
        if (err instanceof UnreachableError || (err instanceof ApiProblemError && err.status >= 500)) throw new Retry(err);
        throw err;
      }
      if (res.status === 200 && have > 0) {
        // The server sent the whole file (it changed, or ignores Range): start over.
        have = 0;
        input.bar.set(0);
      }
      const sink = fs.createWriteStream(part, { flags: have > 0 ? 'r+' : 'w', start: have });
      const counted = async function* (body: AsyncIterable<Uint8Array>) {
        for await (const chunk of body) {
          have += chunk.byteLength;
          received += chunk.byteLength;
          input.bar.add(chunk.byteLength);
          yield chunk;
        }
      };
      try {
        await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), counted, sink);
      } catch (err) {
        throw new Retry(err);
      }
      if (input.size === 0) break;
    } catch (err) {
      if (signal.aborted) throw new InterruptedError(`Download interrupted; ${part} is kept and the next try continues it.`);
      if (!(err instanceof Retry)) throw err;
      if (attempt >= MAX_RETRIES) throw err.cause instanceof CliError ? err.cause : unreachable(api.server, err.cause);
      input.note?.(`download: connection lost (${(err.cause as Error)?.message ?? err.cause}); continuing at ${have} bytes`);
      await new Promise((r) => setTimeout(r, Math.min(10_000, 250 * 2 ** attempt)));
      have = await fsp.stat(part).then((s) => s.size, () => 0);
    }
  }
  if (input.sha256) {
    const got = await sha256Of(part);
    if (got !== input.sha256) {
      await fsp.rm(part, { force: true });
      throw new CliError(EXIT.failed, `The downloaded file hashes to ${got}, not ${input.sha256}; it was removed.`, 'Run the command again.');
    }
  }
  await fsp.rename(part, input.out);
  return { bytesReceived: received, resumedFrom };
}

class Retry extends Error {
  constructor(override readonly cause: unknown) {
    super('retry');
  }
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
