/**
 * Limits of the HTTP server itself: request bodies are timed by inactivity, not in total
 * (MM_HTTP_IDLE_TIMEOUT_S), and JSON bodies over 1 MiB are refused without being read.
 * Raw sockets, so the test controls exactly when each byte is sent.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

const IDLE_S = 2;
const HEADERS_S = 1.5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw HTTP/1.1 connection: write when you like, read everything the server sends, see when it closes. */
async function connect(baseUrl: string) {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    closed,
    received: () => received,
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    /** Resolves with the status and body of the first complete response (Content-Length framed). */
    async response(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const head = received.indexOf('\r\n\r\n');
        if (head >= 0) {
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.slice(0, head))?.[1] ?? 0);
          if (received.length >= head + 4 + length) {
            return { status: Number(received.slice(9, 12)), head: received.slice(0, head), body: received.slice(head + 4, head + 4 + length) };
          }
        }
        if (Date.now() > deadline) throw new Error(`no complete response within ${timeoutMs} ms; got ${JSON.stringify(received.slice(0, 300))}`);
        await sleep(20);
      }
    },
  };
}

function multipart(fileBytes: number) {
  const boundary = 'mm-test-boundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\nparameter\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  return { boundary, head, tail, length: Buffer.byteLength(head) + fileBytes + Buffer.byteLength(tail) };
}

describe.each(dbKinds)('HTTP limits (%s database)', (kind) => {
  let server: TestServer;
  let invocationId: number;

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_HTTP_IDLE_TIMEOUT_S: String(IDLE_S), MM_HTTP_HEADERS_TIMEOUT_S: String(HEADERS_S) });
    const res = await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'limits', description: '' }) });
    invocationId = (await json(res)).id;
  });
  afterAll(async () => {
    await server?.stop();
  });

  const parameterFile = async () => (await json(await server.api(`/api/invocations/${invocationId}/`))).files.parameter;
  const invocationCount = async () => (await json(await server.api('/api/invocations/'))).total as number;

  it('an upload that keeps sending may take far longer than the idle limit (no total time limit)', async () => {
    const chunk = Buffer.alloc(16 * 1024, 7);
    const chunks = 24;
    const form = multipart(chunk.length * chunks);
    const conn = await connect(server.url);
    await conn.write(
      `POST /api/invocations/${invocationId}/upload/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${form.boundary}\r\nContent-Length: ${form.length}\r\n\r\n${form.head}`,
    );
    const started = Date.now();
    // About 6 s of steady trickle: three times the idle limit, never idle for a quarter of it.
    for (let i = 0; i < chunks; i++) {
      await conn.write(chunk);
      await sleep(250);
    }
    await conn.write(form.tail);
    const res = await conn.response();
    expect(Date.now() - started).toBeGreaterThan(IDLE_S * 1000 * 2);
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body).size).toBe(chunk.length * chunks);
    conn.socket.destroy();
  });

  it('an upload that stalls is closed after the idle limit and leaves nothing behind', async () => {
    const before = await parameterFile();
    const form = multipart(10 * 1024 * 1024);
    const conn = await connect(server.url);
    await conn.write(
      `POST /api/invocations/${invocationId}/upload/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${form.boundary}\r\nContent-Length: ${form.length}\r\n\r\n${form.head}`,
    );
    await conn.write(Buffer.alloc(64 * 1024, 1));
    const stalledAt = Date.now();
    // Then nothing: the server must close the socket by itself.
    const closedInTime = await Promise.race([conn.closed.then(() => true), sleep(IDLE_S * 1000 + 15_000).then(() => false)]);
    expect(closedInTime, 'the stalled upload was never closed').toBe(true);
    expect(Date.now() - stalledAt).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    expect(await parameterFile()).toEqual(before);
  });

  it('a request without a body may wait as long as its handler takes (the idle limit times bodies only)', async () => {
    const conn = await connect(server.url);
    // A keep-alive GET whose response comes at once; then the idle connection is the keep-alive timeout's business.
    await conn.write(`GET /api/invocations/${invocationId}/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect((await conn.response()).status).toBe(200);
    conn.socket.destroy();
  });

  it('clients that trickle header lines are cut at the header deadline (requestTimeout 0 does not turn it off)', async () => {
    // Five slow-header clients: one header line every 200 ms, never the blank line that ends them.
    const conns = await Promise.all(Array.from({ length: 5 }, () => connect(server.url)));
    const started = Date.now();
    let closedAll = false;
    const allClosed = Promise.all(conns.map((c) => c.closed)).then(() => (closedAll = true));
    await Promise.all(conns.map((c) => c.write(`GET /api/invocations/ HTTP/1.1\r\nHost: 127.0.0.1\r\n`)));
    for (let i = 0; !closedAll && Date.now() - started < HEADERS_S * 1000 + 15_000; i++) {
      await Promise.all(conns.map((c) => (c.socket.destroyed ? undefined : c.write(`X-Slow-${i}: ${i}\r\n`))));
      await sleep(200);
    }
    await Promise.race([allClosed, sleep(1000)]);
    expect(closedAll, 'a slow-header client was never cut').toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_S * 1000 - 100);
    // Node answers 408 before closing a connection whose headers ran out of time.
    for (const c of conns) expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a JSON body declared over 1 MiB is 413 before any of it is read', async () => {
    const count = await invocationCount();
    const conn = await connect(server.url);
    // 200 MB announced, 64 KiB sent: the answer must come without the rest.
    await conn.write(`POST /api/invocations/create/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024 * 1024}\r\n\r\n{"name":"big","description":"`);
    await conn.write('x'.repeat(64 * 1024));
    const res = await conn.response();
    expect(res.status).toBe(413);
    expect(res.head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(res.body).code).toBe('payload_too_large');
    await conn.closed;
    expect(await invocationCount()).toBe(count);
  });

  it('a chunked JSON body is cut at 1 MiB with 413, without waiting for (or holding) the rest', async () => {
    const count = await invocationCount();
    const conn = await connect(server.url);
    await conn.write(`POST /api/invocations/create/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const piece = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    await conn.write(piece('{"name":"big","description":"'));
    // 1.5 MiB of a body that never ends: the server must answer while it is still coming.
    for (let i = 0; i < 24; i++) await conn.write(piece('y'.repeat(64 * 1024)));
    const res = await conn.response();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).code).toBe('payload_too_large');
    await conn.closed;
    expect(await invocationCount()).toBe(count);
  });

  it('JSON bodies up to 1 MiB are read as before, and non-JSON bodies are not capped by it', async () => {
    const description = 'z'.repeat(900 * 1024);
    const res = await server.api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'almost 1 MiB', description }) });
    expect(res.status).not.toBe(413);
    const chunked = await connect(server.url);
    const body = JSON.stringify({ name: 'chunked', description: 'small' });
    await chunked.write(`POST /api/invocations/create/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    expect((await chunked.response()).status).toBe(201);
    chunked.socket.destroy();
  });
});
