import { Readable } from 'node:stream';
import type { HttpHeader } from '@mm/protocol';
import type { BoardLinks } from '../agent-link/board-links.ts';
import { BadGatewayError, boardOffline, PayloadTooLargeError } from '../errors.ts';
import { MAX_CALL_BODY_BYTES, type BoardCalls } from '../replicas/board-calls.ts';
import type { ProxyRelay } from './proxy-relay.ts';

/** The board_calls method of a device-script request relayed through another replica. */
export const SCRIPT_REQUEST_CALL = 'script.request';

interface ScriptRequestParams {
  port: number;
  method: string;
  path: string;
  headers: HttpHeader[];
}

interface ScriptAnswer {
  status: number;
  headers: HttpHeader[];
}

/** A body over the cap is read to its end (and dropped) up to this size, then the connection is cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/**
 * The device-script proxy for a board whose link lives on another replica: the request
 * (its body read whole, 1 MiB at most, else 413) goes through `board_calls`; the replica
 * holding the link relays it as usual and stores the answer (its body 1 MiB at most, else
 * 502 `response_too_large`). Bodies are held in memory here, unlike the streamed local path.
 */
export class RemoteScriptProxy {
  constructor(
    private readonly calls: BoardCalls,
    links: BoardLinks,
    proxy: ProxyRelay,
  ) {
    calls.serve(SCRIPT_REQUEST_CALL, async (boardId, params, body, timeoutMs) => {
      const conn = links.connection(boardId);
      if (!conn) throw boardOffline(boardId);
      const p = params as ScriptRequestParams;
      const done = new AbortController();
      try {
        const res = await proxy.forward({
          conn,
          port: p.port,
          method: p.method,
          path: p.path,
          headers: p.headers,
          body: body ? Readable.from([Buffer.from(body)]) : undefined,
          signal: done.signal,
          timeoutMs,
        });
        const chunks: Buffer[] = [];
        let size = 0;
        if (res.body) {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            size += chunk.length;
            if (size > MAX_CALL_BODY_BYTES) {
              throw new BadGatewayError('response_too_large', 'The device script answered with more than 1 MiB, too much to pass on to another replica.');
            }
            chunks.push(Buffer.from(chunk));
          }
        }
        const headers: HttpHeader[] = [];
        res.headers.forEach((value, name) => {
          if (name !== 'set-cookie') headers.push([name, value]);
        });
        for (const cookie of res.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
        const answer: ScriptAnswer = { status: res.status, headers };
        return { result: answer, body: Buffer.concat(chunks) };
      } finally {
        done.abort();
      }
    });
  }

  async forward(req: {
    boardId: string;
    port: number;
    method: string;
    path: string;
    headers: HttpHeader[];
    body: Readable | undefined;
    signal: AbortSignal;
    timeoutMs: number;
  }): Promise<Response> {
    let body: Buffer | null = null;
    if (req.body) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        // Past the cap the rest is read and dropped (so the client reads the 413), up to a point.
        if (size > DRAIN_LIMIT_BYTES) {
          req.body.destroy();
          break;
        }
        if (size <= MAX_CALL_BODY_BYTES) chunks.push(chunk);
      }
      if (size > MAX_CALL_BODY_BYTES) {
        throw new PayloadTooLargeError('A request for a device script on a board linked to another replica may carry at most 1 MiB.');
      }
      body = Buffer.concat(chunks);
    }
    const params: ScriptRequestParams = { port: req.port, method: req.method, path: req.path, headers: req.headers };
    const { result, body: answerBody } = await this.calls.request(req.boardId, SCRIPT_REQUEST_CALL, params, body, req.timeoutMs, req.signal);
    const answer = result as ScriptAnswer;
    const headers = new Headers();
    for (const [name, value] of answer.headers) headers.append(name, value);
    const empty = NULL_BODY_STATUSES.has(answer.status) || req.method === 'HEAD';
    return new Response(empty ? null : (answerBody ?? new Uint8Array()), { status: answer.status, headers });
  }
}
