import { PassThrough, type Readable } from 'node:stream';
import { writableSink } from '@mm/protocol';
import { RpcError, type RpcContext } from '../rpc/rpc-registry.ts';

/** Bytes buffered between the link and the consumer; the link's credit window does the rest. */
const BUFFER_BYTES = 1024 * 1024;

/**
 * The bytes of an upload the server holds for an RPC (a PAC archive for `pac.install`), as a
 * Readable: a `stream.pull { source: { kind: 'upload', upload_id } }` over the request's own
 * connection, read as fast as the consumer reads (credit is granted only for bytes the
 * consumer has taken, so nothing piles up in memory).
 *
 * A failed pull (unknown upload, link closed) errors the stream with RpcError
 * `upload_failed`, which the RPC answers as such. A consumer that stops early destroys the
 * stream; the pull then fails and is aborted towards the server.
 */
export function openUploadStream(uploadId: string, ctx: RpcContext): Readable {
  const stream = new PassThrough({ highWaterMark: BUFFER_BYTES });
  // The consumer sees errors through its own listeners (pipeline, iteration); this one only
  // keeps an error that arrives after the consumer let go from being an uncaught exception.
  stream.on('error', () => {});
  const sink = writableSink(stream);
  const receiver = ctx.connection.pull({ kind: 'upload', upload_id: uploadId }, 0, {
    write: (chunk) => sink.write(chunk),
    finish: () => sink.finish(),
    destroy: (error) => {
      if (stream.destroyed) return;
      const message = `could not receive upload ${uploadId} from the server: ${error.message}`;
      stream.destroy(new RpcError('upload_failed', message));
    },
  });
  receiver.done.then(
    ({ bytes }) => ctx.log.debug({ upload_id: uploadId, bytes }, 'upload received'),
    (err: unknown) => ctx.log.info({ upload_id: uploadId, err }, 'upload pull ended early'),
  );
  return stream;
}
