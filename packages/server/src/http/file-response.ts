import fsp from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { PreconditionFailedError, RangeNotSatisfiableError } from '../errors.ts';
import { READ_CHUNK_BYTES } from '../storage/content-store.ts';
import { decideRange } from './range.ts';

/** What a download route knows about the file it serves. */
export interface ServedFile {
  size: number;
  /** A strong entity tag, quoted (e.g. `"<sha256>"`). */
  etag: string;
  lastModified: Date;
  contentType: string;
  disposition?: { type: 'inline' | 'attachment'; filename: string };
  /**
   * Opens the bytes start..end (inclusive); called at most once, never for HEAD, 304 or
   * 416. Opening before the headers go lets a vanished file still become a 404.
   */
  open(span: { start: number; end: number }): Readable | Promise<Readable>;
  /**
   * Where the client may fetch the bytes itself (a presigned object-store URL), or
   * undefined to stream them. A GET is then answered 302 (Range and conditionals go to
   * the store, which honours them); HEAD, 304 and 416 are still answered here.
   */
  redirect?(headers: { contentType: string; contentDisposition: string | undefined }): Promise<string | undefined>;
  /**
   * The file's URI in the reverse proxy's internal location (MM_ACCEL_REDIRECT): the answer
   * is then only headers and `X-Accel-Redirect`, and nginx sends the bytes itself
   * (sendfile; Range and conditional requests are nginx's too).
   */
  accelRedirect?: string;
}

/** `prefix` followed by each segment, percent-encoded (nginx decodes the URI before mapping it to a file). */
export function accelRedirectPath(prefix: string, segments: readonly string[]): string {
  return prefix + segments.map((s) => encodeURIComponent(s)).join('/');
}


/** `ServedFile.open` for a file on local disk: read in 1 MiB chunks from the requested range. */
export function localFileOpener(absolutePath: string): ServedFile['open'] {
  return async ({ start, end }) => (await fsp.open(absolutePath, 'r')).createReadStream({ start, end, highWaterMark: READ_CHUNK_BYTES });
}

/**
 * Answers a GET or HEAD for a file: conditional requests (If-None-Match, If-Modified-Since
 * → 304), Range (206; 416 with a Content-Range naming the size; If-Range honoured), and a
 * streamed body. The read stream is destroyed when the client goes away (the server
 * cancels the body, and cancelling a `Readable.toWeb` stream destroys its source).
 */
export async function serveFile(c: Context, file: ServedFile): Promise<Response> {
  const headers: Record<string, string> = {
    'accept-ranges': 'bytes',
    etag: file.etag,
    'last-modified': file.lastModified.toUTCString(),
    // The same URL may serve other bytes after a new upload: revalidate (cheap, via ETag).
    'cache-control': 'private, no-cache',
    'x-content-type-options': 'nosniff',
  };

  if (file.accelRedirect !== undefined) {
    // nginx keeps Content-Type, Content-Disposition and Cache-Control of this answer and
    // makes its own ETag, Last-Modified and Content-Length from the file.
    const accel: Record<string, string> = {
      'x-accel-redirect': file.accelRedirect,
      'content-type': file.contentType,
      'cache-control': headers['cache-control']!,
      'x-content-type-options': 'nosniff',
    };
    if (file.disposition) accel['content-disposition'] = contentDisposition(file.disposition.type, file.disposition.filename);
    return new Response(null, { status: 200, headers: accel });
  }

  // RFC 9110 §13.2.2: If-Match, else If-Unmodified-Since (412); then If-None-Match, else If-Modified-Since (304).
  const failed = failedPrecondition(c, file);
  if (failed) throw new PreconditionFailedError(failed);
  if (notModified(c, file)) return new Response(null, { status: 304, headers });

  headers['content-type'] = file.contentType;
  if (file.disposition) headers['content-disposition'] = contentDisposition(file.disposition.type, file.disposition.filename);

  const rangeHeader = rangeApplies(c, file) ? c.req.header('range') : undefined;
  const decision = decideRange(rangeHeader, file.size);
  if (decision.kind === 'unsatisfiable') throw new RangeNotSatisfiableError(file.size);

  let status = 200;
  let span = { start: 0, end: file.size - 1 };
  if (decision.kind === 'partial') {
    status = 206;
    span = { start: decision.start, end: decision.end };
    headers['content-range'] = `bytes ${span.start}-${span.end}/${file.size}`;
  }
  const length = span.end - span.start + 1;
  headers['content-length'] = String(length);

  if (c.req.method === 'HEAD' || length === 0) return new Response(null, { status, headers });
  const location = await file.redirect?.({ contentType: file.contentType, contentDisposition: headers['content-disposition'] });
  if (location !== undefined) {
    // The URL is a short-lived credential: never cached, never shared.
    return new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
  }
  const source = await file.open(span);
  // A span no larger than one read (a player's or downloader's typical Range request) is
  // answered from one buffer: the Node adapter then writes it with a single `end()`
  // instead of pumping a web stream, which costs more than the read itself. The stream
  // path would hold a buffer of that size too, so memory stays as bounded as before.
  if (length <= READ_CHUNK_BYTES) return new Response(await readWhole(source, length), { status, headers });
  const body = Readable.toWeb(source) as unknown as ReadableStream<Uint8Array>;
  return new Response(body, { status, headers });
}

