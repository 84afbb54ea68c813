import type { MiddlewareHandler } from 'hono';
import { PayloadTooLargeError } from '../errors.ts';

/** The largest JSON request body the API reads (the contract: over 1 MiB is 413). */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * JSON bodies are parsed whole, so their size is capped before anything reads them: a
 * declared `Content-Length` over the cap is 413 at once (nothing read), and a chunked body
 * is counted as it is read and cut at the cap (at most the cap is ever held). The 413
 * closes the connection, so the rest of a large body is never drained either.
 *
 * `exempt` names paths whose bodies are streams rather than JSON documents (the
 * device-script proxy passes its body through to the board whatever its type).
 */
export function jsonBodyLimit(opts: { maxBytes?: number; exempt?: (path: string) => boolean } = {}): MiddlewareHandler {
  const maxBytes = opts.maxBytes ?? MAX_JSON_BODY_BYTES;
  const tooLarge = () => {
    const err = new PayloadTooLargeError(`A JSON request body may be at most ${maxBytes} bytes.`);
    err.headers.connection = 'close';
    return err;
  };
  return async (c, next) => {
    // Headers first: touching the body of a request that is not JSON (an upload streamed
    // from the socket by its handler) would turn it into a web stream for nothing.
    if (!JSON_TYPE.test(c.req.header('content-type') ?? '') || opts.exempt?.(c.req.path)) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(declared) > maxBytes) throw tooLarge();
      return next();
    }
    const body = c.req.raw.body;
    if (!body) return next();
    let seen = 0;
    let exceeded = false;
    const reader = body.getReader();
    const counted = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > maxBytes) {
          exceeded = true;
          await reader.cancel().catch(() => {});
          return controller.error(tooLarge());
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers: c.req.raw.headers, body: counted, signal: c.req.raw.signal, duplex: 'half' } as RequestInit);
    await next();
    // Whoever read the body saw it fail (a validator reports that as malformed JSON): the cause is its size.
    if (exceeded) throw tooLarge();
  };
}
