import type { UploadHandle, UploadRegistry } from '../agent-link/uploads.ts';
import type { Logger } from '../logger.ts';
import type { OperationEventLog } from '../operations/event-log.ts';
import { isFinal, type OperationObject } from '../operations/operation-object.ts';

/**
 * The uploaded PAC archives offered to boards, by upload id (ids are random UUIDs). An
 * archive is stored (pinned) in the blob store by the multipart helper, then offered to one
 * board as an `upload` pull source; its upload id goes to `pac.install`. Releasing it
 * takes the offer back and gives the bytes back to the store (removed unless an
 * invocation happens to hold the very same content).
 */
export class ArchiveUploads {
  /** Releases of the archives offered to agents, by upload id. */
  private readonly held = new Map<string, () => Promise<void>>();

  constructor(
    private readonly deps: {
      uploads: UploadRegistry;
      /** Gives ingested content back to the store (unpin and collect). */
      discard: (sha256: string) => Promise<void>;
      /** Whether the blob store holds the content. */
      has: (sha256: string) => Promise<boolean>;
      events: OperationEventLog;
      getOperation: (id: number) => Promise<OperationObject | undefined>;
      log: Logger;
    },
  ) {}

  /** Offers the stored archive to one board; answers the upload id for `pac.install`. */
  hold(boardId: string, sha256: string): string {
    const handle = this.deps.uploads.registerBlob(sha256, { boardId });
    this.held.set(handle.id, async () => {
      handle.release();
      await this.deps.discard(sha256);
    });
    return handle.id;
  }

  /**
   * Offers stored content to one board without taking it over (a rollout's `pac_install`
   * step: the same archive goes to every board, and stays stored for the next one).
   */
  offerStored(boardId: string, sha256: string): UploadHandle {
    return this.deps.uploads.registerBlob(sha256, { boardId });
  }

  /** Whether the blob store still holds the content. */
  isStored(sha256: string): Promise<boolean> {
    return this.deps.has(sha256);
  }

  /** Ends the offer and removes the archive; later calls for the same id do nothing. */
  async release(uploadId: string): Promise<void> {
    const release = this.held.get(uploadId);
    if (!release) return;
    this.held.delete(uploadId);
    await release();
  }

  /** Whether the archive is still offered (false after a release, or after a server restart). */
  isHeld(uploadId: string): boolean {
    return this.held.has(uploadId);
  }

  /**
   * Releases the archive once the operation has ended, however it ends: run, failed,
   * cancelled while queued. (The run also releases it as soon as the board has it.)
   */
  releaseWhenEnded(opId: number, uploadId: string): void {
    const { log } = this.deps;
    const release = () => {
      unsubscribe();
      this.release(uploadId).catch((err: unknown) => log.warn({ err, op_id: opId }, 'could not remove a PAC archive upload'));
    };
    const unsubscribe = this.deps.events.subscribe(opId, (event) => {
      if (event.type === 'end') release();
    });
    // Subscribed before looking, so an end in between is not missed.
    this.deps.getOperation(opId).then(
      (op) => {
        if (!op || isFinal(op.status)) release();
      },
      (err: unknown) => log.warn({ err, op_id: opId }, 'could not look up a PAC install operation'),
    );
  }
}
