/**
 * The link peer both ends share, over real `ws` sockets on loopback: streams in both
 * directions under credit, aborts, bad input named precisely, the heartbeat on a manual
 * clock (no sleeps), and what a closing link does to open streams.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  AGENT_PULL_IDS,
  CloseCode,
  ERROR_REPLY_QUEUE_BYTES,
  INVALID_MESSAGE_BURST,
  Hello,
  isCompatibleProtocol,
  LinkFeature,
  LinkPeer,
  ManualClock,
  MAX_PENDING_PUSHES,
  PUSH_ADOPT_TIMEOUT_MS,
  PUSH_CREDIT_BYTES,
  parseAgentMessage,
  parseServerMessage,
  PROTOCOL_VERSION,
  SERVER_PULL_IDS,
  StreamError,
  StreamPull,
  type AgentMessage,
  type ByteSink,
  type Clock,
  type CompressPolicy,
  type MessageOf,
  type LinkPeerHandlers,
  type PeerLog,
  type ServerMessage,
  WARN_LINES_PER_WINDOW,
} from '../src/index.ts';

const quiet = () => {};
const quietLog: PeerLog = { debug: quiet, info: quiet, warn: quiet, error: quiet };

interface Pair {
  server: LinkPeer<AgentMessage, ServerMessage>;
  agent: LinkPeer<ServerMessage, AgentMessage>;
  serverSeen: AgentMessage[];
  agentSeen: ServerMessage[];
  wss: WebSocketServer;
}

const open: Pair[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) {
    p.agent.socket.terminate();
    p.server.socket.terminate();
    p.wss.close();
  }
});

/** A server peer and an agent peer on one real WebSocket. */
async function pair(opts: {
  serverHandlers?: Partial<LinkPeerHandlers<AgentMessage>>;
  agentHandlers?: Partial<LinkPeerHandlers<ServerMessage>>;
  serverClock?: Clock;
  agentClock?: Clock;
  serverCompressPolicy?: CompressPolicy;
  serverHeartbeat?: { intervalMs: number; timeoutMs: number };
  agentAutoPong?: boolean;
  serverLog?: PeerLog;
} = {}): Promise<Pair> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { autoPong: opts.agentAutoPong ?? true });
  const [socket] = await accepted;
  const serverSeen: AgentMessage[] = [];
  const agentSeen: ServerMessage[] = [];
  const server = new LinkPeer<AgentMessage, ServerMessage>({
    socket,
    parse: parseAgentMessage,
    pullIds: SERVER_PULL_IDS,
    peerName: 'the agent',
    log: opts.serverLog ?? quietLog,
    ...(opts.serverClock ? { clock: opts.serverClock } : {}),
    ...(opts.serverCompressPolicy ? { compressPolicy: opts.serverCompressPolicy } : {}),
    ...(opts.serverHeartbeat ? { heartbeat: opts.serverHeartbeat } : {}),
    handlers: { observe: (m) => serverSeen.push(m), message: () => {}, ...opts.serverHandlers },
  });
  const agent = new LinkPeer<ServerMessage, AgentMessage>({
    socket: client,
    parse: parseServerMessage,
    pullIds: AGENT_PULL_IDS,
    peerName: 'the server',
    log: quietLog,
    ...(opts.agentClock ? { clock: opts.agentClock } : {}),
    handlers: { observe: (m) => agentSeen.push(m), message: () => {}, ...opts.agentHandlers },
  });
  if (client.readyState !== WebSocket.OPEN) await once(client, 'open');
  const p = { server, agent, serverSeen, agentSeen, wss };
  open.push(p);
  return p;
}

function memorySink(): ByteSink & { data(): Buffer } {
  const chunks: Buffer[] = [];
  return { write: async (c) => void chunks.push(Buffer.from(c)), finish: async () => {}, destroy: () => {}, data: () => Buffer.concat(chunks) };
}