/** The `length` bytes a stream yields, in one buffer; the stream is destroyed on failure. */
async function readWhole(source: Readable, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      got += chunk.byteLength;
    }
  } finally {
    source.destroy();
  }
  // The file changed under us (content-addressed files never do): answer no wrong bytes.
  if (got !== length) throw new Error(`expected ${length} bytes, read ${got}`);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, got);
}

/**
 * RFC 9110 §13.1.1 and §13.1.4: If-Match (strong comparison; `*` matches any current file)
 * wins over If-Unmodified-Since (an unparsable date is ignored). What failed, or undefined.
 */
function failedPrecondition(c: Context, file: ServedFile): string | undefined {
  const ifMatch = c.req.header('if-match');
  if (ifMatch !== undefined) {
    const tags = ifMatch.split(',').map((t) => t.trim());
    return tags.some((t) => t === '*' || t === file.etag) ? undefined : `If-Match does not name the file's current entity tag ${file.etag}.`;
  }
  const ius = c.req.header('if-unmodified-since');
  if (ius !== undefined) {
    const since = Date.parse(ius);
    if (Number.isFinite(since) && wholeSeconds(file.lastModified) > since) return `The file was modified after ${ius} (If-Unmodified-Since).`;
  }
  return undefined;
}

/** RFC 9110 §13.1.2–13.1.3: If-None-Match (weak comparison) wins over If-Modified-Since. */
function notModified(c: Context, file: ServedFile): boolean {
  const inm = c.req.header('if-none-match');
  if (inm !== undefined) {
    const mine = opaqueTag(file.etag);
    return inm.split(',').some((t) => t.trim() === '*' || opaqueTag(t.trim()) === mine);
  }
  const ims = c.req.header('if-modified-since');
  if (ims !== undefined) {
    const since = Date.parse(ims);
    return Number.isFinite(since) && wholeSeconds(file.lastModified) <= since;
  }
  return false;
}

/** If-Range (RFC 9110 §13.1.5): the Range applies only if the representation is unchanged. */
function rangeApplies(c: Context, file: ServedFile): boolean {
  const ifRange = c.req.header('if-range')?.trim();
  if (ifRange === undefined) return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === file.etag; // strong comparison
  const date = Date.parse(ifRange);
  return Number.isFinite(date) && date === wholeSeconds(file.lastModified);
}

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/** HTTP dates have one-second resolution. */
function wholeSeconds(d: Date): number {
  return Math.floor(d.getTime() / 1000) * 1000;
}

/** `inline; filename="…"; filename*=UTF-8''…` with an ASCII fallback (RFC 6266). */
export function contentDisposition(type: 'inline' | 'attachment', filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
