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

export class UploadRegistry {
  private readonly files = new Map<string, { path: string; boardId: string | undefined }>();

  /** Offers `filePath` (to `boardId` only, when given). The file must stay until release(). */
  register(filePath: string, opts: { boardId?: string } = {}): UploadHandle {
    const id = randomUUID();
    this.files.set(id, { path: filePath, boardId: opts.boardId });
    return { id, release: () => void this.files.delete(id) };
  }

  /** The file behind `id`, if it is offered to `boardId`. */
  resolve(id: string, boardId: string): string | undefined {
    const f = this.files.get(id);
    if (!f || (f.boardId !== undefined && f.boardId !== boardId)) return undefined;
    return f.path;
  }
}
