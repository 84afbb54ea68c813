import http from 'node:http';
import { HttpHeader, STREAM_CHUNK_BYTES, StreamError, systemClock, type ByteSink, type Clock, type MessageOf, type TimerHandle } from '@mm/protocol';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';
import type { Logger } from '../logger.ts';

/**
 * The only host the relay ever connects to: device scripts serve on the board's loopback,
 * and the server names only a port (a catalogue entry's) and an origin-form path, so no
 * request through the relay can reach anything else on the board's network.
 */
export const SCRIPT_HOST = '127.0.0.1';

/**
 * Credit the agent grants for a request body: what may be in flight towards a slow script.
 * At least STREAM_CHUNK_BYTES, or a full-size data frame could never be sent.
 */
const REQUEST_BODY_WINDOW_BYTES = Math.max(1024 * 1024, STREAM_CHUNK_BYTES);
/** A response body the server has not started pulling by then is dropped (the server gave up). */
const UNCLAIMED_BODY_MS = 30_000;

/**
 * Headers the agent sets itself (the socket, its framing) whatever the server sent, and
 * the client's cookies, which belong to the control plane's origin, never to a script.
 * (The server drops them too; the board does not rely on that.)
 */
const OWN_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'cookie']);

/** The `http.error` code of a request to a port the board's own settings do not allow. */
export const PORT_NOT_ALLOWED = 'script_port_not_allowed';

/**
 * The board's own answer to "may the relay reach this port?": MM_SCRIPT_PORTS (plus the
 * simulated GPIO script's port with --simulate). The catalogue names a port, this decides.
 */
export type ScriptPortPolicy = ReadonlySet<number>;

export function portRefusal(port: number, allowed: ScriptPortPolicy): string | undefined {
  if (allowed.has(port)) return undefined;
  return `port ${port} is not one the board relays to (MM_SCRIPT_PORTS: ${[...allowed].join(',') || 'none'})`;
}

interface Relayed {
  id: number;
  conn: ControlPlaneLink;
  req: http.ClientRequest;
  res: http.IncomingMessage | undefined;
  bodyPulled: boolean;
  unclaimed: TimerHandle | undefined;
  dropped: boolean;
}

/**
 * The agent's half of the proxy: `http.request` → a node:http request to
 * 127.0.0.1:<port>, its body pulled from the server (source `http.request_body`) and
 * written as the script takes it, the answer sent back as `http.response` and its body
 * served to the server's pull (source `http.response_body`) as the server grants credit.
 * `http.abort` or a closed link ends the request.
 */
export class HttpRelay {
  private readonly byConnection = new Map<ControlPlaneLink, Map<number, Relayed>>();

  constructor(
    private readonly log: Logger,
    private readonly allowedPorts: ScriptPortPolicy,
    private readonly clock: Clock = systemClock,
  ) {}

