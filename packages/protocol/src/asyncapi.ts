import { z } from 'zod';
import { FRAME_DATA, FRAME_HEADER_BYTES } from './frames.ts';
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, LINK_WINDOW_CAP_BYTES, MAX_FRAME_BYTES, STREAM_WINDOW_BYTES } from './limits.ts';
import { AgentMessage, catalog, ServerMessage, type MessageType } from './messages.ts';
import { rpcMethods } from './rpc.ts';
import { AGENT_CONNECT_PATH, CloseCode, PROTOCOL_VERSION } from './version.ts';

/**
 * The agent link as an AsyncAPI 3.0 document, generated from the message catalog, so the
 * document cannot drift from what both ends validate. Payloads are the catalog's zod
 * schemas through `z.toJSONSchema` (draft-07, the dialect AsyncAPI schemas extend).
 * Directions come from the `AgentMessage` / `ServerMessage` unions, not from comments.
 *
 * Written from the control plane's point of view: it *receives* what agents send and
 * *sends* what agents receive.
 */

/** One line per message type (zod schemas carry no prose); a test checks none is missing. */
export const messageSummaries: Record<MessageType, string> = {
  hello: 'First message on every connection: versions, identity, boot id, cached content, running and finished operations, the optional features it takes (`stream.compress`, `stream.push`, `board.facts`), what it decodes for pushed streams, and (with `board.facts`) what it found on the board.',
  'board.facts': 'The board’s facts changed since hello (a PAC activated, an agent updated): the whole new set (only to a server whose welcome names `board.facts`).',
  welcome: 'The answer to hello: the board this token belongs to, the server version and the optional features it takes (`op.output`, `stream.compress`, `stream.push`, `board.telemetry`, `board.facts`).',
  error: 'The answer to a message that could not be understood or handled. Never answered itself.',
  'op.start': 'Start (or, after a reconnect, resume) a transfer or execute operation.',
  'op.cancel': 'Stop an operation; the agent ends its whole process group and reports `cancelled`.',
  'op.progress': 'Bytes moved or phase changed.',
  'op.log': 'Runner output (or the agent’s own notes), live.',
  'op.output': 'An execute’s runner exited and left this output video: the server may pull it (source `output`) while the agent hashes it; kept only if `op.result` names the same sha256 and size.',
  'op.result': 'How an operation ended; repeated (in hello.finished) until acknowledged.',
  'op.result.ack': 'The server stored the outcome (and its output file); the agent drops it from its journal.',
  'stream.pull': 'Sent by the side that wants bytes: open a stream of a source from an offset, with initial credit (and, when both sides take `stream.compress`, the codecs it decodes).',
  'stream.push': 'From the server, when both sides take `stream.push`: a stream of an operation’s input file opened by the sender right behind op.start (no pull’s round trip), with initial credit; the agent adopts it as its pull or declines it (`stream.abort`, `declined`).',
  'stream.credit': 'The puller wrote more bytes to disk: the sender may send that much more.',
  'stream.end': 'From the sender: everything from the offset was sent; `size` is the whole source’s size.',
  'stream.abort': 'Either side gives the stream up (unknown source, read error, cancel).',
  'rpc.request': 'Call a method on the agent (see the `rpc.*` schemas for each method’s params and result).',
  'rpc.response': 'The answer to rpc.request with the same id.',
  'http.request': 'Relay: make an HTTP request to a device script on the board’s loopback (127.0.0.1:<port>); the body, if any, is pulled as source http.request_body.',
  'http.abort': 'Relay: the server gives a relayed request up (client gone or timed out); the agent ends it and its streams.',
  'http.response': 'Relay: the script’s status and headers; the body, if any, is pulled as source http.response_body.',
  'http.error': 'Relay: the request failed before the script answered (script_unreachable, script_failed, bad_request).',
  'sse.subscribe': 'Relay: follow a device script’s event stream on the board and forward its events until unsubscribed or the link closes.',
  'sse.unsubscribe': 'Relay: stop following the event stream of a subscription.',
  'sse.event': 'Relay: one event of a followed stream (id, event name, data).',
  'sse.status': 'Relay: a followed stream opened, or dropped (the agent keeps retrying).',
  'board.telemetry': 'The board’s temperatures, power, memory, load and free disk, every MM_TELEMETRY_INTERVAL_S (only to a server that takes `board.telemetry`).',
  'term.open': 'Terminal: start a login shell as MM_TERMINAL_USER in a pseudo-terminal of the given size (only to an agent whose hello names `terminal`), with the window of output it may send before acknowledgements.',
  'term.data': 'Terminal: bytes, base64 — keystrokes to the board, the shell’s output from it.',
  'term.ack': 'Terminal: the receiver passed on that many more bytes of the other side’s term.data; that much more may come (flow control).',
  'term.resize': 'Terminal: the client’s window changed size.',
  'term.close': 'Terminal: the client left; the agent hangs up the shell and answers term.exit.',
  'term.exit': 'Terminal: the session ended — the shell’s exit status, or null with an error (terminal_disabled, idle_timeout, board_rebooting, pty_failed).',
  'scripts.state': 'The states of every device script deployed on the board, whole, whenever one changes (to a server that takes `device.scripts`).',
};

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonSchema {
  const s = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'any' }) as JsonSchema;
  delete s.$schema;
  return s;
}

