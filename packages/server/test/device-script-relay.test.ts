/**
 * The control plane's side of the device-script relay, against a protocol-speaking test
 * agent (support/fake-agent.ts) over a real WebSocket: the exact link messages the relay
 * sends, flow-controlled bodies both ways, fan-out, slow clients, timeouts and reconnects.
 * The real agent and motor script are covered end to end in test/e2e/device-scripts-relay.
 * The relay does not depend on the database kind: these run on the embedded one.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { eventually, openSse, rawRequest, upstreamState, type SseBlock, type SseReader } from '../../../test/e2e/device-scripts-support.ts';
import { FakeAgent, sha256Of } from './support/fake-agent.ts';
import { DEFAULT_STREAM_RELAY_OPTIONS, StreamRelay } from '../src/device-relay/stream-relay.ts';

const API_TOKEN = 'api-token-the-script-must-never-see';
const auth = { authorization: `Bearer ${API_TOKEN}` };
const isUp = (b: SseBlock) => upstreamState(b) === 'up';
const isDown = (b: SseBlock) => upstreamState(b) === 'down';

/** Serves `data` as the response body the server pulls for `reqId`, within the server's credit. */
async function serveResponseBody(agent: FakeAgent, reqId: number, data: Buffer, chunkBytes = 64 * 1024): Promise<void> {
  const pull = await agent.next('stream.pull', (m) => m.source.kind === 'http.response_body' && m.source.req_id === reqId);
  const served = await agent.serve(pull, data, chunkBytes);
  if (!served.ok) throw new Error(`the response body of request ${reqId} was cut after ${served.bytes} bytes`);
}

/** Pulls the request body of `reqId` from the server, as the agent does, granting `window` bytes of credit. */
async function pullRequestBody(agent: FakeAgent, reqId: number, window: number): Promise<Buffer> {
  return (await agent.pull({ kind: 'http.request_body', req_id: reqId }, 0, window)).data;
}

