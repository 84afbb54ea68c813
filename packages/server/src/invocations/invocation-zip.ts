import { Readable } from 'node:stream';
import { ZipArchive } from 'archiver';
import { plainFileName } from '../http/file-name.ts';
import type { StoreContext } from '../store-context.ts';
import { FILE_KINDS } from './invocation-records.ts';
import type { InvocationFileRow } from './invocation-files.ts';
import type { InvocationRow } from './invocations.ts';

/** What `invocation.json` in the ZIP says about the invocation. */
export function invocationManifest(invocation: InvocationRow, files: InvocationFileRow[]) {
  const byKind: Record<string, { filename: string; size: number; sha256: string; content_type: string }> = {};
  for (const f of files) byKind[f.kind] = { filename: f.filename, size: f.size, sha256: f.sha256, content_type: f.contentType };
  return {
    id: invocation.id,
    name: invocation.name,
    description: invocation.description,
    created_at: invocation.createdAt.toISOString(),
    files: byKind,
  };
}

/**
 * The invocation as a streamed ZIP: `<kind>/<filename>` for each file, stored as is
 * (media does not deflate), plus `invocation.json`. Memory stays flat whatever the sizes:
 * archiver pulls each file through 1 MiB reads as the client takes the bytes. When
 * `signal` aborts (the client went away) every file stream opened here is destroyed;
 * archiver alone leaks them when a client aborts.
 */
export async function invocationZip(
  ctx: StoreContext,
  invocation: InvocationRow,
  files: InvocationFileRow[],
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const ordered = [...files].sort((a, b) => FILE_KINDS.indexOf(a.kind as never) - FILE_KINDS.indexOf(b.kind as never));
  // Open every file before the first byte goes out: a missing one fails the request cleanly.
  const opened: Readable[] = [];
  const closeAll = () => {
    for (const s of opened) s.destroy();
  };
  try {
    for (const f of ordered) opened.push(await ctx.files.open(f.sha256));
  } catch (err) {
    closeAll();
    throw err;
  }

  // Past 4 GiB the offsets and sizes need ZIP64 records; ask for them from the first entry
  // (streamed entries learn their size only at the end).
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const archive = new ZipArchive({ store: true, forceZip64: total >= 0xffffffff - 1024 * 1024 });
  archive.append(Buffer.from(`${JSON.stringify(invocationManifest(invocation, files), null, 2)}\n`), {
    name: 'invocation.json',
    date: invocation.updatedAt,
  });
  ordered.forEach((f, i) => {
    // Names are cleaned where they enter; cleaned again here for rows stored before that rule.
    archive.append(opened[i]!, { name: `${f.kind}/${plainFileName(f.filename)}`, date: f.uploadedAt, store: true });
  });

  const onAbort = () => {
    archive.abort();
    closeAll();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  archive.on('error', (err) => {
    ctx.log.warn({ err, invocation_id: invocation.id }, 'zip download failed');
    closeAll();
  });
  archive.on('end', () => signal.removeEventListener('abort', onAbort));
  // Not awaited: finalize() resolves only once the client has read everything.
  archive.finalize().catch(() => {});

  return Readable.toWeb(archive as unknown as Readable) as unknown as ReadableStream<Uint8Array>;
}
