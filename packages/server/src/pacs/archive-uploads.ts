import type { AppContext } from '../app-context.ts';
import { isFinal } from '../operations/operation-object.ts';
import { discardIngestedContent } from '../services/invocation-files.ts';

/** Releases of the archives offered to agents, by upload id (ids are random UUIDs). */
const held = new Map<string, () => Promise<void>>();

/**
 * Offers an uploaded PAC archive (stored, pinned, by the multipart helper in the content
 * store) to one board as an `upload` pull source. Answers the upload id for `pac.install`.
 * `releaseArchive` takes it back and gives the bytes back to the store (removed unless an
 * invocation happens to hold the very same content).
 */
export function holdArchive(ctx: AppContext, boardId: string, sha256: string): string {
  const handle = ctx.agents.uploads.register(ctx.files.pathOf(sha256), { boardId });
  held.set(handle.id, async () => {
    handle.release();
    await discardIngestedContent(ctx, sha256);
  });
  return handle.id;
}

/** Ends the offer and removes the archive; later calls for the same id do nothing. */
export async function releaseArchive(uploadId: string): Promise<void> {
  const release = held.get(uploadId);
  if (!release) return;
  held.delete(uploadId);
  await release();
}

/** Whether the archive is still offered (false after a release, or after a server restart). */
export function isArchiveHeld(uploadId: string): boolean {
  return held.has(uploadId);
}

/**
 * Releases the archive once the operation has ended, however it ends: run, failed,
 * cancelled while queued. (The run also releases it as soon as the board has it.)
 */
export function releaseArchiveWhenEnded(ctx: AppContext, opId: number, uploadId: string): void {
  const release = () => {
    unsubscribe();
    releaseArchive(uploadId).catch((err: unknown) => ctx.log.warn({ err, op_id: opId }, 'could not remove a PAC archive upload'));
  };
  const unsubscribe = ctx.operations.events.subscribe(opId, (event) => {
    if (event.type === 'end') release();
  });
  // Subscribed before looking, so an end in between is not missed.
  ctx.operations.get(opId).then(
    (op) => {
      if (!op || isFinal(op.status)) release();
    },
    (err: unknown) => ctx.log.warn({ err, op_id: opId }, 'could not look up a PAC install operation'),
  );
}