async function until<T>(probe: () => T | undefined | false, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = probe();
    if (v) return v;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

async function* pieces(data: Buffer, size: number) {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

const hello = (features?: string[], extra: Partial<MessageOf<'hello'>> = {}): AgentMessage => ({
  type: 'hello',
  protocol_version: PROTOCOL_VERSION,
  agent_version: '0.0.0',
  hostname: 'board',
  platform: 'linux',
  arch: 'arm64',
  boot_id: 'boot',
  active_pac: null,
  cached: [],
  running: [],
  finished: [],
  ...(features ? { features } : {}),
  ...extra,
});
const welcome = (features?: string[]): ServerMessage => ({
  type: 'welcome',
  board_id: '00000000-0000-4000-8000-000000000001',
  board_name: 'b',
  server_version: '0.0.0',
  protocol_version: PROTOCOL_VERSION,
  ...(features ? { features } : {}),
});

describe('LinkPeer', () => {
  it('streams a source both ways, from an offset, never past the granted credit', async () => {
    const data = Buffer.from(Array.from({ length: 1024 * 1024 + 17 }, (_, i) => (i * 7) % 251));
    const served: Array<{ bytes: number; wireBytes: number; ok: boolean }> = [];
    const p = await pair({
      serverHandlers: {
        message: async (m) => {
          if (m.type === 'stream.pull') served.push(await p.server.serve(m, async () => ({ source: pieces(data.subarray(m.offset), 300_000), size: data.length })));
        },
      },
      agentHandlers: {
        message: async (m) => {
          if (m.type === 'stream.pull') await p.agent.serve(m, async () => ({ source: pieces(data, 100_000) }));
        },
      },
    });
    // Agent pulls from the server from an offset, with a window smaller than one chunk.
    const sink = memorySink();
    const done = await p.agent.pull({ kind: 'content', sha256: 'a'.repeat(64) }, 1000, sink, { window: 64 * 1024 }).done;
    expect(done).toEqual({ bytes: data.length - 1000, size: data.length, wireBytes: data.length - 1000 });
    expect(sink.data().equals(data.subarray(1000))).toBe(true);
    expect(served).toEqual([{ bytes: data.length - 1000, wireBytes: data.length - 1000, ok: true }]);
    // Every credit the agent granted was at most its window; the pull id is in the agent's range.
    const pull = p.serverSeen.find((m) => m.type === 'stream.pull')!;
    expect(pull.type === 'stream.pull' && pull.stream_id).toBe(AGENT_PULL_IDS.first);
    expect(p.serverSeen.filter((m) => m.type === 'stream.credit').every((m) => m.type === 'stream.credit' && m.bytes <= 64 * 1024)).toBe(true);

    // Server pulls from the agent: a source of unknown size ends with the bytes sent.
    const back = memorySink();
    const got = await p.server.pull({ kind: 'http.response_body', req_id: 1 }, 0, back).done;
    expect(got).toEqual({ bytes: data.length, size: data.length, wireBytes: data.length });
    expect(back.data().equals(data)).toBe(true);
    const serverPull = p.agentSeen.find((m) => m.type === 'stream.pull');
    expect(serverPull?.type === 'stream.pull' && serverPull.stream_id).toBe(SERVER_PULL_IDS.first);
  });

  it('aborts a pull the source cannot serve, with its code, and answers nothing to the puller’s own abort', async () => {
    const p = await pair({
      serverHandlers: {
        message: (m) => {
          if (m.type === 'stream.pull') void p.server.serve(m, async () => Promise.reject(new StreamError({ code: 'not_found', message: 'no such content' })));
        },
      },
    });
    const failed = p.agent.pull({ kind: 'content', sha256: 'b'.repeat(64) }, 0, memorySink()).done;
    await expect(failed).rejects.toMatchObject({ info: { code: 'not_found' } });
  });

  it('fails open streams with link_closed when the link closes', async () => {
    const p = await pair({
      serverHandlers: {
        // Serves slowly forever: the pull is open when the link goes.
        message: (m) => {
          if (m.type === 'stream.pull')
            void p.server.serve(m, async () => ({
              source: (async function* () {
                for (;;) {
                  yield Buffer.alloc(1024);
                  await new Promise((r) => setTimeout(r, 5));
                }
              })(),
            }));
        },
      },
    });
    const receiver = p.agent.pull({ kind: 'content', sha256: 'c'.repeat(64) }, 0, memorySink());
    await until(() => receiver.bytes > 0, 'some bytes');
    p.server.close(CloseCode.normal, 'bye');
    await expect(receiver.done).rejects.toMatchObject({ info: { code: 'link_closed' } });
    expect(await p.agent.closed).toMatchObject({ code: CloseCode.normal, reason: 'bye' });
    expect(p.agent.send({ type: 'op.log', op_id: 1, stream: 'stdout', data: 'x' })).toBe(false);
  });

  it('names what it cannot understand and answers with error, but never answers an error', async () => {
    const p = await pair();
    const raw = p.server.socket;
    raw.send('not json');
    raw.send(JSON.stringify({ type: 'launch.missiles' }));
    raw.send(JSON.stringify({ type: 'op.start', op_id: 'seven', kind: 'transfer', invocation: { id: 1, name: 'x' }, files: [] }));
    raw.send(JSON.stringify({ type: 'hello', protocol_version: 1 }));
    raw.send(JSON.stringify({ type: 'error', bogus: true }));
    raw.send(Buffer.from([9, 0, 0, 0, 1, 2]), { binary: true });
    const errors = await until(() => {
      const e = p.serverSeen.filter((m) => m.type === 'error');
      return e.length >= 5 && e;
    }, 'five errors');
    expect(errors.map((e) => e.type === 'error' && [e.code, e.ref_type ?? null, e.message])).toEqual([
      ['malformed_message', null, 'not JSON'],
      ['unknown_message', 'launch.missiles', 'unknown message type "launch.missiles"'],
      ['malformed_message', 'op.start', expect.stringContaining('op_id')],
      ['malformed_message', 'hello', 'hello is not a message the server sends'],
      ['malformed_frame', null, 'unknown binary frame kind 9'],
    ]);
    expect(errors[2]!.type === 'error' && errors[2]!.message).not.toContain('Invalid input;');
  });

  it('answers a handler that throws with internal_error', async () => {
    const p = await pair({
      agentHandlers: {
        message: async () => {
          throw new Error('kaput');
        },
      },
    });
    p.server.send({ type: 'op.cancel', op_id: 3 });
    const error = await until(() => p.serverSeen.find((m) => m.type === 'error'), 'an error');
    expect(error).toMatchObject({ code: 'internal_error', message: 'kaput', ref_type: 'op.cancel' });
  });

  it('pings on its clock and cuts a link from which nothing arrives (manual clock, no sleeps)', async () => {
    const clock = new ManualClock();
    const p = await pair({ serverClock: clock, serverHeartbeat: { intervalMs: 1000, timeoutMs: 3000 }, agentAutoPong: true });
    // A ping every interval; the agent's pong counts as life, well past the timeout.
    let pongs = 0;
    p.server.socket.on('pong', () => pongs++);
    for (let i = 1; i <= 5; i++) {
      clock.advance(1000);
      await until(() => pongs === i, `pong ${i}`);
    }
    expect(p.server.lastHeardAt).toBe(clock.now());
    expect(p.server.isOpen).toBe(true);
    // Now the agent stops answering pings: the server gives up after the timeout.
    const silent = await pair({ serverClock: clock, serverHeartbeat: { intervalMs: 1000, timeoutMs: 3000 }, agentAutoPong: false });
    clock.advance(2900);
    expect(silent.server.isOpen).toBe(true);
    clock.advance(1000);
    expect(silent.server.heartbeatTimedOut).toBe(true);
    expect((await silent.server.closed).code).toBe(1006);
  });
});

describe('LinkPeer against a misbehaving peer (link-guard.ts)', () => {
  it('closes a link that keeps sending invalid messages with CloseCode.invalidMessages, and limits its warn lines', async () => {
    const warns: Array<Record<string, unknown>> = [];
    const p = await pair({ serverLog: { ...quietLog, warn: (fields) => void warns.push(fields) } });
    const agentClosed = once(p.agent.socket, 'close') as Promise<[number, Buffer]>;
    // A burst within the budget is answered, one error each.
    for (let i = 0; i < INVALID_MESSAGE_BURST / 2; i++) p.agent.socket.send('{"type":"no.such.message"}');
    await until(() => p.agentSeen.filter((m) => m.type === 'error').length === INVALID_MESSAGE_BURST / 2, 'the errors');
    expect(p.server.isOpen).toBe(true);
    // Then the flood goes on: the link is closed, with its own code.
    for (let i = 0; i < INVALID_MESSAGE_BURST * 3; i++) p.agent.socket.send(i % 2 ? 'not json' : Buffer.from([1, 2, 3]));
    const [code] = await agentClosed;
    expect(code).toBe(CloseCode.invalidMessages);
    expect((await p.server.closed).code).toBe(CloseCode.invalidMessages);
    // Never more than the budget of error replies, nor more than a window's warn lines (plus the closing one).
    expect(p.agentSeen.filter((m) => m.type === 'error').length).toBeLessThanOrEqual(INVALID_MESSAGE_BURST + 1);
    expect(warns.length).toBeLessThanOrEqual(WARN_LINES_PER_WINDOW + 1);
    expect(warns.at(-1)).toMatchObject({ close_code: CloseCode.invalidMessages });
  });

  it('does not take messages as life: a peer that floods but never answers a ping is cut by the heartbeat', async () => {
    const clock = new ManualClock();
    const p = await pair({ serverClock: clock, serverHeartbeat: { intervalMs: 1000, timeoutMs: 3000 }, agentAutoPong: false });
    let delivered = 0;
    p.server.socket.on('message', () => delivered++);
    // Valid messages that need no answer, arriving all the time, past the timeout.
    for (let i = 1; i <= 29 && p.server.isOpen; i++) {
      p.agent.send({ type: 'rpc.response', id: i, ok: true, result: null });
      await until(() => delivered === i, `message ${i}`);
      clock.advance(100);
    }
    clock.advance(1000);
    expect(p.server.heartbeatTimedOut).toBe(true);
    expect((await p.server.closed).code).toBe(1006);
  });

  it('bounds what it queues toward a peer that does not read: clipped error replies, dropped past a small queue', async () => {
    const p = await pair();
    // The agent stops reading its socket; the server's replies pile up in its send queue.
    (p.agent.socket as unknown as { _socket: import('node:net').Socket })._socket.pause();
    let arrived = 0;
    p.server.socket.on('message', () => arrived++);
    // Each names a 64 KiB message type, which the reply used to echo twice.
    const big = JSON.stringify({ type: 'x'.repeat(64 * 1024) });
    for (let i = 0; i < INVALID_MESSAGE_BURST; i++) p.agent.socket.send(big);
    await until(() => arrived === INVALID_MESSAGE_BURST, 'the flood');
    expect(p.server.isOpen).toBe(true);
    expect(p.server.socket.bufferedAmount).toBeLessThanOrEqual(ERROR_REPLY_QUEUE_BYTES);
    // Once it reads again, it finds short replies.
    (p.agent.socket as unknown as { _socket: import('node:net').Socket })._socket.resume();
    const errors = await until(() => {
      const e = p.agentSeen.filter((m) => m.type === 'error');
      return e.length === INVALID_MESSAGE_BURST && e;
    }, 'the replies');
    for (const e of errors) expect(JSON.stringify(e).length).toBeLessThan(1000);
  });
});

describe('the stream.compress feature', () => {
  const data = Buffer.alloc(3 * 1024 * 1024, 7);

  /** A pair that exchanged hello (agent's features) and welcome (server's); the agent pulls `data` from the server. */
  async function negotiated(agentFeatures: string[] | undefined, serverFeatures: string[] | undefined) {
    const p = await pair({
      serverHandlers: {
        message: async (m) => {
          if (m.type === 'stream.pull') await p.server.serve(m, async () => ({ source: pieces(data.subarray(m.offset), 512 * 1024), size: data.length }));
        },
      },
    });
    p.agent.send(hello(agentFeatures));
    await until(() => p.serverSeen.some((m) => m.type === 'hello'), 'hello');
    p.server.send(welcome(serverFeatures));
    await until(() => p.agentSeen.some((m) => m.type === 'welcome'), 'welcome');
    const sink = memorySink();
    const done = await p.agent.pull({ kind: 'content', sha256: 'b'.repeat(64) }, 0, sink).done;
    expect(sink.data().equals(data)).toBe(true);
    const pull = p.serverSeen.find((m) => m.type === 'stream.pull');
    return { p, done, offer: pull?.type === 'stream.pull' ? pull.compression : undefined };
  }

  it('is used only when both hello and welcome name it: the pull then offers brotli with its decode rate', async () => {
    const both = await negotiated([LinkFeature.streamCompression], [LinkFeature.earlyOutput, LinkFeature.streamCompression]);
    expect(both.p.agent.compressionNegotiated && both.p.server.compressionNegotiated).toBe(true);
    expect(both.offer).toMatchObject({ codecs: ['br'] });
    expect(both.offer?.decode_bps).toBeGreaterThan(0);
    for (const [agentFeatures, serverFeatures] of [
      [undefined, [LinkFeature.streamCompression]],
      [[LinkFeature.streamCompression], [LinkFeature.earlyOutput]],
      [[LinkFeature.streamCompression], undefined],
    ] as const) {
      const one = await negotiated(agentFeatures ? [...agentFeatures] : undefined, serverFeatures ? [...serverFeatures] : undefined);
      expect(one.p.agent.compressionNegotiated || one.p.server.compressionNegotiated).toBe(false);
      expect(one.offer).toBeUndefined();
      // Raw, as between peers of before the feature.
      expect(one.done).toEqual({ bytes: data.length, size: data.length, wireBytes: data.length });
    }
  });

  it('an older peer’s schema ignores the new fields: a pull with `compression`, a hello with `features`', () => {
    const pull = { type: 'stream.pull', stream_id: 1, source: { kind: 'content', sha256: 'c'.repeat(64) }, offset: 0, credit: 1024 };
    const offered = { ...pull, compression: { codecs: ['br'], decode_bps: 1e8 } };
    expect(parseAgentMessage(JSON.stringify(pull)).ok).toBe(true);
    expect(parseAgentMessage(JSON.stringify(offered)).ok).toBe(true);
    // The catalog before the feature: the same objects without the new fields (zod strips unknown keys).
    expect(StreamPull.omit({ compression: true }).parse(offered)).toEqual(pull);
    const withFeatures = hello([LinkFeature.streamCompression]);
    expect(Hello.omit({ features: true }).safeParse(withFeatures).success).toBe(true);
  });
});

describe('the stream.push feature', () => {
  const sha = 'd'.repeat(64);
  const source = { kind: 'content', sha256: sha } as const;
  /** Incompressible bytes: what crosses is exactly the file, so credit can be read off the wire count. */
  const data = Buffer.from(Array.from({ length: 6 * 1024 * 1024 + 3 }, (_, i) => (i * 2654435761) >>> 24));
  const serveData = (offset: number) => async () => ({ source: pieces(data.subarray(offset), 512 * 1024), size: data.length });

  /** A pair after hello (the agent's features and extra fields) and welcome (the server's). */
  async function greeted(agentFeatures: string[] | undefined, serverFeatures: string[] | undefined, opts: Parameters<typeof pair>[0] = {}, extra: Partial<MessageOf<'hello'>> = {}) {
    const p = await pair(opts);
    p.agent.send(hello(agentFeatures, extra));
    await until(() => p.serverSeen.some((m) => m.type === 'hello'), 'hello');
    p.server.send(welcome(serverFeatures));
    await until(() => p.agentSeen.some((m) => m.type === 'welcome'), 'welcome');
    return p;
  }
  const aborts = (p: Pair) => p.serverSeen.flatMap((m) => (m.type === 'stream.abort' ? [m.error] : []));

  it('sends a file behind no pull: the agent adopts it late, holding no more than the push credit before, and gets every byte', async () => {
    const p = await greeted([LinkFeature.streamPush], [LinkFeature.streamPush]);
    expect(p.server.pushNegotiated && p.agent.pushNegotiated).toBe(true);
    const pushed = p.server.push(source, serveData(0));
    const announced = await until(() => p.agentSeen.find((m) => m.type === 'stream.push'), 'stream.push');
    expect(announced).toMatchObject({ source, offset: 0, credit: PUSH_CREDIT_BYTES });
    // Not adopted yet: the server sends its credit's worth, then waits.
    await new Promise((r) => setTimeout(r, 200));
    const sink = memorySink();
    let counted = 0;
    const receiver = p.agent.adoptPush(source, 0, sink, { onBytes: (n) => (counted += n) });
    expect(receiver).toBeDefined();
    expect(receiver!.wireBytes).toBeGreaterThan(0);
    expect(receiver!.wireBytes).toBeLessThanOrEqual(PUSH_CREDIT_BYTES);
    expect(await receiver!.done).toEqual({ bytes: data.length, size: data.length, wireBytes: data.length });
    expect(sink.data().equals(data)).toBe(true);
    expect(counted).toBe(data.length);
    expect(await pushed).toMatchObject({ bytes: data.length, wireBytes: data.length, ok: true, pull: { source, offset: 0, credit: PUSH_CREDIT_BYTES } });
    expect(p.serverSeen.some((m) => m.type === 'stream.pull')).toBe(false);
    // Taken once: a second adoption finds nothing (the caller pulls).
    expect(p.agent.adoptPush(source, 0, memorySink())).toBeUndefined();
  });

  it('compresses a push with what the hello said the agent decodes', async () => {
    const p = await greeted([LinkFeature.streamPush, LinkFeature.streamCompression], [LinkFeature.streamPush, LinkFeature.streamCompression], { serverCompressPolicy: 'always' }, { compression: { codecs: ['br'], decode_bps: 2e8 } });
    const zeros = Buffer.alloc(3 * 1024 * 1024, 9);
    const fileReader = {
      read: async (into: Buffer, offset: number, length: number) => 0 + zeros.copy(into, offset, readAt.at, Math.min(zeros.length, readAt.at + length)) + 0 * (readAt.at += Math.min(length, zeros.length - readAt.at)),
      readAt: async (into: Buffer, offset: number, length: number, position: number) => zeros.copy(into, offset, position, Math.min(zeros.length, position + length)),
      close: async () => {},
    };
    const readAt = { at: 0 };
    const pushed = p.server.push(source, async () => ({ reader: fileReader, size: zeros.length }));
    await until(() => p.agentSeen.find((m) => m.type === 'stream.push'), 'stream.push');
    const sink = memorySink();
    const done = await p.agent.adoptPush(source, 0, sink)!.done;
    expect(sink.data().equals(zeros)).toBe(true);
    expect(done.bytes).toBe(zeros.length);
    expect(done.wireBytes).toBeLessThan(zeros.length / 20);
    expect((await pushed)?.pull.compression).toEqual({ codecs: ['br'], decode_bps: 2e8 });
  });

  it('is declined when the agent holds the file or resumes it elsewhere, and never used unless both sides name it', async () => {
    const p = await greeted([LinkFeature.streamPush], [LinkFeature.streamPush]);
    const cached = p.server.push(source, serveData(0));
    await until(() => p.agentSeen.some((m) => m.type === 'stream.push'), 'stream.push');
    p.agent.declinePush(source, 'the board holds this file already');
    expect(await cached).toMatchObject({ ok: false });
    expect(aborts(p)).toContainEqual({ code: 'declined', message: 'the board holds this file already' });

    const partial = p.server.push(source, serveData(0));
    await until(() => p.agentSeen.filter((m) => m.type === 'stream.push').length === 2, 'second stream.push');
    expect(p.agent.adoptPush(source, 4096, memorySink())).toBeUndefined();
    expect(await partial).toMatchObject({ ok: false });
    expect(aborts(p).at(-1)).toMatchObject({ code: 'declined' });

    for (const [agentFeatures, serverFeatures] of [
      [undefined, [LinkFeature.streamPush]],
      [[LinkFeature.streamPush], [LinkFeature.streamCompression]],
    ] as const) {
      const one = await greeted(agentFeatures ? [...agentFeatures] : undefined, serverFeatures ? [...serverFeatures] : undefined);
      expect(await one.server.push(source, serveData(0))).toBeUndefined();
      await new Promise((r) => setTimeout(r, 50));
      expect(one.agentSeen.some((m) => m.type === 'stream.push')).toBe(false);
    }
  });

  it('declines a push of a source the agent pulls already, and refuses one under an id of the agent’s own range', async () => {
    const p = await greeted([LinkFeature.streamPush], [LinkFeature.streamPush], {
      serverHandlers: {
        message: async (m) => {
          if (m.type === 'stream.pull') await p.server.serve(m, serveData(m.offset));
        },
      },
    });
    const sink = memorySink();
    const pulling = p.agent.pull(source, 0, sink);
    const pushed = p.server.push(source, serveData(0));
    expect(await pushed).toMatchObject({ ok: false });
    expect(aborts(p)).toContainEqual({ code: 'declined', message: 'already pulling this source' });
    expect((await pulling.done).bytes).toBe(data.length);
    expect(sink.data().equals(data)).toBe(true);

    p.server.socket.send(JSON.stringify({ type: 'stream.push', stream_id: AGENT_PULL_IDS.first + 5, source: { kind: 'content', sha256: 'e'.repeat(64) }, offset: 0, credit: 1024 }));
    await until(() => aborts(p).some((e) => e.code === 'stream_in_use'), 'stream_in_use');
    // More credit than a push may hold is refused too: the agent would have to keep it all in memory.
    p.server.socket.send(JSON.stringify({ type: 'stream.push', stream_id: SERVER_PULL_IDS.first + 99, source: { kind: 'content', sha256: 'f'.repeat(64) }, offset: 0, credit: PUSH_CREDIT_BYTES + 1 }));
    await until(() => aborts(p).some((e) => e.code === 'declined' && e.message.includes('at most')), 'credit refused');
    // Only the server pushes: from an agent, stream.push is not a message it sends.
    const fromAgent = parseAgentMessage(JSON.stringify({ type: 'stream.push', stream_id: 3, source, offset: 0, credit: 1024 }));
    expect(fromAgent).toMatchObject({ ok: false, code: 'malformed_message', error: 'stream.push is not a message the agent sends' });
  });

  it('gives up a push nothing adopts within PUSH_ADOPT_TIMEOUT_MS (manual clock), and holds at most MAX_PENDING_PUSHES', async () => {
    const clock = new ManualClock();
    const p = await greeted([LinkFeature.streamPush], [LinkFeature.streamPush], { agentClock: clock });
    // Larger than the push credit: each sender waits for an adoption that never comes.
    const pushes = Array.from({ length: MAX_PENDING_PUSHES + 1 }, (_, i) => p.server.push({ kind: 'content', sha256: i.toString(16).padStart(64, '0') }, serveData(0)));
    expect(await pushes[MAX_PENDING_PUSHES]).toMatchObject({ ok: false, bytes: expect.any(Number) });
    expect(aborts(p)).toContainEqual({ code: 'declined', message: 'too many pushed streams wait' });
    expect(p.agent.adoptPush({ kind: 'content', sha256: MAX_PENDING_PUSHES.toString(16).padStart(64, '0') }, 0, memorySink())).toBeUndefined();
    clock.advance(PUSH_ADOPT_TIMEOUT_MS);
    for (const pushed of pushes.slice(0, MAX_PENDING_PUSHES)) {
      const ended = await pushed;
      expect(ended).toMatchObject({ ok: false });
      expect(ended!.wireBytes).toBeLessThanOrEqual(PUSH_CREDIT_BYTES);
    }
    expect(aborts(p).filter((e) => e.code === 'declined' && e.message.startsWith('nothing took'))).toHaveLength(MAX_PENDING_PUSHES);
    expect(p.agent.adoptPush({ kind: 'content', sha256: '0'.repeat(64) }, 0, memorySink())).toBeUndefined();
  });

  it('keeps a push waiting while the agent pulls an earlier file, however long that takes; gives it up 60 s after the pulls end', async () => {
    const clock = new ManualClock();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = async function* () {
      yield Buffer.alloc(1000, 1);
      await held;
      yield Buffer.alloc(1000, 2);
    };
    const p = await greeted([LinkFeature.streamPush], [LinkFeature.streamPush], {
      agentClock: clock,
      serverHandlers: {
        message: async (m) => {
          if (m.type === 'stream.pull') await p.server.serve(m, async () => ({ source: slow(), size: 2000 }));
        },
      },
    });
    const earlier = p.agent.pull({ kind: 'content', sha256: 'a'.repeat(64) }, 0, memorySink());
    const next = { kind: 'content', sha256: 'b'.repeat(64) } as const;
    const pushed = p.server.push(next, serveData(0));
    await until(() => p.agentSeen.some((m) => m.type === 'stream.push'), 'stream.push');
    clock.advance(3 * PUSH_ADOPT_TIMEOUT_MS);
    await new Promise((r) => setTimeout(r, 50));
    expect(aborts(p)).toEqual([]);
    release();
    expect((await earlier.done).bytes).toBe(2000);
    clock.advance(PUSH_ADOPT_TIMEOUT_MS);
    expect(await pushed).toMatchObject({ ok: false });
    expect(aborts(p)).toEqual([{ code: 'declined', message: `nothing took the pushed stream within ${PUSH_ADOPT_TIMEOUT_MS / 1000} s` }]);
  });
});

describe('protocol version', () => {
  it('accepts a peer of our major version and refuses another', () => {
    expect(isCompatibleProtocol(PROTOCOL_VERSION)).toBe(true);
    expect(isCompatibleProtocol(PROTOCOL_VERSION + 1)).toBe(false);
    expect(isCompatibleProtocol(PROTOCOL_VERSION - 1)).toBe(false);
    expect(isCompatibleProtocol(2, 2)).toBe(true);
    expect(isCompatibleProtocol(Number.NaN)).toBe(false);
  });
});
