import { PassThrough, type Readable } from 'node:stream';
import { StreamError, systemClock, type ByteSink, type Clock, type HttpHeader, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { BoardLink, OpenedSource, PullMessage } from '../agent-link/board-link.ts';
import { ApiError, BadGatewayError, boardOffline, GatewayTimeoutError, ServiceUnavailableError } from '../errors.ts';
import { requestHeadersForScript, responseHeadersForClient } from './http-headers.ts';

/** A request for a device script, as the route hands it over (headers already end-to-end only). */
export interface ScriptRequest {
  conn: BoardLink;
  port: number;
  method: string;
  /** Origin-form target on the board: `/` + the path after `/proxy/`, and the query. */
  path: string;
  headers: HttpHeader[];
  /** The client's request body, if it has one. */
  body: Readable | undefined;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** How long the board may take to answer (reset while the request body moves). */
  timeoutMs: number;
}

/** Statuses whose responses never carry a body (a web Response refuses one). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);
/** How much of a response body may wait in memory for a slow client before the pull stops granting credit. */
const RESPONSE_BUFFER_BYTES = 256 * 1024;

type HeadMessage = MessageOf<'http.response'> | MessageOf<'http.error'>;

/**
 * The proxy half of the relay: each `ANY …/proxy/<path>` becomes an `http.request` to the
 * board's agent; the request body is offered for the agent to pull (source
 * `http.request_body`), and the response body is pulled back (source `http.response_body`)
 * into the client's response as it is read. Neither body is ever held whole: both move
 * under the link's credit-based flow control.
 */
export class ProxyRelay {
  /** `clock`: time for the board's answer deadline. */
  constructor(private readonly clock: Clock = systemClock) {}

  private nextId = 1;
  private readonly pending = new Map<number, RelayedRequest>();
  /** Connections whose close we already watch (one watcher per connection, not per request). */
  private readonly watched = new WeakSet<BoardLink>();

  /** Sends the request to the board; resolves with the script's answer (status, headers, streamed body). */
  forward(req: ScriptRequest): Promise<Response> {
    const id = this.nextId++;
    this.watch(req.conn);
    return new Promise<Response>((resolve, reject) => {
      const relayed = new RelayedRequest(id, req, resolve, reject, () => this.pending.delete(id), this.clock);
      this.pending.set(id, relayed);
      relayed.start();
    });
  }

  onHead(conn: BoardLink, m: HeadMessage): void {
    const r = this.pending.get(m.req_id);
    if (!r || r.conn !== conn) return; // late (timed out, client gone) or not this board's
    r.onHead(m);
  }

  /** The agent pulls a request body: hand it the client's body, once. */
  openRequestBody(conn: BoardLink, pull: PullMessage): OpenedSource {
    const source = pull.source;
    if (source.kind !== 'http.request_body') throw new StreamError({ code: 'not_found', message: 'not a request body' });
    const r = this.pending.get(source.req_id);
    if (!r || r.conn !== conn) throw new StreamError({ code: 'not_found', message: `no relayed request ${source.req_id} has a body to send` });
    if (pull.offset !== 0) throw new StreamError({ code: 'bad_offset', message: 'a request body is sent from its start only' });
    return r.takeBody();
  }

  /** Shutdown: every request still waiting for its answer fails; bodies in flight are cut. */
  close(): void {
    for (const r of [...this.pending.values()]) r.fail(new ServiceUnavailableError('server_stopping', 'The server is shutting down.'));
  }

  private watch(conn: BoardLink): void {
    if (this.watched.has(conn)) return;
    this.watched.add(conn);
    void conn.closed.then(() => {
      for (const r of [...this.pending.values()]) if (r.conn === conn) r.linkClosed();
    });
  }
}

/** One relayed request, from `http.request` to the end of its response body. */
class RelayedRequest {
  private headSettled = false;
  private finished = false;
  private bodyTaken = false;
  /** What the agent's pull reads of the client's body (a copy, see takeBody). */
  private bodyCopy: PassThrough | undefined;
  private timer: TimerHandle | undefined;
  private readonly onClientGone = () => this.clientGone();

  constructor(
    readonly id: number,
    private readonly req: ScriptRequest,
    private readonly resolve: (res: Response) => void,
    private readonly reject: (err: Error) => void,
    private readonly forget: () => void,
    private readonly clock: Clock,
  ) {}

  get conn(): BoardLink {
    return this.req.conn;
  }

  start(): void {
    const { conn, signal } = this.req;
    if (signal.aborted) return this.fail(clientGoneError());
    if (!conn.isOpen) return this.fail(boardOffline());
    signal.addEventListener('abort', this.onClientGone, { once: true });
    this.armTimer();
    conn.sendMessage({
      type: 'http.request',
      req_id: this.id,
      port: this.req.port,
      method: this.req.method,
      path: this.req.path,
      headers: requestHeadersForScript(this.req.headers),
      has_body: this.req.body !== undefined,
    });
  }

  /** The board answered (or could not reach the script). */
  onHead(m: HeadMessage): void {
    if (this.headSettled) return;
    this.headSettled = true;
    this.clock.clearTimeout(this.timer);
    if (m.type === 'http.error') {
      this.finish();
      this.reject(scriptError(m.error, this.req.port));
      return;
    }
    if (m.status < 200 || m.status > 599) {
      this.abortOnBoard();
      this.finish();
      this.reject(new BadGatewayError('bad_script_response', `The device script answered with status ${m.status}, which cannot be relayed.`));
      return;
    }
    const headers = new Headers();
    for (const [name, value] of responseHeadersForClient(m.headers)) {
      try {
        headers.append(name, value);
      } catch {
        // A value a web Headers refuses (non-Latin-1) is dropped rather than failing the answer.
      }
    }
    if (!m.has_body || NULL_BODY_STATUSES.has(m.status)) {
      if (m.has_body) this.abortOnBoard(); // a body the client may not get: the board can stop sending it
      this.finish();
      this.resolve(new Response(null, { status: m.status, headers }));
      return;
    }
    this.resolve(new Response(this.pullResponseBody(), { status: m.status, headers }));
  }

  /** The agent's pull of the client's body (once). Progress keeps the board's deadline away. */
  takeBody(): OpenedSource {
    const body = this.req.body;
    if (!body || this.bodyTaken || this.finished) {
      throw new StreamError({ code: 'not_found', message: `relayed request ${this.id} has no body to send` });
    }
    this.bodyTaken = true;
    // The link reads a copy: when the pull fails the connection destroys what it reads, and
    // that must not be the client's socket (the script's answer may still be on its way).
    const out = new PassThrough();
    this.bodyCopy = out;
    body.pipe(out);
    body.on('data', () => {
      if (!this.headSettled) this.armTimer();
    });
    const cut = () => {
      if (!body.readableEnded) out.destroy(new Error('the client stopped sending its body'));
    };
    body.once('close', cut);
    body.once('error', cut);
    return { stream: out };
  }

  /** The link to the board closed. */
  linkClosed(): void {
    if (!this.headSettled) this.fail(boardOffline(undefined, 'The board disconnected before the device script answered.'));
    // A body being pulled fails by itself (every stream of a closed link fails).
  }

  fail(err: Error): void {
    if (this.finished) return;
    this.headSettled = true;
    this.finish();
    this.reject(err);
  }

  private clientGone(): void {
    if (this.finished) return;
    this.abortOnBoard();
    this.fail(clientGoneError());
  }

  private abortOnBoard(): void {
    if (this.req.conn.isOpen) this.req.conn.sendMessage({ type: 'http.abort', req_id: this.id });
  }

  private armTimer(): void {
    this.clock.clearTimeout(this.timer);
    const ms = this.req.timeoutMs;
    this.timer = this.clock.setTimeout(() => {
      if (this.headSettled) return;
      this.abortOnBoard();
      this.fail(new GatewayTimeoutError('board_timeout', `The board did not answer within ${formatSeconds(ms)} s.`));
    }, ms);
    this.timer.unref();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.clock.clearTimeout(this.timer);
    // Whatever of the body is still to come has no reader any more: the agent's pull fails
    // (and the script's request with it) instead of waiting for a client that stopped sending.
    if (this.bodyCopy && !this.bodyCopy.writableEnded) {
      this.req.body?.unpipe(this.bodyCopy);
      this.bodyCopy.destroy(new Error('the relayed request ended'));
    }
    this.req.signal.removeEventListener('abort', this.onClientGone);
    this.forget();
  }

  /**
   * The response body as a web stream fed by a pull from the agent. Credit is granted as the
   * client's socket takes the bytes (the stream's `pull`), so a slow client slows the script's
   * sender, not the server's memory.
   */
  private pullResponseBody(): ReadableStream<Uint8Array> {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let wake: (() => void) | undefined;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
        },
        pull: () => {
          wake?.();
          wake = undefined;
        },
        cancel: () => {
          cancelled = true;
          wake?.();
          wake = undefined;
          this.clientGone();
        },
      },
      { highWaterMark: RESPONSE_BUFFER_BYTES, size: (chunk) => chunk.byteLength },
    );
    const sink: ByteSink = {
      write: async (chunk) => {
        if (cancelled) throw new Error('the client went away');
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 0) <= 0) await new Promise<void>((resolve) => (wake = resolve));
        if (cancelled) throw new Error('the client went away');
      },
      finish: async () => {
        if (!cancelled) controller.close();
      },
      destroy: (err) => {
        if (!cancelled) controller.error(err);
      },
    };
    this.req.conn.pull({ kind: 'http.response_body', req_id: this.id }, sink).then(
      () => this.finish(),
      () => this.finish(), // the sink was destroyed: the client's response is cut short
    );
    return stream;
  }
}

/** Nobody reads this answer (the client left); nginx's 499 keeps it out of the 5xx error logs. */
function clientGoneError(): ApiError {
  return new ApiError(499, 'client_closed_request', 'Client Closed Request', 'The client went away before the device script answered.');
}

/** The board refuses to relay to a port its own settings (MM_SCRIPT_PORTS) do not list. */
export const SCRIPT_PORT_NOT_ALLOWED = 'script_port_not_allowed';

function scriptError(error: { code: string; message: string }, port: number): ApiError {
  if (error.code === SCRIPT_PORT_NOT_ALLOWED) {
    // Not a failure of the script or the board: the board's policy. 403, whoever asks.
    return new ApiError(403, SCRIPT_PORT_NOT_ALLOWED, 'Forbidden', `The board does not relay to port ${port}: add it to the agent's MM_SCRIPT_PORTS to allow it. (${error.message})`);
  }
  if (error.code === 'script_unreachable') {
    return new BadGatewayError('script_unreachable', `Nothing answers on port ${port} of the board: is the device script running? (${error.message})`);
  }
  return new BadGatewayError(error.code, `The request to the device script on port ${port} failed: ${error.message}`);
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
