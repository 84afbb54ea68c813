import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  LinkPeer,
  MAX_FRAME_BYTES,
  parseAgentMessage,
  PROTOCOL_VERSION,
  SERVER_PULL_IDS,
  writableSink,
  type AgentMessage,
  type PeerLog,
  type ServerMessage,
} from '@mm/protocol';

type PullMessage = Extract<AgentMessage, { type: 'stream.pull' }>;

/**
 * A small stand-in for the control plane's side of the agent link, for agent-level tests:
 * a real HTTP server with a real `ws` WebSocketServer that checks the bearer token (401
 * otherwise), answers hello with welcome, records every message (each parsed with the
 * catalog's `parseAgentMessage`: anything that does not parse is kept in `invalid`), and
 * serves `stream.pull` of content from files; each connection is the protocol's LinkPeer.
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
  /** What the welcome names in `features` (a real server names `op.output`). */
  features: string[] | undefined;
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

const quiet = () => {};
const quietLog: PeerLog = { debug: quiet, info: quiet, warn: quiet, error: quiet };

/** The control plane's end of one agent connection, on the protocol's LinkPeer. */
export class FakeAgentLink {
  readonly messages: AgentMessage[] = [];
  readonly invalid: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly pulls: PullMessage[] = [];
  readonly peer: LinkPeer<AgentMessage, ServerMessage>;
  private waiters: Array<() => void> = [];
  /** Bytes of content sent to the agent on this link. */
  bytesServed = 0;

  constructor(
    readonly plane: FakeControlPlane,
    readonly ws: WebSocket,
  ) {
    this.peer = new LinkPeer<AgentMessage, ServerMessage>({
      socket: ws,
      parse: (text) => {
        const parsed = parseAgentMessage(text);
        if (!parsed.ok) this.invalid.push(text);
        return parsed;
      },
      pullIds: SERVER_PULL_IDS,
      peerName: 'the agent',
      log: quietLog,
      handlers: {
        observe: (m) => {
          this.messages.push(m);
          for (const w of this.waiters.splice(0)) w();
        },
        message: (m) => this.handle(m),
      },
    });
    this.closed = this.peer.closed;
  }

  private handle(m: AgentMessage): void {
    if (m.type === 'hello' && this.plane.autoWelcome) this.welcome();
    if (m.type === 'stream.pull') {
      this.pulls.push(m);
      void this.servePull(m);
    }
  }

  welcome(): void {
    const features = this.plane.features ? { features: this.plane.features } : {};
    this.peer.send({ type: 'welcome', board_id: '00000000-0000-4000-8000-000000000001', board_name: 'test board', server_version: '0.0.0-test', protocol_version: PROTOCOL_VERSION, ...features });
  }

  /** Sends any JSON object, valid or not (tests of the agent's checks send broken ones). */
  sendMessage(message: { type: string } & Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  /** Sends one binary message (a data frame, or a broken one). */
  sendFrame(frame: Buffer, payload?: Uint8Array): Promise<void> {
    return this.peer.sendFrame(frame, payload);
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
    const served = await this.peer.serve(pull, async () => ({
      source: fs.createReadStream(file, { start: pull.offset, highWaterMark: 256 * 1024 }),
      size: fs.statSync(file).size,
    }));
    if (served.ok) this.bytesServed += served.bytes;
  }

  /** Pulls produced content from the agent into `dest` (as the server does for output videos). */
  pullProduced(sha256: string, dest: string): Promise<{ bytes: number; size: number }> {
    return this.peer.pull({ kind: 'produced', sha256 }, 0, writableSink(fs.createWriteStream(dest))).done;
  }

  /** Pulls the output video an `op.output` offered into `dest`. */
  pullOutput(opId: number, dest: string): Promise<{ bytes: number; size: number }> {
    return this.peer.pull({ kind: 'output', op_id: opId }, 0, writableSink(fs.createWriteStream(dest))).done;
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
