/**
 * A tiny agent speaking the link protocol over a real `ws` socket, for the control plane's
 * own tests (the real agent is tested end to end in test/e2e), built on the protocol's
 * LinkPeer. Everything it receives is kept in order; tests wait for messages, answer them
 * and pull/serve streams by hand.
 */
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import {
  AGENT_CONNECT_PATH,
  AGENT_PULL_IDS,
  LinkPeer,
  parseServerMessage,
  PROTOCOL_VERSION,
  StreamError,
  type AgentMessage,
  type ByteSink,
  type OperationOutcome,
  type PeerLog,
  type ServerMessage,
  type StreamSource,
} from '@mm/protocol';

type Msg = ServerMessage;

const quiet = () => {};
const quietLog: PeerLog = { debug: quiet, info: quiet, warn: quiet, error: quiet };
type MsgOf<T extends Msg['type']> = Extract<Msg, { type: T }>;

export interface ConnectResult {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Tries to open the agent link; answers the HTTP refusal if there is one. */
export function tryConnect(baseUrl: string, token: string | undefined): Promise<{ ws: WebSocket } | { refused: ConnectResult }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(new URL(AGENT_CONNECT_PATH, baseUrl.replace(/^http/, 'ws')), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ refused: { status: res.statusCode ?? 0, body, headers: res.headers } }));
      res.on('error', () => resolve({ refused: { status: res.statusCode ?? 0, body, headers: res.headers } }));
    });
    ws.once('error', (err) => reject(err));
  });
}

export interface HelloFields {
  boot_id?: string;
  agent_version?: string;
  active_pac?: string | null;
  cached?: string[];
  running?: number[];
  finished?: OperationOutcome[];
  protocol_version?: number;
}

export class FakeAgent {
  readonly received: Msg[] = [];
  /** The protocol's own link peer: framing, streams and credit as both real ends have them. */
  readonly peer: LinkPeer<ServerMessage, AgentMessage>;
  private readonly waiters = new Set<() => void>();
  /** Produced files this agent serves when the server pulls them. */
  readonly produced = new Map<string, Buffer>();
  /** Output videos announced by `op.output`, by operation, served when the server pulls source `output`. */
  readonly offered = new Map<number, Buffer>();
  /** When set, the server's pulls of produced files are left unanswered. */
  holdPulls = false;
  closeCode: number | undefined;
  readonly closed: Promise<number>;

  private constructor(readonly ws: WebSocket) {
    this.peer = new LinkPeer<ServerMessage, AgentMessage>({
      socket: ws,
      parse: (text) => {
        const parsed = parseServerMessage(text);
        if (!parsed.ok) throw new Error(`server sent a bad message: ${parsed.error}`);
        return parsed;
      },
      pullIds: AGENT_PULL_IDS,
      peerName: 'the server',
      log: quietLog,
      handlers: {
        observe: (m) => {
          this.received.push(m);
          this.notify();
        },
        message: (m) => this.handle(m),
      },
    });
    this.closed = this.peer.closed.then(({ code }) => {
      this.closeCode = code;
      this.notify();
      return code;
    });
  }

