/**
 * MM_AGENT_HANDSHAKES_MAX: agent handshakes in progress (token lookup to settled hello) are
 * bounded; over the bound an upgrade gets 503 `server_busy` with Retry-After at once, and a
 * place frees when a hello is settled, a token is refused or the socket closes.
 */
import http from 'node:http';
import { AGENT_CONNECT_PATH } from '@mm/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

/** An upgrade request's answer when it is refused (status, headers, body); 101 when it is not. */
function upgradeAnswer(baseUrl: string, token: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(AGENT_CONNECT_PATH, baseUrl), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: `Bearer ${token}` },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

describe.each(dbKinds)('agent handshakes in progress are bounded (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_AGENT_HANDSHAKES_MAX: '1' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses an upgrade over the bound with 503 server_busy and Retry-After, and takes it once the place is free', async () => {
    const a = await registerBoard(server, 'hs-a');
    const b = await registerBoard(server, 'hs-b');
    // A linked but not yet greeted: it holds the one place.
    const first = await FakeAgent.connect(server.url, a.token);
    const busy = await upgradeAnswer(server.url, b.token);
    expect(busy.status).toBe(503);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(busy.headers['retry-after'])).toBeLessThanOrEqual(5);
    expect(busy.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(JSON.parse(busy.body)).toMatchObject({ status: 503, code: 'server_busy' });
    // Once its hello is settled (just after the welcome), the place is free.
    await first.hello();
    let second: FakeAgent | undefined;
    for (let i = 0; i < 50 && !second; i++) {
      second = await FakeAgent.online(server.url, b.token).catch(async (e: unknown) => {
        expect(String(e)).toMatch(/refused with 503/);
        await new Promise((r) => setTimeout(r, 50));
        return undefined;
      });
    }
    if (!second) throw new Error('the place never freed');
    await second.close();
    await first.close();
  });

  it('frees the place of a refused token and of a socket that closes before its hello', async () => {
    const c = await registerBoard(server, 'hs-c');
    expect((await upgradeAnswer(server.url, 'not-a-board-token')).status).toBe(401);
    const silent = await FakeAgent.connect(server.url, c.token);
    await silent.close();
    // The close reaches the server asynchronously: the place frees shortly after.
    let answer = await upgradeAnswer(server.url, c.token);
    for (let i = 0; i < 50 && answer.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 50));
      answer = await upgradeAnswer(server.url, c.token);
    }
    expect(answer.status).toBe(101);
  });
});
