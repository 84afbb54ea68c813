import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { ApiError, BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import type { BlobStore, StoredBlob } from '../storage/blob-store.ts';
import { plainFileName } from './file-name.ts';

/** A file part stored in the content store (still pinned: record it or discard it). */
export interface ReceivedFile extends StoredBlob {
  /** The base name of the filename the client sent. */
  filename: string;
  /** The part's declared Content-Type (untrusted; informative only). */
  declaredType: string;
}

export interface ReceivedUpload {
  fields: Map<string, string>;
  file: ReceivedFile | undefined;
}

export interface ReceiveUploadOptions {
  store: BlobStore;
  /** Name of the one file part; other file parts are read and dropped. */
  fileField: string;
  maxFileBytes: number;
  /** Checks a text field as soon as it arrives (throw an ApiError to fail early). */
  checkField?: (name: string, value: string) => void;
  /** Gives back content stored for an upload that then failed (unpin and collect it). */
  discard: (sha256: string) => Promise<void>;
}

/** The client went away mid-upload; nobody is left to read the answer, so it is no server error. */
export class ClientAbortedError extends BadRequestError {
  constructor() {
    super('upload_aborted', 'The client closed the connection before the upload ended.');
  }
}

const MAX_FIELD_BYTES = 64 * 1024;
const MAX_FIELDS = 32;
/** Room for the form's fields, part headers and boundaries around the file. */
const MAX_FORM_OVERHEAD_BYTES = MAX_FIELDS * MAX_FIELD_BYTES + 1024 * 1024;

/**
 * Reads a multipart/form-data request from the raw Node request, streaming its file part
 * straight into the content store (hashed on the way, never held in memory), in whatever
 * order the parts come. Resolves once the whole body is read and the file is stored.
 * Any failure (malformed body, too large, client gone) settles only after the partial
 * content is removed, so nothing of it is left on disk.
 */
export function receiveUpload(req: IncomingMessage, opts: ReceiveUploadOptions): Promise<ReceivedUpload> {
  requireMultipart(req.headers['content-type']);
  // A declared length beyond the file limit plus every field and header the form may carry
  // cannot hold an acceptable file: refuse it before reading a byte.
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > opts.maxFileBytes + MAX_FORM_OVERHEAD_BYTES) throw tooLarge(opts.maxFileBytes);

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // Browsers send a file name's UTF-8 bytes as they are in `filename="…"`; busboy reads latin1 by default.
      defParamCharset: 'utf8',
      // One byte over the limit is enough for the store to tell "too large" from "exactly the limit".
      limits: { fileSize: opts.maxFileBytes + 1, fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, parts: 64, headerPairs: 64 },
    });
  } catch (e) {
    throw new BadRequestError('malformed_multipart', `The multipart body cannot be read: ${(e as Error).message}`);
  }

  return new Promise<ReceivedUpload>((resolve, reject) => {
    const fields = new Map<string, string>();
    const abort = new AbortController();
    let stored: Promise<ReceivedFile> | undefined;
    let settled = false;

    const detach = () => {
      req.off('close', onRequestClose);
      req.unpipe(parser);
      parser.removeAllListeners();
      // busboy may still report the cut-off body; nobody listens any more.
      parser.on('error', () => {});
    };

    const fail = async (err: unknown) => {
      if (settled) return;
      settled = true;
      detach();
      abort.abort(err);
      if (stored) {
        const done = await stored.then(
          (f) => f,
          () => undefined,
        );
        if (done) await opts.discard(done.sha256).catch(() => {});
      }
      reject(err);
    };

    const succeed = async () => {
      if (settled) return;
      try {
        const file = stored ? await stored : undefined;
        if (settled) return; // failed meanwhile; fail() discards the file
        settled = true;
        detach();
        resolve({ fields, file });
      } catch (err) {
        await fail(err);
      }
    };

    const onRequestClose = () => {
      // 'close' also follows a complete body; only an incomplete one means the client left.
      if (!req.complete) void fail(new ClientAbortedError());
    };
    req.on('close', onRequestClose);

    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) {
        void fail(new BadRequestError('field_too_large', `The form field ${JSON.stringify(name)} is too long.`));
        return;
      }
      try {
        opts.checkField?.(name, value);
      } catch (err) {
        void fail(err);
        return;
      }
      fields.set(name, value);
    });

    parser.on('file', (name, stream, info) => {
      // busboy destroys a file stream with its own error when the body breaks off, possibly
      // after the store stopped listening to it (the failure is handled through the parser).
      stream.on('error', () => {});
      if (settled || name !== opts.fileField) {
        stream.resume();
        return;
      }
      if (stored) {
        stream.resume();
        void fail(new BadRequestError('too_many_files', `Send one ${JSON.stringify(opts.fileField)} part.`));
        return;
      }
      const filename = plainFileName(info.filename ?? '');
      const declaredType = info.mimeType;
      stored = opts.store
        .ingest(stream, { maxBytes: opts.maxFileBytes, signal: abort.signal })
        .then((content) => {
          // busboy stops at limit + 1 bytes; the store rejects those itself, this is a backstop.
          if ((stream as { truncated?: boolean }).truncated) throw tooLarge(opts.maxFileBytes);
          return { ...content, filename, declaredType };
        });
      stored.catch((err: unknown) => void fail(err instanceof PayloadTooLargeError ? tooLarge(opts.maxFileBytes) : err));
    });

    parser.on('partsLimit', () => void fail(new BadRequestError('too_many_parts', 'The form has too many parts.')));
    parser.on('fieldsLimit', () => void fail(new BadRequestError('too_many_parts', 'The form has too many fields.')));
    parser.on('error', (err: Error) =>
      void fail(err instanceof ApiError ? err : new BadRequestError('malformed_multipart', `The multipart body cannot be read: ${err.message}`)),
    );
    parser.on('close', () => void succeed());

    req.pipe(parser);
  });
}

function requireMultipart(contentType: string | undefined): void {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'multipart/form-data') {
    throw new UnsupportedMediaTypeError(`Send the upload as multipart/form-data (got ${contentType ? JSON.stringify(contentType) : 'no Content-Type'}).`);
  }
  if (!/;\s*boundary=/i.test(contentType ?? '')) {
    throw new BadRequestError('malformed_multipart', 'The multipart/form-data Content-Type has no boundary.');
  }
}

function tooLarge(max: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The file is larger than the limit of ${max} bytes (MM_MAX_UPLOAD_BYTES).`);
}
