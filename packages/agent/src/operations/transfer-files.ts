import { type FileRef, StreamError } from '@mm/protocol';
import { CacheError } from '../cache/cache-error.ts';
import type { ContentCache } from '../cache/content-cache.ts';
import type { ServerLink } from '../link/server-link.ts';
import type { Logger } from '../logger.ts';
import { OperationError, OperationStopped } from './operation-errors.ts';
import type { OpReporter } from './op-reporter.ts';

/** One input file of a transfer as the operation's result reports it (`result.files[]`). */
export interface TransferredFile {
  kind: string;
  filename: string;
  size: number;
  /** Already complete in the board's cache: nothing crossed the link. */
  cached: boolean;
  /** File bytes received over the link (all attempts; a resumed pull counts from its offset). */
  bytes_pulled: number;
  /** Payload bytes that crossed the link for them (fewer than `bytes_pulled` when compressed). */
  wire_bytes: number;
  /** The server pushed it right behind op.start (`stream.push`): no pull was sent for it. */
  pushed?: boolean;
}

export interface TransferStats {
  filesPulled: number;
  bytesPulled: number;
  filesCached: number;
  /** Payload bytes on the wire for all pulls. */
  wireBytes: number;
  files: TransferredFile[];
}

/**
 * Makes every file of `files` complete and verified in the cache, pulling what is missing
 * (`source: content`) from the server. A pull resumes from the partial file a previous
 * attempt left. When the link drops mid-pull the transfer waits for the next connection
 * and resumes there; the operation stays running meanwhile. A sha256 or size mismatch
 * fails the operation (`checksum_mismatch`, `size_mismatch`), so does the server aborting
 * the stream (`transfer_failed`).
 */
export async function transferFiles(opts: {
  files: readonly FileRef[];
  cache: ContentCache;
  link: ServerLink;
  reporter: OpReporter;
  log: Logger;
  signal: AbortSignal;
}): Promise<TransferStats> {
  const { cache, link, reporter, signal } = opts;
  // The same content may be listed twice (two kinds, one file): fetch it once.
  const unique = [...new Map(opts.files.map((f) => [f.sha256, f])).values()];
  const total = unique.reduce((sum, f) => sum + f.size, 0);
  let doneBefore = 0;
  const stats: TransferStats = { filesPulled: 0, bytesPulled: 0, filesCached: 0, wireBytes: 0, files: [] };
  reporter.progress('transfer', 0, total);

  try {
    for (const file of unique) await takeOne(file);
  } finally {
    // A transfer that ended early leaves no push of its files waiting (60 s of memory, link time).
    for (const file of unique) link.current?.declinePush({ kind: 'content', sha256: file.sha256 }, 'the transfer ended without it');
  }
  if (stats.filesCached > 0) reporter.note(`${stats.filesCached} of ${unique.length} files already on the board`);
  return stats;

  async function takeOne(file: FileRef): Promise<void> {
    if (signal.aborted) throw new OperationStopped('stopped');
    const entry: TransferredFile = { kind: file.kind, filename: file.filename, size: file.size, cached: false, bytes_pulled: 0, wire_bytes: 0 };
    stats.files.push(entry);
    if (await cache.has(file.sha256)) {
      // A server that did not know the board holds it may have pushed it behind op.start.
      link.current?.declinePush({ kind: 'content', sha256: file.sha256 }, 'the board holds this file already');
      await cache.touch(file.sha256);
      entry.cached = true;
      stats.filesCached++;
      doneBefore += file.size;
      reporter.progress('transfer', doneBefore, total);
      return;
    }
    await pullOne(file, entry);
    stats.filesPulled++;
    doneBefore += file.size;
    reporter.progress('transfer', doneBefore, total);
  }

  async function pullOne(file: FileRef, entry: TransferredFile): Promise<void> {
    for (;;) {
      const connection = await link.whenReady(signal).catch(() => {
        throw new OperationStopped('stopped');
      });
      const pull = await cache.beginPull(file.sha256, file.size);
      try {
        if (pull.offset < file.size) {
          reporter.note(
            pull.offset > 0
              ? `resuming ${file.kind} ${file.filename} at byte ${pull.offset} of ${file.size}`
              : `pulling ${file.kind} ${file.filename} (${file.size} bytes)`,
          );
          const source = { kind: 'content', sha256: file.sha256 } as const;
          const counting = {
            onBytes: (n: number) => {
              stats.bytesPulled += n;
              entry.bytes_pulled += n;
              reporter.progress('transfer', doneBefore + pull.bytesOnDisk, total);
            },
          };
          // The stream the server pushed right behind op.start, if it did (no pull's round trip).
          const pushed = connection.adoptPush(source, pull.offset, pull.sink, counting);
          if (pushed) entry.pushed = true;
          const receiver = pushed ?? connection.pull(source, pull.offset, pull.sink, counting);
          const onAbort = () => receiver.fail({ code: 'cancelled', message: 'the operation was stopped' }, true);
          signal.addEventListener('abort', onAbort, { once: true });
          try {
            await receiver.done;
          } finally {
            signal.removeEventListener('abort', onAbort);
            // What crossed the wire counts even for an attempt the link cut (a resume follows).
            entry.wire_bytes += receiver.wireBytes;
            stats.wireBytes += receiver.wireBytes;
          }
        }
        await pull.commit();
        return;
      } catch (err) {
        const refused = pull.writeFailure;
        if (refused) {
          // The board's own disk refused the bytes: give the space back rather than keep a
          // partial file for a resume that cannot succeed (the disk would stay full).
          await pull.discard();
          if (signal.aborted) throw new OperationStopped('stopped');
          throw new OperationError(
            refused.code === 'ENOSPC' ? 'disk_full' : 'write_failed',
            `${file.kind} ${file.filename}: the board could not store it (${refused.message}); its partial file was removed`,
          );
        }
        await pull.close();
        if (signal.aborted) throw new OperationStopped('stopped');
        if (err instanceof CacheError) throw new OperationError(err.code, `${file.kind} ${file.filename}: ${err.message}`);
        if (err instanceof StreamError && err.info.code === 'link_closed') {
          opts.log.info({ sha256: file.sha256, bytes_on_disk: pull.bytesOnDisk }, 'pull interrupted by the link: resuming on the next connection');
          continue;
        }
        if (err instanceof StreamError) {
          throw new OperationError('transfer_failed', `${file.kind} ${file.filename}: the server aborted the transfer (${err.info.code}: ${err.info.message})`);
        }
        throw new OperationError('transfer_failed', `${file.kind} ${file.filename}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
