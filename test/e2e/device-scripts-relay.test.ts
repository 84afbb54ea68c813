import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedSysfs, SERVO_LINES, type SimulatedSysfs } from '@mm/gpio-motor';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import {
  eventually,
  freePort,
  openSse,
  rawRequest,
  startSimulatedAgent,
  upstreamState,
  type SimulatedAgent,
  type SseBlock,
  type SseReader,
} from './device-scripts-support.ts';

/** The H-bridge lines of both motors per command (the motor script's documented table). */
const MOTOR_LINES_FOR = {
  forward: { 516: 1, 518: 0, 520: 0, 522: 1, 517: 1, 519: 0, 521: 0, 523: 1 },
  backward: { 516: 0, 518: 1, 520: 1, 522: 0, 517: 0, 519: 1, 521: 1, 523: 0 },
} as const;

const isUp = (b: SseBlock) => upstreamState(b) === 'up';
const isDown = (b: SseBlock) => upstreamState(b) === 'down';
const stateEvent = (id: number | string) => (b: SseBlock) => b.event === 'state' && b.id === String(id);

async function lineValues(sysfs: SimulatedSysfs, lines: readonly number[]): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const line of lines) out[line] = await sysfs.value(line);
  return out;
}

/** A stand-in device script on this machine's loopback (the simulated board's loopback too). */
async function startEchoScript(port: number) {
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; aborted?: boolean }> = [];
  const server = http.createServer((req, res) => {
    const record: (typeof seen)[number] = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    seen.push(record);
    if (req.url === '/slow') {
      // Never answers: the relay must end it when its client goes away.
      res.on('close', () => (record.aborted = !res.writableFinished));
      return;
    }
    res.writeHead(201, [
      ['content-type', 'application/octet-stream'],
      ['x-echo-method', req.method ?? ''],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['connection', 'x-hop'],
      ['x-hop', 'must not cross'],
    ]);
    req.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('device-script relay end to end through mm-agent --simulate (%s database)', (kind) => {
  let server: TestServer;
  let board: { id: string; token: string };
  let agent: SimulatedAgent;
  let gpioPort: number;
  /** The agent's MM_SCRIPT_PORTS (the stand-in scripts' ports; the simulated GPIO script's is allowed by itself). */
  let scriptPorts: number[];
  let motorId: string;
  let sysfs: SimulatedSysfs;
  const openClients: SseReader[] = [];

  const streamUrl = (id = motorId, query = '') => `${server.url}/api/device-scripts/${id}/stream/${query}`;
  const proxy = (path: string, init?: RequestInit, id = motorId) => server.api(`/api/device-scripts/${id}/proxy/${path}`, init);
  const post = (path: string, body?: unknown) =>
    proxy(path, body === undefined ? { method: 'POST' } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const streamClients = async () => (await json(await proxy('state'))).stream_clients as number;
  const sse = async (url = streamUrl(), headers: Record<string, string> = {}) => {
    const c = await openSse(url, headers);
    openClients.push(c);
    return c;
  };
  const createEntry = async (port: number, name: string) => {
    const res = await server.api('/api/device-scripts/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, device_type: 'test', description: '', script_filename: 'x.mjs', remote_dir: '/opt/x', port, version: '1.0.0' }),
    });
    expect(res.status).toBe(201);
    return (await json(res)).id as string;
  };
  const waitStatus = (status: string) =>
    eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe(status), 30_000);
  const startAgent = async (agentDir?: string) => {
    agent = await startSimulatedAgent(server.url, board.token, { gpioPort, env: { MM_SCRIPT_PORTS: scriptPorts.join(',') }, ...(agentDir ? { agentDir } : {}) });
    await waitStatus('online');
    // The motor script runs inside the agent process: ready once it answers through the relay.
    await eventually(async () => expect((await proxy('state')).status).toBe(200), 30_000);
  };

  beforeAll(async () => {
    // A short relay timeout for the 504 test; heartbeats stay long, so a paused agent keeps its link.
    server = await startTestServer(kind, { MM_RELAY_TIMEOUT_S: '3' });
    const res = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'sim' }) });
    board = await json(res);
    // The seeded catalogue entry of the motor script, moved to a port free on this machine
    // (tests run side by side); the simulated board runs the script there.
    const { scripts } = await json(await server.api('/api/device-scripts/?device_type=gpio'));
    motorId = scripts[0].id;
    gpioPort = await freePort();
    scriptPorts = [await freePort(), await freePort(), await freePort(), await freePort()];
    const patched = await server.api(`/api/device-scripts/${motorId}/`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ port: gpioPort }),
    });
    expect(patched.status).toBe(200);
    await startAgent();
    sysfs = await createSimulatedSysfs(agent.gpioRoot);
  });

  afterAll(async () => {
    for (const c of openClients) c.close();
    await agent?.stop();
    await server?.stop();
    if (agent) await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('POST …/proxy/motor/forward drives the GPIO lines and a client on …/stream/ sees the event', async () => {
    const client = await sse();
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    await client.waitFor(isUp);

    const res = await post('motor/forward');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const answer = await json(res);
    expect(answer.motion).toBe('forward');
    expect(await lineValues(sysfs, Object.keys(MOTOR_LINES_FOR.forward).map(Number))).toEqual(MOTOR_LINES_FOR.forward);

    const event = await client.waitFor(stateEvent(answer.event_id));
    const data = JSON.parse(event.data!);
    expect(data).toMatchObject({ cause: 'motor', motion: 'forward' });
    expect(data.lines['516']).toBe(1);
    client.close();
  });

  it('200 clients each receive the event while the board holds one upstream', async () => {
    const clients = await Promise.all(Array.from({ length: 200 }, () => sse()));
    for (const c of clients) expect(c.status).toBe(200);
    await Promise.all(clients.map((c) => c.waitFor(isUp)));
    expect(await streamClients()).toBe(1);

    const answer = await json(await post('motor/backward'));
    expect(answer.motion).toBe('backward');
    const events = await Promise.all(clients.map((c) => c.waitFor(stateEvent(answer.event_id))));
    for (const e of events) expect(JSON.parse(e.data!).motion).toBe('backward');
    expect(await lineValues(sysfs, Object.keys(MOTOR_LINES_FOR.backward).map(Number))).toEqual(MOTOR_LINES_FOR.backward);
    expect(await streamClients()).toBe(1);
    for (const c of clients) c.close();
  });

  it('relays the script’s own GET /stream through the proxy as a live stream too', async () => {
    const direct = await sse(`${server.url}/api/device-scripts/${motorId}/proxy/stream`);
    expect(direct.status).toBe(200);
    expect(direct.headers['content-type']).toMatch(/^text\/event-stream/);
    const snapshot = await direct.waitFor((b) => b.event === 'state');
    expect(JSON.parse(snapshot.data!).cause).toBe('connect');
    const answer = await json(await post('motor/stop'));
    await direct.waitFor(stateEvent(answer.event_id));
    direct.close();
  });

  it('closes the upstream after the last client leaves', async () => {
    const clients = await Promise.all([sse(), sse(), sse()]);
    await Promise.all(clients.map((c) => c.waitFor(isUp)));
    expect(await streamClients()).toBe(1);
    for (const c of clients) c.close();
    await eventually(async () => expect(await streamClients()).toBe(0));
  });

  it('replays the events a client missed when it comes back with Last-Event-ID', async () => {
    const keeper = await sse();
    await keeper.waitFor(isUp);
    const a = await sse();
    await a.waitFor(isUp);
    const first = await json(await post('motor/left'));
    await a.waitFor(stateEvent(first.event_id));
    a.close();

    const second = await json(await post('motor/right'));
    const third = await json(await post('servo', { angle: 45 }));
    await keeper.waitFor(stateEvent(third.event_id));

    const b = await sse(streamUrl(), { 'last-event-id': String(first.event_id) });
    await b.waitFor(isUp);
    const replayed = b.blocks.filter((blk) => blk.event === 'state').map((blk) => Number(blk.id));
    expect(replayed).toEqual([second.event_id, third.event_id]);
    expect(JSON.parse(b.blocks.find(stateEvent(third.event_id))!.data!).servo.angle).toBe(45);
    // The same through the query parameter (for browsers' EventSource, which cannot set headers).
    const c = await sse(streamUrl(motorId, `?last_event_id=${second.event_id}`));
    await c.waitFor(isUp);
    expect(c.blocks.filter((blk) => blk.event === 'state').map((blk) => Number(blk.id))).toEqual([third.event_id]);
    for (const x of [keeper, b, c]) x.close();
  });

  it('round-trips POST /servo with a JSON body: the status and body come back as the script sent them', async () => {
    const res = await post('servo', { angle: 90 });
    expect(res.status).toBe(200);
    const answer = await json(res);
    expect(answer.servo).toEqual({ angle: 90, value: 128 });
    const bits = await lineValues(sysfs, SERVO_LINES);
    expect(SERVO_LINES.reduce((v, line, bit) => v | (bits[line]! << bit), 0)).toBe(128);

    const bad = await post('servo', { angle: 500 });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    const problem = await json(bad);
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors[0].field).toBe('angle');
  });

  it('answers 502 script_unreachable for a catalogue entry whose port nobody listens on', async () => {
    const id = await createEntry(scriptPorts[0]!, 'nobody home');
    const res = await proxy('state', undefined, id);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const problem = await json(res);
    expect(problem.code).toBe('script_unreachable');
    expect(problem.detail).toMatch(/port \d+/);
    // Its stream reports the upstream down (the agent keeps trying).
    const client = await sse(streamUrl(id));
    expect(client.status).toBe(200);
    await client.waitFor(isDown);
    client.close();
  });

  it('reaches only the entry’s port: crafted paths stay on it, and unknown or malformed ids are 404', async () => {
    let canaryHits = 0;
    const canary = http.createServer((_req, res) => {
      canaryHits++;
      res.end('canary');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    const other = (canary.address() as AddressInfo).port;
    try {
      const base = `/api/device-scripts/${motorId}/proxy`;
      for (const target of [
        `${base}/..%2f..%2fstate`,
        `${base}/%2e%2e%2f%2e%2e%2fx`,
        `${base}/http://127.0.0.1:${other}/x`,
        `${base}//127.0.0.1:${other}/x`,
        `${base}/@127.0.0.1:${other}/x`,
      ]) {
        const res = await rawRequest(server.url, { method: 'GET', target });
        // The motor script's own 404 (the control plane's would say "No such route.").
        expect(res.status, target).toBe(404);
        expect(JSON.parse(res.body).detail, target).toMatch(/^No route /);
      }
      // A backslash in the path is refused before routing.
      expect((await rawRequest(server.url, { method: 'GET', target: `${base}/\\127.0.0.1:${other}/x` })).status).toBe(400);
      // A port in the query is just a query parameter for the script.
      const viaQuery = await proxy(`state?port=${other}&host=127.0.0.1`);
      expect(viaQuery.status).toBe(200);
      expect(await json(viaQuery)).toHaveProperty('stream_clients');
      // A catalogue entry cannot widen what the board relays to: its own MM_SCRIPT_PORTS decide.
      const widened = await createEntry(other, 'not on the board’s list');
      const refused = await proxy('x', undefined, widened);
      expect(refused.status).toBe(403);
      expect((await json(refused)).code).toBe('script_port_not_allowed');
      const refusedStream = await sse(streamUrl(widened));
      await refusedStream.waitFor(isDown);
      refusedStream.close();
      expect(canaryHits).toBe(0);
    } finally {
      await new Promise<void>((r) => canary.close(() => r()));
    }
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await proxy('state', undefined, id);
      expect(res.status).toBe(404);
      expect((await json(res)).code).toBe('device_script_not_found');
      expect((await server.api(`/api/device-scripts/${id}/stream/`)).status).toBe(404);
    }
  });

  it('forwards method, path, query and end-to-end headers only, and streams bodies both ways', async () => {
    const echo = await startEchoScript(scriptPorts[1]!);
    try {
      const id = await createEntry(echo.port, 'echo');
      const body = randomBytes(8 * 1024 * 1024 + 123);
      const res = await rawRequest(server.url, {
        method: 'PUT',
        target: `/api/device-scripts/${id}/proxy/upload/here?x=1&board_id=${board.id}&y=%20z`,
        headers: {
          authorization: 'Bearer not-for-the-script',
          'proxy-authorization': 'Basic eA==',
          connection: 'x-drop',
          'x-drop': 'hop-by-hop by Connection',
          'x-custom': 'kept',
          cookie: 'session=the-dashboards',
          'x-forwarded-for': '10.9.8.7',
          'content-type': 'application/octet-stream',
        },
        body,
      });
      expect(res.status).toBe(201);
      const seen = echo.seen.at(-1)!;
      expect(seen.method).toBe('PUT');
      expect(seen.url).toBe('/upload/here?x=1&y=%20z');
      expect(seen.headers.host).toBe(`127.0.0.1:${echo.port}`);
      expect(seen.headers['x-custom']).toBe('kept');
      expect(seen.headers['content-length']).toBe(String(body.length));
      for (const h of ['authorization', 'proxy-authorization', 'x-drop', 'cookie', 'x-forwarded-for']) expect(seen.headers, h).not.toHaveProperty(h);
      expect(res.headers['x-echo-method']).toBe('PUT');
      // A script's cookies would be the control plane's: dropped; what it serves is sandboxed.
      expect(res.headers).not.toHaveProperty('set-cookie');
      expect(res.headers['content-security-policy']).toBe('sandbox');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers).not.toHaveProperty('x-hop');
      const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
      // rawRequest decodes as UTF-8; compare the bytes the echo sent back through a second, binary request.
      const back = await proxy('again', { method: 'POST', body, headers: { 'content-type': 'application/octet-stream' } }, id);
      expect(back.status).toBe(201);
      expect(sha(Buffer.from(await back.arrayBuffer()))).toBe(sha(body));

      // A chunked request body (no length known in advance) arrives whole too.
      const chunked = await new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
        const req = http.request(
          `${server.url}/api/device-scripts/${id}/proxy/chunked`,
          { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, agent: false },
          (r) => {
            const parts: Buffer[] = [];
            r.on('data', (c: Buffer) => parts.push(c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, bytes: Buffer.concat(parts) }));
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 16; i++) req.write(body.subarray(i * 65536, (i + 1) * 65536));
        req.end();
      });
      expect(chunked.status).toBe(201);
      expect(sha(chunked.bytes)).toBe(sha(body.subarray(0, 16 * 65536)));
    } finally {
      await echo.close();
    }
  });

  it('ends the upstream request when the client goes away', async () => {
    const echo = await startEchoScript(scriptPorts[2]!);
    try {
      const id = await createEntry(echo.port, 'slow echo');
      const controller = new AbortController();
      const pending = proxy('slow', { signal: controller.signal }, id).catch((e: unknown) => e);
      await eventually(() => expect(echo.seen.some((s) => s.url === '/slow')).toBe(true));
      controller.abort();
      await pending;
      await eventually(() => expect(echo.seen.find((s) => s.url === '/slow')!.aborted).toBe(true));
    } finally {
      await echo.close();
    }
  });

  it('follows a script that restarts: clients hear down and up, the script is asked to resume after the last id', async () => {
    const port = scriptPorts[3]!;
    const lastEventIds: Array<string | undefined> = [];
    const sockets = new Set<import('node:net').Socket>();
    let tick = 0;
    let streams: http.ServerResponse[] = [];
    const startScript = async () => {
      const s = http.createServer((req, res) => {
        if (req.url === '/redirect') {
          res.writeHead(302, { location: `http://127.0.0.1:${gpioPort}/state` }).end();
          return;
        }
        lastEventIds.push(req.headers['last-event-id'] as string | undefined);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('retry: 100\n\n');
        streams.push(res);
      });
      s.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
      return s;
    };
    const emit = () => {
      tick++;
      for (const res of streams) res.write(`id: ${tick}\nevent: tick\ndata: ${tick}\n\n`);
      return String(tick);
    };
    let script = await startScript();
    try {
      const id = await createEntry(port, 'restarting script');
      const client = await sse(streamUrl(id));
      await client.waitFor(isUp);
      await eventually(() => expect(streams.length).toBe(1));
      const before = emit();
      await client.waitFor((b) => b.event === 'tick' && b.id === before);

      // The relay never follows a redirect: the client gets the script's 302 itself.
      const redirect = await proxy('redirect', { redirect: 'manual' }, id);
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get('location')).toBe(`http://127.0.0.1:${gpioPort}/state`);

      const mark = client.blocks.length;
      streams = [];
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => script.close(() => resolve()));
      await client.waitFor(isDown, { from: mark });

      script = await startScript();
      await client.waitFor(isUp, { from: mark });
      await eventually(() => expect(streams.length).toBe(1));
      expect(lastEventIds.at(-1)).toBe(before);
      const after = emit();
      await client.waitFor((b) => b.event === 'tick' && b.id === after, { from: mark });
      client.close();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => script.close(() => resolve()));
    }
  });

  it('answers 504 board_timeout when the board does not answer in time', async () => {
    agent.proc.kill('SIGSTOP');
    try {
      const res = await proxy('state');
      expect(res.status).toBe(504);
      expect((await json(res)).code).toBe('board_timeout');
    } finally {
      agent.proc.kill('SIGCONT');
    }
    await eventually(async () => expect((await proxy('state')).status).toBe(200));
  });

  it('tells stream clients when the upstream drops and when it is back, across an agent restart', async () => {
    const client = await sse();
    await client.waitFor(isUp);
    const before = await json(await post('motor/forward'));
    await client.waitFor(stateEvent(before.event_id));

    // The board's agent dies (and the script with it): the link drops.
    const agentDir = agent.agentDir;
    const mark = client.blocks.length;
    agent.proc.kill('SIGKILL');
    await agent.exited;
    const downAt = client.blocks.indexOf(await client.waitFor(isDown, { from: mark }));

    // Offline board: the relay refuses new requests with 503.
    await waitStatus('offline');
    const offline = await proxy('state');
    expect(offline.status).toBe(503);
    expect((await json(offline)).code).toBe('board_offline');
    expect((await server.api(`/api/device-scripts/${motorId}/stream/`)).status).toBe(503);

    // Back: the subscription is made again on the new link, with the last id seen.
    await startAgent(agentDir);
    sysfs = await createSimulatedSysfs(agent.gpioRoot);
    await client.waitFor(isUp, { from: downAt });
    const snapshot = await client.waitFor((b) => b.event === 'state' && JSON.parse(b.data!).cause === 'connect', { from: downAt });
    expect(Number(snapshot.id)).toBeGreaterThanOrEqual(before.event_id);
    const after = await json(await post('motor/backward'));
    expect(after.event_id).toBeGreaterThan(before.event_id);
    await client.waitFor(stateEvent(after.event_id));
    client.close();
  });

  it('chooses the board by ?board_id= when several are registered', async () => {
    const res = await server.api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'second' }) });
    const second = await json(res);
    try {
      const unnamed = await proxy('state');
      expect(unnamed.status).toBe(400);
      expect((await json(unnamed)).code).toBe('board_required');
      expect((await proxy(`state?board_id=${board.id}`)).status).toBe(200);
      const offline = await proxy(`state?board_id=${second.id}`);
      expect(offline.status).toBe(503);
      expect((await json(offline)).code).toBe('board_offline');
      for (const id of [randomUUID(), 'nope']) {
        const unknown = await proxy(`state?board_id=${id}`);
        expect(unknown.status).toBe(404);
        expect((await json(unknown)).code).toBe('board_not_found');
      }
      const client = await sse(streamUrl(motorId, `?board_id=${board.id}`));
      await client.waitFor(isUp);
      client.close();
    } finally {
      await server.api(`/api/boards/${second.id}/`, { method: 'DELETE' });
    }
  });
});
