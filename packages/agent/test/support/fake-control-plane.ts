import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  type AgentMessage,
  type ByteSink,
  decodeFrame,
  type LinkOutput,
  MAX_FRAME_BYTES,
  parseAgentMessage,
  PROTOCOL_VERSION,
  StreamReceiver,
  StreamSender,
} from '@mm/protocol';

type PullMessage = Extract<AgentMessage, { type: 'stream.pull' }>;

/**
 * A small stand-in for the control plane's side of the agent link, for agent-level tests:
 * a real HTTP server with a real `ws` WebSocketServer that checks the bearer token (401
 * otherwise), answers hello with welcome, records every message (each parsed with the
 * catalog's `parseAgentMessage`: anything that does not parse is kept in `invalid`), and
 * serves `stream.pull` of content from files with the protocol's StreamSender.
 */
export class FakeControlPlane {
  token: string;
  readonly links: FakeAgentLink[] = [];
  /** Content the server "stores": sha256 → file. */
  readonly content = new Map<string, string>();
  /** Upgrade attempts refused with 401. */
  rejected = 0;
  /** When set, decides what to do with a content pull instead of serving it in full. */
  onContentPull: ((link: FakeAgentLink, pull: PullMessage) => boolean | Promise<boolean>) | undefined;
  autoWelcome = true;
  /** When false, the server's socket does not answer pings (a dead peer). */
  autoPong = true;
  private readonly linkWaiters: Array<(l: FakeAgentLink) => void> = [];

  private constructor(
    private readonly server: http.Server,
    private readonly wss: WebSocketServer,
    private readonly silentWss: WebSocketServer,
    token: string,
  ) {
    this.token = token;
  }

