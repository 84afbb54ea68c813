import type { IncomingMessage } from 'node:http';
import type { StoreContext } from '../store-context.ts';
import { type ReceivedFile, receiveUpload } from '../http/multipart.ts';
import { discardIngestedContent } from '../invocations/invocation-files.ts';

export interface FileUploadOptions<T> {
  /** Checks a text field as soon as it arrives: a bad one sent before the file fails before any byte is stored. */
  checkField?: (name: string, value: string) => void;
  /**
   * Checks the whole upload once the body is read (the file part may be missing) and
   * returns what the route goes on with. If it throws, the stored file is discarded.
   */
  accept: (fields: Map<string, string>, file: ReceivedFile | undefined) => T | Promise<T>;
}

/**
 * Receives a multipart/form-data upload whose file part is named `file` into the content
 * store (at most MM_MAX_UPLOAD_BYTES), then lets `accept` check it: the content of an
 * upload that fails either way is given back, so nothing of it is kept.
 */
export async function receiveFileUpload<T>(ctx: StoreContext, req: IncomingMessage, opts: FileUploadOptions<T>): Promise<T> {
  const { fields, file } = await receiveUpload(req, {
    store: ctx.files,
    fileField: 'file',
    maxFileBytes: ctx.config.maxUploadBytes,
    checkField: opts.checkField,
    discard: (sha256) => discardIngestedContent(ctx, sha256),
  });
  try {
    return await opts.accept(fields, file);
  } catch (err) {
    if (file) await discardIngestedContent(ctx, file.sha256);
    throw err;
  }
}