describe('device-script relay, control-plane side', () => {
  let server: TestServer;
  let board: { id: string; token: string };
  let scriptId: string;
  let agent: FakeAgent;
  const clients: SseReader[] = [];

  const api = (path: string, init: RequestInit = {}) => server.api(path, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
  const proxyPath = (rest: string) => `/api/device-scripts/${scriptId}/proxy/${rest}`;
  const sse = async (headers: Record<string, string> = {}) => {
    const c = await openSse(`${server.url}/api/device-scripts/${scriptId}/stream/`, { ...auth, ...headers });
    clients.push(c);
    expect(c.status).toBe(200);
    return c;
  };

  beforeAll(async () => {
    server = await startTestServer('embedded', { MM_API_TOKEN: API_TOKEN, MM_RELAY_TIMEOUT_S: '3', LOG_LEVEL: process.env.RELAY_LOG ?? 'silent' });
    board = await json(await api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'fake' }) }));
    const created = await api('/api/device-scripts/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'probe', device_type: 'test', description: '', script_filename: 'p.mjs', remote_dir: '/opt/p', port: 4321, version: '1.0.0' }),
    });
    scriptId = (await json(created)).id;
    agent = await FakeAgent.online(server.url, board.token);
  });
  /** The subscription the server makes for the first client (tests that use streams start from none). */
  let openSub: number | undefined;
  const subscribed = async () => {
    const sub = await agent.next('sse.subscribe');
    openSub = sub.sub_id;
    return sub;
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    // Let the relay end it (after its linger), so the next test sees its own sse.subscribe.
    if (openSub !== undefined && agent.closeCode === undefined) {
      const id = openSub;
      await agent.next('sse.unsubscribe', (m) => m.sub_id === id);
    }
    openSub = undefined;
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
  });

  it('sends the script exactly the end-to-end request: the entry’s port, the path and query as sent (minus board_id), no hop-by-hop headers, no API token', async () => {
    const answer = rawRequest(server.url, {
      method: 'DELETE',
      target: `${proxyPath('a/b%2Fc/')}?q=1&board_id=${board.id}&board_id2=x&r=%2e`,
      headers: { ...auth, 'x-one': '1', connection: 'keep-alive, x-gone', 'x-gone': 'no', te: 'trailers', 'proxy-connection': 'x', 'keep-alive': 'timeout=5' },
    });
    const req = await agent.next('http.request');
    expect(req).toMatchObject({ port: 4321, method: 'DELETE', path: '/a/b%2Fc/?q=1&board_id2=x&r=%2e', has_body: false });
    const names = req.headers.map(([n]) => n.toLowerCase());
    expect(names).toContain('x-one');
    for (const gone of ['authorization', 'host', 'connection', 'x-gone', 'te', 'proxy-connection', 'keep-alive']) expect(names, gone).not.toContain(gone);
    expect(JSON.stringify(req)).not.toContain(API_TOKEN);

    agent.send({
      type: 'http.response',
      req_id: req.req_id,
      status: 204,
      headers: [['x-from', 'script'], ['connection', 'x-private'], ['x-private', 'hop'], ['proxy-authenticate', 'Basic'], ['upgrade', 'h2c']],
      has_body: false,
    });
    const res = await answer;
    expect(res.status).toBe(204);
    expect(res.headers['x-from']).toBe('script');
    for (const gone of ['x-private', 'proxy-authenticate', 'upgrade']) expect(res.headers, gone).not.toHaveProperty(gone);
  });

  it('an empty path after /proxy/ reaches the script’s root', async () => {
    const answer = api(proxyPath(''));
    const req = await agent.next('http.request');
    expect(req.path).toBe('/');
    agent.send({ type: 'http.response', req_id: req.req_id, status: 200, headers: [], has_body: false });
    expect((await answer).status).toBe(200);
  });

  it('keeps the control plane’s cookies and the client’s forwarding claims from the script, and sandboxes what the script serves', async () => {
    const answer = rawRequest(server.url, {
      method: 'GET',
      target: proxyPath('page'),
      headers: { ...auth, cookie: 'session=dashboard', 'x-forwarded-for': '10.0.0.1', 'x-forwarded-host': 'evil', forwarded: 'for=10.0.0.1', 'x-real-ip': '10.0.0.1', 'x-kept': '1' },
    });
    const req = await agent.next('http.request');
    const names = req.headers.map(([n]) => n.toLowerCase());
    expect(names).toContain('x-kept');
    for (const gone of ['cookie', 'x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip']) expect(names, gone).not.toContain(gone);
    agent.send({
      type: 'http.response',
      req_id: req.req_id,
      status: 200,
      headers: [['content-type', 'text/html'], ['set-cookie', 'session=stolen; Path=/'], ['Set-Cookie', 'b=2'], ['content-security-policy', "default-src *"], ['x-content-type-options', 'sniff-away'], ['x-from', 'script']],
      has_body: false,
    });
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.headers).not.toHaveProperty('set-cookie');
    expect(res.headers['content-security-policy']).toBe('sandbox');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-type']).toBe('text/html');
    expect(res.headers['x-from']).toBe('script');
  });

  it('a port the board does not relay to (not in its MM_SCRIPT_PORTS) is 403 script_port_not_allowed', async () => {
    const answer = api(proxyPath('x'));
    const req = await agent.next('http.request');
    agent.send({ type: 'http.error', req_id: req.req_id, error: { code: 'script_port_not_allowed', message: 'port 4321 is not one the board relays to' } });
    const res = await answer;
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = await json(res);
    expect(problem.code).toBe('script_port_not_allowed');
    expect(problem.detail).toMatch(/MM_SCRIPT_PORTS/);
  });

  it('streams bodies both ways under the link’s flow control', async () => {
    const upload = randomBytes(5 * 1024 * 1024 + 7);
    const download = randomBytes(16 * 1024 * 1024 + 3);
    const answer = api(proxyPath('blob'), { method: 'PUT', body: upload });
    const req = await agent.next('http.request');
    expect(req.has_body).toBe(true);
    // The agent's window (1 MiB, far less than the body): the server never sends more than the credit granted.
    const received = await pullRequestBody(agent, req.req_id, 1024 * 1024);
    expect(sha256Of(received)).toBe(sha256Of(upload));
    agent.send({ type: 'http.response', req_id: req.req_id, status: 200, headers: [['content-type', 'application/octet-stream']], has_body: true });
    const res = await answer;
    expect(res.status).toBe(200);
    const [, body] = await Promise.all([serveResponseBody(agent, req.req_id, download), res.arrayBuffer()]);
    expect(sha256Of(Buffer.from(body))).toBe(sha256Of(download));
  });

  it('maps the board’s failures: http.error → 502 with its code; no answer in time → 504 and http.abort; a link that closes → 503', async () => {
    const refused = api(proxyPath('x'));
    const r1 = await agent.next('http.request');
    agent.send({ type: 'http.error', req_id: r1.req_id, error: { code: 'script_unreachable', message: 'ECONNREFUSED' } });
    const p1 = await refused;
    expect(p1.status).toBe(502);
    expect(p1.headers.get('content-type')).toBe('application/problem+json');
    expect((await json(p1)).code).toBe('script_unreachable');

    const slow = api(proxyPath('slow'));
    const r2 = await agent.next('http.request');
    const p2 = await slow;
    expect(p2.status).toBe(504);
    expect((await json(p2)).code).toBe('board_timeout');
    await agent.next('http.abort', (m) => m.req_id === r2.req_id);
    // A late answer is ignored.
    agent.send({ type: 'http.response', req_id: r2.req_id, status: 200, headers: [], has_body: false });

    const dropped = api(proxyPath('drop'));
    await agent.next('http.request');
    agent.terminate();
    const p3 = await dropped;
    expect(p3.status).toBe(503);
    expect((await json(p3)).code).toBe('board_offline');
    agent = await FakeAgent.online(server.url, board.token);
  });

  it('sends http.abort when the client goes away', async () => {
    const controller = new AbortController();
    const pending = api(proxyPath('wait'), { signal: controller.signal }).catch(() => undefined);
    const req = await agent.next('http.request');
    controller.abort();
    await pending;
    await agent.next('http.abort', (m) => m.req_id === req.req_id);
  });

  it('serves many clients from one sse.subscribe, formats events as sent, ends the subscription after the last client left', async () => {
    const first = await sse();
    const sub = await subscribed();
    expect(sub).toMatchObject({ port: 4321, path: '/stream' });
    const more = await Promise.all(Array.from({ length: 20 }, () => sse()));
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    for (const c of [first, ...more]) await c.waitFor(isUp);
    agent.send({ type: 'sse.event', sub_id: sub.sub_id, id: '41', event: 'state', data: '{"a":1}\n{"b":2}' });
    agent.send({ type: 'sse.event', sub_id: sub.sub_id, data: 'plain message' });
    for (const c of [first, ...more]) {
      const e = await c.waitFor((b) => b.id === '41');
      expect(e).toEqual({ id: '41', event: 'state', data: '{"a":1}\n{"b":2}' });
      expect(await c.waitFor((b) => b.data === 'plain message')).toEqual({ data: 'plain message' });
    }
    expect(first.blocks[0]).toEqual({ retry: '2000' });
    expect(agent.received.filter((m) => m.type === 'sse.subscribe')).toHaveLength(1);

    for (const c of clients.splice(0)) c.close();
    const unsub = await agent.next('sse.unsubscribe');
    expect(unsub.sub_id).toBe(sub.sub_id);
    // An event for a subscription the server no longer holds is answered with sse.unsubscribe.
    agent.send({ type: 'sse.event', sub_id: sub.sub_id, data: 'stray' });
    await agent.next('sse.unsubscribe', (m) => m.sub_id === sub.sub_id);
    openSub = undefined;
  });

  it('replays buffered events after Last-Event-ID, and everything buffered for an id it no longer holds', async () => {
    const keeper = await sse();
    const sub = await subscribed();
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    await keeper.waitFor(isUp);
    for (const id of ['100', '101', '102']) agent.send({ type: 'sse.event', sub_id: sub.sub_id, id, event: 'state', data: id });
    await keeper.waitFor((b) => b.id === '102');

    const resumed = await sse({ 'last-event-id': '100' });
    await resumed.waitFor(isUp);
    expect(resumed.blocks.filter((b) => b.event === 'state').map((b) => b.id)).toEqual(['101', '102']);
    const unknown = await sse({ 'last-event-id': 'from-another-life' });
    await unknown.waitFor(isUp);
    expect(unknown.blocks.filter((b) => b.event === 'state').map((b) => b.id)).toEqual(expect.arrayContaining(['100', '101', '102']));
  });

  it('tells clients the upstream dropped and came back, and subscribes again on the new link with the last id seen', async () => {
    const client = await sse();
    const sub = await subscribed();
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    await client.waitFor(isUp);
    agent.send({ type: 'sse.event', sub_id: sub.sub_id, id: '7', event: 'state', data: 'seven' });
    await client.waitFor((b) => b.id === '7');

    // The script's stream drops while the link stays.
    const mark = client.blocks.length;
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'down', message: 'ECONNREFUSED' });
    const down = await client.waitFor(isDown, { from: mark });
    expect(JSON.parse(down.data!)).toEqual({ state: 'down', message: 'ECONNREFUSED' });
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    await client.waitFor(isUp, { from: mark });

    // The link drops: down; the board comes back: a new subscription, resuming after id 7.
    const mark2 = client.blocks.length;
    agent.terminate();
    await client.waitFor(isDown, { from: mark2 });
    agent = await FakeAgent.online(server.url, board.token);
    const again = await subscribed();
    expect(again.sub_id).not.toBe(sub.sub_id);
    expect(again.last_event_id).toBe('7');
    agent.send({ type: 'sse.status', sub_id: again.sub_id, state: 'open' });
    await client.waitFor(isUp, { from: mark2 });
    agent.send({ type: 'sse.event', sub_id: again.sub_id, id: '8', event: 'state', data: 'eight' });
    await client.waitFor((b) => b.id === '8');
  });

  it('cuts off a client that stops reading while the others get every event', async () => {
    const reader = await sse();
    const sub = await subscribed();
    agent.send({ type: 'sse.status', sub_id: sub.sub_id, state: 'open' });
    await reader.waitFor(isUp);

    // A client that reads its headers and then nothing at all.
    const stalled = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(`${server.url}/api/device-scripts/${scriptId}/stream/`, { headers: auth, agent: false }, (res) => {
        res.pause();
        resolve(res);
      });
      req.on('error', reject);
    });
    expect(stalled.statusCode).toBe(200);

    const big = 'x'.repeat(64 * 1024);
    const count = 400; // ~26 MB: more than the socket buffers and the client's 1 MiB allowance
    // Sent in batches the reading client takes before the next one: it keeps up, as a
    // reader does. (A single 26 MB burst would put every client of this process behind by
    // more than its allowance while the server handles it, and cut them all.)
    const batch = 4;
    for (let i = 1; i <= count; i += batch) {
      const last = Math.min(count, i + batch - 1);
      for (let j = i; j <= last; j++) agent.send({ type: 'sse.event', sub_id: sub.sub_id, id: String(j), data: big });
      await reader.waitFor((b) => b.id === String(last), { timeoutMs: 60_000 });
    }
    expect(reader.blocks.filter((b) => b.data === big)).toHaveLength(count);

    // The stalled client's stream was ended early: reading it now gives fewer events and an end.
    let events = 0;
    let tail = '';
    stalled.setEncoding('utf8');
    stalled.on('data', (text: string) => {
      tail += text;
      events += tail.split('\n\n').length - 1;
      tail = tail.slice(tail.lastIndexOf('\n\n') + 2);
    });
    stalled.resume();
    await eventually(() => expect(stalled.destroyed || stalled.readableEnded).toBe(true), 30_000);
    expect(events).toBeLessThan(count);
  });

  it('answers 503 board_offline for a board that is not connected, before any stream starts', async () => {
    await agent.close();
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).status).toBe('offline'));
    for (const path of [proxyPath('x'), `/api/device-scripts/${scriptId}/stream/`]) {
      const res = await api(path);
      expect(res.status, path).toBe(503);
      expect((await json(res)).code).toBe('board_offline');
    }
    agent = await FakeAgent.online(server.url, board.token);
  });
});

describe('stream relay heartbeats', () => {
  it('sends an idle client a heartbeat comment every heartbeat period', async () => {
    // No board connected: the stream stays down, and idle.
    const relay = new StreamRelay({ connection: () => undefined }, { ...DEFAULT_STREAM_RELAY_OPTIONS, heartbeatMs: 60 });
    try {
      const reader = relay.attach({ boardId: 'b', scriptId: 's', port: 1, path: '/stream' }).getReader();
      const decoder = new TextDecoder();
      let text = '';
      while ((text.match(/: heartbeat\n\n/g) ?? []).length < 2) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      expect(text.startsWith('retry: 2000\n\n')).toBe(true);
      expect(text).toContain('event: upstream\ndata: {"state":"down","message":"the board is not connected"}\n\n');
    } finally {
      relay.close();
    }
  });
});
