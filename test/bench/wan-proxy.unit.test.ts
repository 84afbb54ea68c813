/**
 * bench/wan-proxy.ts: bytes pass intact both ways, half-close and close propagate, and a
 * slow reader makes the proxy stop reading instead of buffering. Nothing here depends on
 * timing; the delay and rate the proxy achieves are measured and printed by the benchmark.
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWanProxy, type WanProxy } from '../../bench/wan-proxy.ts';

const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Upstream {
  port: number;
  accepted: Promise<net.Socket>;
  close(): void;
}

async function upstream(): Promise<Upstream> {
  let accept!: (s: net.Socket) => void;
  const accepted = new Promise<net.Socket>((r) => (accept = r));
  const server = net.createServer({ allowHalfOpen: true }, (s) => accept(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, accepted, close: () => server.close() };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Everything a socket receives until its peer's FIN. */
function readAll(s: net.Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('end', () => resolve(Buffer.concat(chunks)));
    s.once('error', reject);
  });
}

const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed && s.closed ? r() : s.once('close', () => r())));

describe('wan-proxy', () => {
  let proxy: WanProxy | undefined;
  let up: Upstream | undefined;
  afterEach(async () => {
    await proxy?.close();
    up?.close();
    proxy = undefined;
    up = undefined;
  });

  for (const shape of [
    { rttMs: 20, rateBytesPerS: 200e6 },
    { rttMs: 0, rateBytesPerS: Infinity },
  ]) {
    it(`passes bytes intact both ways and propagates half-close (rtt ${shape.rttMs} ms, ${shape.rateBytesPerS / 1e6} MB/s)`, async () => {
      up = await upstream();
      proxy = await startWanProxy({ target: { host: '127.0.0.1', port: up.port }, ...shape });
      const client = await connect(proxy.port);
      const server = await up.accepted;
      const toServer = randomBytes(6 * MiB + 123);
      const toClient = randomBytes(5 * MiB + 7);

      const serverGot = readAll(server);
      const clientGot = readAll(client);
      client.end(toServer); // half-close: the server sees the FIN after the data …
      expect(sha(await serverGot)).toBe(sha(toServer));
      expect(server.readableEnded).toBe(true);
      // … and can still answer over its half, which the client reads to its own FIN.
      expect(client.writableEnded).toBe(true);
      server.end(toClient);
      expect(sha(await clientGot)).toBe(sha(toClient));
      await Promise.all([closed(client), closed(server)]);
      expect(proxy.stats().up.bytes).toBe(toServer.length);
      expect(proxy.stats().down.bytes).toBe(toClient.length);
    });
  }

  it('passes a reset on: destroying one end closes the other', async () => {
    up = await upstream();
    proxy = await startWanProxy({ target: { host: '127.0.0.1', port: up.port }, rttMs: 10, rateBytesPerS: 100e6 });
    const client = await connect(proxy.port);
    client.on('error', () => {});
    const server = await up.accepted;
    client.write('hello');
    await new Promise<void>((r) => server.once('data', () => r()));
    server.resetAndDestroy();
    await closed(client);
    expect(client.destroyed).toBe(true);
  });

  it('stops reading when the receiver does not read: it holds no more than the wire and its queue', async () => {
    up = await upstream();
    const rateBytesPerS = 100e6;
    const rttMs = 20;
    proxy = await startWanProxy({ target: { host: '127.0.0.1', port: up.port }, rttMs, rateBytesPerS, queueMs: 20 });
    const client = await connect(proxy.port);
    const server = await up.accepted;
    const payload = randomBytes(32 * MiB);
    // The client reads nothing until the server's kernel buffers are full and its writes queue up.
    client.pause();
    const wrote = new Promise<void>((r) => server.end(payload, () => r()));
    await new Promise<void>((resolve) => {
      const check = () => (server.writableLength > 8 * MiB ? resolve() : setTimeout(check, 20));
      check();
    });
    const got = readAll(client);
    client.resume();
    expect(sha(await got)).toBe(sha(payload));
    await wrote;
    // Bound: rate × (one-way delay + queue) plus a read or two of slack (≈ 3 MB here), not 32 MiB.
    const bound = (rateBytesPerS * (rttMs / 2 + 20)) / 1000 + 4 * 64 * 1024;
    expect(proxy.stats().down.peakHeldBytes).toBeGreaterThan(0);
    expect(proxy.stats().down.peakHeldBytes).toBeLessThanOrEqual(bound);
  });
});