  request(m: MessageOf<'http.request'>, conn: ControlPlaneLink): void {
    const table = this.tableOf(conn);
    if (table.has(m.req_id)) {
      conn.sendMessage({ type: 'http.error', req_id: m.req_id, error: { code: 'bad_request', message: `request ${m.req_id} is already open` } });
      return;
    }
    const refusal = portRefusal(m.port, this.allowedPorts);
    if (refusal) {
      this.log.warn({ req_id: m.req_id, port: m.port }, 'refused a relayed request to a port not in MM_SCRIPT_PORTS');
      conn.sendMessage({ type: 'http.error', req_id: m.req_id, error: { code: PORT_NOT_ALLOWED, message: refusal } });
      return;
    }
    let req: http.ClientRequest;
    try {
      req = http.request({
        host: SCRIPT_HOST,
        port: m.port,
        method: m.method,
        path: m.path,
        headers: nodeHeaders(m.headers, m.has_body),
        // A fresh connection per request: nothing is shared between relayed requests.
        agent: false,
      });
    } catch (err) {
      // Node refuses what it cannot send (a bad method, path or header value).
      conn.sendMessage({ type: 'http.error', req_id: m.req_id, error: { code: 'bad_request', message: messageOf(err) } });
      return;
    }
    const entry: Relayed = { id: m.req_id, conn, req, res: undefined, bodyPulled: false, unclaimed: undefined, dropped: false };
    table.set(m.req_id, entry);
    this.log.debug({ req_id: m.req_id, method: m.method, port: m.port, path: m.path }, 'relaying a request');

    req.on('response', (res) => this.onResponse(entry, m.method, res));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // After the answer a failure shows in its body's stream; after a drop nobody waits.
      if (entry.res || entry.dropped) return;
      const code = err.code === 'ECONNREFUSED' ? 'script_unreachable' : 'script_failed';
      this.log.debug({ req_id: m.req_id, port: m.port, err }, 'relayed request failed');
      conn.sendMessage({ type: 'http.error', req_id: m.req_id, error: { code, message: `${err.code ?? 'error'}: ${err.message}` } });
      this.drop(entry);
    });

    if (!m.has_body) {
      req.end();
      return;
    }
    const receiver = conn.pull({ kind: 'http.request_body', req_id: m.req_id }, 0, requestSink(req), { window: REQUEST_BODY_WINDOW_BYTES });
    receiver.done.catch((err: unknown) => {
      // The client's body did not arrive whole: the script must not take a truncated one as complete.
      if (!entry.res?.complete) {
        this.log.debug({ req_id: m.req_id, err }, 'request body failed: ending the request');
        req.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /** The server gave the request up. */
  abort(m: MessageOf<'http.abort'>, conn: ControlPlaneLink): void {
    const entry = this.byConnection.get(conn)?.get(m.req_id);
    if (entry) this.drop(entry);
  }

  /** The server pulls a response body (source `http.response_body`). */
  async serveResponseBody(pull: MessageOf<'stream.pull'>, conn: ControlPlaneLink): Promise<void> {
    const source = pull.source;
    const entry = source.kind === 'http.response_body' ? this.byConnection.get(conn)?.get(source.req_id) : undefined;
    await conn.serve(pull, async () => {
      if (!entry?.res || entry.bodyPulled) throw new StreamError({ code: 'not_found', message: 'no relayed response body under that id' });
      if (pull.offset !== 0) throw new StreamError({ code: 'bad_offset', message: 'a response body is sent from its start only' });
      entry.bodyPulled = true;
      this.clock.clearTimeout(entry.unclaimed);
      // Its size is known only at its end (chunked, or an endless event stream).
      return { source: entry.res };
    });
    if (entry) this.drop(entry);
  }

  /** Ends every relayed request (agent stopping). */
  closeAll(): void {
    for (const table of this.byConnection.values()) for (const entry of [...table.values()]) this.drop(entry);
  }

  private onResponse(entry: Relayed, method: string, res: http.IncomingMessage): void {
    entry.res = res;
    // Failures of the body surface through the pull that reads it (or nobody reads it).
    res.on('error', () => {});
    if (entry.dropped) {
      res.destroy();
      return;
    }
    const status = res.statusCode ?? 502;
    const hasBody = method !== 'HEAD' && status !== 204 && status !== 304 && res.headers['content-length'] !== '0';
    entry.conn.sendMessage({
      type: 'http.response',
      req_id: entry.id,
      status,
      // Only what the link's schema accepts (Node's parser already refuses CR/LF in values).
      headers: rawPairs(res.rawHeaders).filter((h) => HttpHeader.safeParse(h).success),
      has_body: hasBody,
    });
    if (!hasBody) {
      res.resume();
      this.forget(entry);
      return;
    }
    entry.unclaimed = this.clock.setTimeout(() => {
      this.log.debug({ req_id: entry.id }, 'response body never pulled: dropping it');
      this.drop(entry);
    }, UNCLAIMED_BODY_MS);
    entry.unclaimed.unref();
  }

  private tableOf(conn: ControlPlaneLink): Map<number, Relayed> {
    let table = this.byConnection.get(conn);
    if (!table) {
      const created = new Map<number, Relayed>();
      this.byConnection.set(conn, created);
      // The link closed: nobody will read the answers, and the server already failed them.
      void conn.ended.then(() => {
        for (const entry of [...created.values()]) this.drop(entry);
        this.byConnection.delete(conn);
      });
      table = created;
    }
    return table;
  }

  private drop(entry: Relayed): void {
    entry.dropped = true;
    this.clock.clearTimeout(entry.unclaimed);
    entry.req.destroy();
    entry.res?.destroy();
    this.forget(entry);
  }

  private forget(entry: Relayed): void {
    this.byConnection.get(entry.conn)?.delete(entry.id);
  }
}

/** Header pairs as node:http takes them (repeated names as arrays), minus those the agent owns. */
function nodeHeaders(pairs: readonly HttpHeader[], hasBody: boolean): http.OutgoingHttpHeaders {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    if (OWN_HEADERS.has(key)) continue;
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  // A body of unknown length goes chunked (node:http would not for GET, DELETE or OPTIONS by itself).
  if (hasBody && out['content-length'] === undefined) out['transfer-encoding'] = 'chunked';
  return out;
}

function rawPairs(raw: readonly string[]): HttpHeader[] {
  const pairs: HttpHeader[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/** Writes a pulled request body into the script's request; credit follows the script's reading. */
function requestSink(req: http.ClientRequest): ByteSink {
  return {
    write: (chunk) => new Promise<void>((resolve, reject) => req.write(chunk, (err) => (err ? reject(err) : resolve()))),
    finish: async () => {
      req.end();
    },
    // The failure is handled where the pull's outcome is (the request is ended there).
    destroy: () => {},
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
