/**
 * A board that floods the server (issue 27, hole 1), with a raw `ws` client holding a real
 * board token: invalid messages get the link closed with its own code, and a peer that
 * never answers a ping is cut by the heartbeat however much it sends. The memory figures
 * are bench/agent-link-flood.ts's; the bounds themselves are tested in the protocol's
 * link-peer.test.ts.
 */
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AGENT_CONNECT_PATH, CloseCode } from '@mm/protocol';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';

async function rawLink(server: TestServer, token: string, opts: { autoPong?: boolean } = {}) {
  const ws = new WebSocket(new URL(AGENT_CONNECT_PATH, server.url.replace(/^http/, 'ws')), {
    headers: { authorization: `Bearer ${token}` },
    autoPong: opts.autoPong ?? true,
  });
  ws.on('error', () => {});
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  return { ws, closed, tcp: (ws as unknown as { _socket: net.Socket })._socket };
}

describe.each(dbKinds)('an agent link that floods the server (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_HEARTBEAT_INTERVAL_MS: '100', MM_HEARTBEAT_TIMEOUT_MS: '600' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('closes a link that floods invalid messages without reading, with CloseCode.invalidMessages', async () => {
    const board = await registerBoard(server, 'flood-invalid');
    // Reads nothing, but answers pings (ws answers them when it reads: so it reads later).
    const link = await rawLink(server, board.token);
    link.tcp.pause();
    const body = JSON.stringify({ type: 'x'.repeat(16 * 1024) });
    for (let i = 0; i < 2000 && link.ws.readyState === WebSocket.OPEN; i++) {
      link.ws.send(body);
      if (link.ws.bufferedAmount > 4 * 1024 * 1024) await new Promise((r) => setTimeout(r, 5));
    }
    // It reads again: what it finds ends with the server's close (or the cut after the close grace).
    link.tcp.resume();
    const code = await link.closed;
    expect([CloseCode.invalidMessages, 1006]).toContain(code);
  });

  it('cuts a link that sends all the time but never answers a ping', async () => {
    const board = await registerBoard(server, 'flood-deaf');
    const link = await rawLink(server, board.token, { autoPong: false });
    let open = true;
    void link.closed.then(() => (open = false));
    const started = Date.now();
    // Valid messages the server takes without an answer, every 20 ms, far past the timeout.
    for (let id = 1; open && Date.now() - started < 20_000; id++) {
      link.ws.send(JSON.stringify({ type: 'rpc.response', id, ok: true, result: null }));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(open, 'the deaf link was never cut').toBe(false);
    expect(await link.closed).toBe(1006);
  });
});