  static async connect(baseUrl: string, token: string, opts: { autoPong?: boolean } = {}): Promise<FakeAgent> {
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const s = new WebSocket(new URL(AGENT_CONNECT_PATH, baseUrl.replace(/^http/, 'ws')), {
        headers: { authorization: `Bearer ${token}` },
        autoPong: opts.autoPong ?? true,
      });
      s.once('open', () => resolve(s));
      s.once('error', reject);
      s.once('unexpected-response', (_q, res) => reject(new Error(`refused with ${res.statusCode}`)));
    });
    return new FakeAgent(ws);
  }

  /** Connects and says hello; resolves with the welcome. */
  static async online(baseUrl: string, token: string, hello: HelloFields = {}): Promise<FakeAgent> {
    const a = await FakeAgent.connect(baseUrl, token);
    await a.hello(hello);
    return a;
  }

  async hello(fields: HelloFields = {}): Promise<MsgOf<'welcome'>> {
    this.send({
      type: 'hello',
      protocol_version: fields.protocol_version ?? PROTOCOL_VERSION,
      agent_version: fields.agent_version ?? '0.0.0-test',
      hostname: 'fake-board',
      platform: 'linux',
      arch: 'arm64',
      boot_id: fields.boot_id ?? 'boot-1',
      active_pac: fields.active_pac ?? null,
      cached: fields.cached ?? [],
      running: fields.running ?? [],
      finished: fields.finished ?? [],
    });
    return this.next('welcome');
  }

  /** Sends any JSON object, valid or not (tests of the server's checks send broken ones). */
  send(message: { type: string } & Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Waits for a message (already received or coming) that matches; each is handed out once. */
  async next<T extends Msg['type']>(type: T, match: (m: MsgOf<T>) => boolean = () => true, timeoutMs = 15_000): Promise<MsgOf<T>> {
    const taken = (this.taken ??= new Set());
    const find = () => this.received.find((m) => m.type === type && !taken.has(m) && match(m as MsgOf<T>)) as MsgOf<T> | undefined;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = find();
      if (m) {
        taken.add(m);
        return m;
      }
      if (this.closeCode !== undefined) throw new Error(`link closed (${this.closeCode}) while waiting for ${type}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} within ${timeoutMs} ms; got ${this.received.map((r) => r.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const w = () => {
          this.waiters.delete(w);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(w, left);
        this.waiters.add(w);
      });
    }
  }
  private taken: Set<Msg> | undefined;

  /** Pulls content from the server into memory (from `offset`). */
  pullContent(sha256: string, offset = 0, window?: number): Promise<{ data: Buffer; size: number }> {
    return this.pull({ kind: 'content', sha256 }, offset, window);
  }

  /** Pulls any source from the server into memory (from `offset`), granting `window` bytes of credit. */
  async pull(source: StreamSource, offset = 0, window?: number): Promise<{ data: Buffer; size: number }> {
    const chunks: Buffer[] = [];
    const sink: ByteSink = { write: async (c) => void chunks.push(Buffer.from(c)), finish: async () => {}, destroy: () => {} };
    const { size } = await this.peer.pull(source, offset, sink, window ? { window } : {}).done;
    return { data: Buffer.concat(chunks), size };
  }

  /** Sends a pull by hand and never reads it (to abort or drop mid-way); answers its id. */
  startPull(source: StreamSource, offset = 0, credit = 1024 * 1024): number {
    const id = this.nextHandPull++;
    this.send({ type: 'stream.pull', stream_id: id, source, offset, credit });
    return id;
  }
  /** Hand-made pulls take ids apart from the peer's own (which count up from 1). */
  private nextHandPull = 0x4000_0000;

  /** Answers the server's pull with `data` in `chunkBytes` pieces, under its credit; the size is left to the end. */
  serve(pull: MsgOf<'stream.pull'>, data: Buffer, chunkBytes = 64 * 1024): Promise<{ bytes: number; ok: boolean }> {
    return this.peer.serve(pull, async () => ({
      source: (async function* () {
        for (let at = 0; at < data.length; at += chunkBytes) yield data.subarray(at, at + chunkBytes);
      })(),
    }));
  }

  private handle(m: Msg): void {
    if (m.type !== 'stream.pull' || this.holdPulls) return;
    if (m.source.kind !== 'produced' && m.source.kind !== 'output') return;
    const data = m.source.kind === 'produced' ? this.produced.get(m.source.sha256) : this.offered.get(m.source.op_id);
    void this.peer.serve(m, async () => {
      if (!data) throw new StreamError({ code: 'not_found', message: 'no such produced file' });
      const body = data.subarray(m.offset);
      return {
        source: (async function* () {
          yield body;
        })(),
        size: data.length,
      };
    });
  }

  /** Announces `data` as the output of `opId` before its outcome (`op.output`), as an agent does while it hashes the video. */
  offerOutput(opId: number, filename: string, data: Buffer, contentType = 'video/mp4'): void {
    this.offered.set(opId, data);
    this.send({ type: 'op.output', op_id: opId, filename, size: data.length, content_type: contentType });
  }

  /** The server's pulls of this agent's files so far (`produced` and `output`). */
  pullsOfOwnFiles(): StreamSource[] {
    return this.received.flatMap((m) => (m.type === 'stream.pull' && (m.source.kind === 'produced' || m.source.kind === 'output') ? [m.source] : []));
  }

  /** Offers `data` as produced content; answers its outcome descriptor. */
  produce(filename: string, data: Buffer, contentType = 'video/mp4') {
    const sha256 = createHash('sha256').update(data).digest('hex');
    this.produced.set(sha256, data);
    return { filename, sha256, size: data.length, content_type: contentType };
  }

  outcome(opId: number, status: 'succeeded' | 'failed' | 'cancelled', extra: Partial<OperationOutcome> = {}): OperationOutcome {
    return {
      op_id: opId,
      status,
      finished_at: new Date().toISOString(),
      result: extra.result ?? {},
      error: extra.error ?? (status === 'succeeded' ? null : { code: status === 'failed' ? 'runner_failed' : 'cancelled', message: status }),
      output: extra.output ?? null,
    };
  }

  /** Sends op.result and waits for the server's acknowledgement. */
  async report(outcome: OperationOutcome): Promise<void> {
    this.send({ type: 'op.result', outcome });
    await this.next('op.result.ack', (a) => a.op_id === outcome.op_id);
  }

  close(code = 1000): Promise<number> {
    if (this.closeCode === undefined) this.ws.close(code);
    return this.closed;
  }

  terminate(): void {
    this.ws.terminate();
  }
}

export const sha256Of = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
