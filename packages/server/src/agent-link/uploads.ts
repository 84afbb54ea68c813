import { randomUUID } from 'node:crypto';

/**
 * Files the server offers to an agent for one RPC (e.g. a PAC archive for `pac.install`):
 * register the file, pass `upload_id` in the RPC's params, the agent pulls it with
 * `stream.pull { source: { kind: 'upload', upload_id } }`, release it when the RPC is done.
 */
export interface UploadHandle {
  id: string;
  release(): void;
}

/** What an upload id stands for: a file on disk, or content of the blob store. */
export type UploadSource = { file: string } | { blob: string };

export class UploadRegistry {
  private readonly offered = new Map<string, { source: UploadSource; boardId: string | undefined }>();

  /** Offers a file (to `boardId` only, when given). The file must stay until release(). */
  register(filePath: string, opts: { boardId?: string } = {}): UploadHandle {
    return this.offer({ file: filePath }, opts);
  }

  /** Offers stored content (to `boardId` only, when given); it must stay until release(). */
  registerBlob(sha256: string, opts: { boardId?: string } = {}): UploadHandle {
    return this.offer({ blob: sha256 }, opts);
  }

  /** What `id` stands for, if it is offered to `boardId`. */
  resolve(id: string, boardId: string): UploadSource | undefined {
    const f = this.offered.get(id);
    if (!f || (f.boardId !== undefined && f.boardId !== boardId)) return undefined;
    return f.source;
  }

  private offer(source: UploadSource, opts: { boardId?: string }): UploadHandle {
    const id = randomUUID();
    this.offered.set(id, { source, boardId: opts.boardId });
    return { id, release: () => void this.offered.delete(id) };
  }
}