  static async start(token: string): Promise<FakeControlPlane> {
    const server = http.createServer((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    const options = { noServer: true, perMessageDeflate: false, maxPayload: MAX_FRAME_BYTES };
    const wss = new WebSocketServer({ ...options, autoPong: true });
    const silentWss = new WebSocketServer({ ...options, autoPong: false });
    const plane = new FakeControlPlane(server, wss, silentWss, token);
    server.on('upgrade', (req, socket, head) => {
      if (req.headers.authorization !== `Bearer ${plane.token}`) {
        plane.rejected++;
        const body = JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'invalid_token', detail: 'wrong board token' });
        socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
        return;
      }
      (plane.autoPong ? wss : silentWss).handleUpgrade(req, socket, head, (ws) => {
        const link = new FakeAgentLink(plane, ws);
        plane.links.push(link);
        for (const w of plane.linkWaiters.splice(0)) w(link);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return plane;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The link after `count` links already seen (i.e. the next new one), or an existing one. */
  async link(index: number, timeoutMs = 20_000): Promise<FakeAgentLink> {
    const deadline = Date.now() + timeoutMs;
    while (this.links.length <= index) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no agent link #${index} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, remaining);
        this.linkWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.links[index]!;
  }

  async close(): Promise<void> {
    for (const l of this.links) l.ws.terminate();
    this.wss.close();
    this.silentWss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export class FakeAgentLink implements LinkOutput {
  readonly messages: AgentMessage[] = [];
  readonly invalid: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly pulls: PullMessage[] = [];
  private readonly senders = new Map<number, StreamSender>();
  private readonly receivers = new Map<number, StreamReceiver>();
  private nextPullId = 0x8000_0000;
  private waiters: Array<() => void> = [];
  /** Bytes of content sent to the agent on this link. */
  bytesServed = 0;

  constructor(
    readonly plane: FakeControlPlane,
    readonly ws: WebSocket,
  ) {
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) {
        const f = decodeFrame(buf);
        if (f.ok) this.receivers.get(f.streamId)?.push(f.payload);
        return;
      }
      const text = buf.toString('utf8');
      const parsed = parseAgentMessage(text);
      if (!parsed.ok) {
        this.invalid.push(text);
        return;
      }
      this.handle(parsed.message);
      this.messages.push(parsed.message);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  private handle(m: AgentMessage): void {
    switch (m.type) {
      case 'hello':
        if (this.plane.autoWelcome) this.welcome();
        return;
      case 'stream.pull':
        this.pulls.push(m);
        void this.servePull(m);
        return;
      case 'stream.credit':
        this.senders.get(m.stream_id)?.addCredit(m.bytes);
        return;
      case 'stream.end':
        this.receivers.get(m.stream_id)?.end(m.size);
        return;
      case 'stream.abort':
        this.receivers.get(m.stream_id)?.fail(m.error);
        this.senders.get(m.stream_id)?.fail(m.error);
        return;
      default:
    }
  }

  welcome(): void {
    this.sendMessage({ type: 'welcome', board_id: '00000000-0000-4000-8000-000000000001', board_name: 'test board', server_version: '0.0.0-test', protocol_version: PROTOCOL_VERSION });
  }

  sendMessage(message: { type: string } & Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  sendFrame(frame: Buffer, payload?: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) =>
      this.ws.send(payload ? Buffer.concat([frame, payload]) : frame, { binary: true }, (err) => (err ? reject(err) : resolve())),
    );
  }

  /** Serves a content pull in full from the plane's files (unless `onContentPull` took it). */
  private async servePull(pull: PullMessage): Promise<void> {
    if (pull.source.kind === 'content' && this.plane.onContentPull && (await this.plane.onContentPull(this, pull))) return;
    const file = pull.source.kind === 'content' ? this.plane.content.get(pull.source.sha256) : undefined;
    if (!file) {
      this.sendMessage({ type: 'stream.abort', stream_id: pull.stream_id, error: { code: 'not_found', message: 'no such content' } });
      return;
    }
    await this.serveFile(pull, file);
  }

  /** Sends `file` from the pull's offset to its end, then `stream.end`. */
  async serveFile(pull: PullMessage, file: string): Promise<void> {
    const size = fs.statSync(file).size;
    const sender = new StreamSender(this, pull.stream_id, pull.credit);
    this.senders.set(pull.stream_id, sender);
    try {
      this.bytesServed += await sender.pump(fs.createReadStream(file, { start: pull.offset, highWaterMark: 256 * 1024 }), size);
    } catch {
      // link closed or agent aborted
    } finally {
      this.senders.delete(pull.stream_id);
    }
  }

  /** Pulls produced content from the agent into `dest` (as the server does for output videos). */
  async pullProduced(sha256: string, dest: string): Promise<{ bytes: number; size: number }> {
    const id = this.nextPullId++;
    const out = fs.createWriteStream(dest);
    const sink: ByteSink = {
      write: (c) => new Promise((resolve, reject) => out.write(c, (e) => (e ? reject(e) : resolve()))),
      finish: () => new Promise((resolve) => out.end(() => resolve())),
      destroy: () => out.destroy(),
    };
    const receiver = new StreamReceiver(this, id, sink);
    this.receivers.set(id, receiver);
    this.sendMessage({ type: 'stream.pull', stream_id: id, source: { kind: 'produced', sha256 }, offset: 0, credit: receiver.window });
    try {
      return await receiver.done;
    } finally {
      this.receivers.delete(id);
    }
  }

  /** Resolves with the first message (already received or to come) of `type` that matches. */
  async waitFor<T extends AgentMessage['type']>(
    type: T,
    match: (m: Extract<AgentMessage, { type: T }>) => boolean = () => true,
    timeoutMs = 30_000,
  ): Promise<Extract<AgentMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find((m): m is Extract<AgentMessage, { type: T }> => m.type === type && match(m as Extract<AgentMessage, { type: T }>));
      if (found) return found;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no ${type} message within ${timeoutMs} ms; got ${this.messages.map((m) => m.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  of<T extends AgentMessage['type']>(type: T): Array<Extract<AgentMessage, { type: T }>> {
    return this.messages.filter((m): m is Extract<AgentMessage, { type: T }> => m.type === type);
  }

  /** The text of every op.log of an operation, in order. */
  logOf(opId: number): string {
    return this.of('op.log')
      .filter((m) => m.op_id === opId)
      .map((m) => m.data)
      .join('');
  }
}