/** The message type a schema of the catalog carries (its literal `type`). */
function typesOf(union: z.ZodUnion<readonly z.ZodType[]>): MessageType[] {
  const byType = new Map<z.ZodType, MessageType>(Object.entries(catalog).map(([t, s]) => [s as z.ZodType, t as MessageType]));
  return union.options.map((option) => {
    const type = byType.get(option);
    if (!type) throw new Error('a message of a side union is missing from the catalog');
    return type;
  });
}

/** Component keys may not contain dots in every tool; `op.start` → `op_start`. */
const key = (type: string) => type.replace(/\./g, '_');

export interface AsyncApiOptions {
  /** Version of the software serving the document (goes into `info`). */
  serverVersion?: string;
}

export function asyncApiDocument(opts: AsyncApiOptions = {}): Record<string, unknown> {
  const types = Object.keys(catalog) as MessageType[];
  const messages: Record<string, unknown> = {};
  for (const type of types) {
    messages[key(type)] = {
      name: type,
      title: type,
      summary: messageSummaries[type],
      contentType: 'application/json',
      payload: jsonSchema(catalog[type]),
    };
  }
  messages.data_frame = {
    name: 'data frame',
    title: 'Binary data frame',
    summary: 'File bytes of one stream, in a binary WebSocket frame.',
    description:
      `Byte 0 is the frame kind (${FRAME_DATA} = data), bytes 1–4 the stream id (uint32 big-endian), ` +
      `bytes ${FRAME_HEADER_BYTES}… the payload. A stream's data arrives in order from the offset its ` +
      `stream.pull named; the sender never has more than the granted credit in flight ` +
      `(a stream starts with ${STREAM_WINDOW_BYTES} bytes; a puller may grant more, following the link's ` +
      `bandwidth-delay product, up to ${LINK_WINDOW_CAP_BYTES} bytes for all streams of a link). ` +
      `A frame is one WebSocket message, sent as one frame or as fragments; at most ${MAX_FRAME_BYTES} bytes.`,
    contentType: 'application/octet-stream',
    payload: { type: 'string', format: 'binary' },
  };

  const schemas: Record<string, unknown> = {};
  for (const [method, { params, result }] of Object.entries(rpcMethods)) {
    schemas[`rpc_${key(method)}_params`] = { title: `${method} params`, ...jsonSchema(params) };
    schemas[`rpc_${key(method)}_result`] = { title: `${method} result`, ...jsonSchema(result) };
  }

  const channelMessages: Record<string, unknown> = {};
  for (const name of Object.keys(messages)) channelMessages[name] = { $ref: `#/components/messages/${name}` };
  const refs = (names: string[]) => names.map((name) => ({ $ref: `#/channels/link/messages/${name}` }));

  const closeCodes = Object.entries(CloseCode)
    .map(([name, code]) => `${code} ${name}`)
    .join(', ');

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Model Manager agent link',
      version: `${PROTOCOL_VERSION}.0.0`,
      description:
        'One WebSocket per board, opened by the board agent to the control plane (boards sit behind NAT). ' +
        'Text frames carry the JSON messages below, each checked by schema on receipt; binary frames carry ' +
        `file data. Protocol version ${PROTOCOL_VERSION}. Heartbeats: each side pings every ` +
        `${HEARTBEAT_INTERVAL_MS / 1000} s and closes a link silent for ${HEARTBEAT_TIMEOUT_MS / 1000} s. ` +
        `Close codes: ${closeCodes}. Semantics: docs/agent-link.md.` +
        (opts.serverVersion ? ` Served by control plane ${opts.serverVersion}.` : ''),
    },
    defaultContentType: 'application/json',
    servers: {
      controlPlane: {
        host: 'control-plane.example',
        protocol: 'wss',
        description: 'The control plane (ws:// without TLS); the agent uses MM_SERVER_URL.',
        security: [{ $ref: '#/components/securitySchemes/boardToken' }],
      },
    },
    channels: {
      link: {
        address: AGENT_CONNECT_PATH,
        title: 'Agent link',
        description: 'WebSocket upgrade of GET with `Authorization: Bearer <board token>`; 401 problem without a valid one.',
        servers: [{ $ref: '#/servers/controlPlane' }],
        messages: channelMessages,
        bindings: { ws: { method: 'GET', bindingVersion: '0.1.0' } },
      },
    },
    operations: {
      receiveFromAgent: {
        action: 'receive',
        channel: { $ref: '#/channels/link' },
        title: 'Messages the agent sends',
        messages: refs([...typesOf(AgentMessage).map(key), 'data_frame']),
      },
      sendToAgent: {
        action: 'send',
        channel: { $ref: '#/channels/link' },
        title: 'Messages the server sends',
        messages: refs([...typesOf(ServerMessage).map(key), 'data_frame']),
      },
    },
    components: {
      messages,
      schemas,
      securitySchemes: {
        boardToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The board token shown once by POST /api/boards/.',
        },
      },
    },
  };
}
