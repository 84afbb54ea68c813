import { z } from 'zod';
import { AcceleratorFacts, DpuFingerprint } from './accelerator.ts';

/**
 * The message catalog of the agent↔server link: every JSON (text-frame) message either
 * side may send, each checked by schema on receipt (`parseMessage`). File bytes travel
 * in binary frames (frames.ts) on streams that these messages open and close.
 *
 * Direction is in each name's comment: A→S agent to server, S→A server to agent, A↔S both.
 */

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');
export const OperationId = z.number().int().positive();
export const StreamId = z.number().int().min(1).max(0xffffffff);
/** A relayed HTTP request, numbered by the server. */
export const RelayRequestId = z.number().int().positive();
/** A relayed event-stream subscription, numbered by the server. */
export const RelaySubscriptionId = z.number().int().positive();
export const ErrorInfo = z.object({ code: z.string().min(1), message: z.string() });
export type ErrorInfo = z.infer<typeof ErrorInfo>;

export const FileKind = z.enum(['parameter', 'bitstream', 'weights', 'input_video', 'output_video']);
export type FileKind = z.infer<typeof FileKind>;
export const InputFileKind = z.enum(['parameter', 'bitstream', 'weights', 'input_video']);
export type InputFileKind = z.infer<typeof InputFileKind>;

export const OperationStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
export type OperationStatus = z.infer<typeof OperationStatus>;
export const FinalStatus = z.enum(['succeeded', 'failed', 'cancelled']);

export const Progress = z.object({
  phase: z.string(),
  bytes_done: z.number().int().nonnegative(),
  bytes_total: z.number().int().nonnegative(),
});
export type Progress = z.infer<typeof Progress>;

/** A file the board must hold for an operation, by content. */
export const FileRef = z.object({
  kind: FileKind,
  filename: z.string().min(1),
  sha256: Sha256,
  size: z.number().int().nonnegative(),
});
export type FileRef = z.infer<typeof FileRef>;

/** A file the agent produced and keeps in its cache until the server has it. */
export const ProducedFile = z.object({
  filename: z.string().min(1),
  sha256: Sha256,
  size: z.number().int().nonnegative(),
  content_type: z.string(),
});
export type ProducedFile = z.infer<typeof ProducedFile>;

/** How an operation ended on the board; journaled by the agent until the server acknowledges it. */
export const OperationOutcome = z.object({
  op_id: OperationId,
  status: FinalStatus,
  finished_at: z.string(),
  result: z.record(z.string(), z.unknown()).nullable(),
  error: ErrorInfo.nullable(),
  output: ProducedFile.nullable(),
  /**
   * The run's per-frame results (`results.jsonl` in MM_OUTPUT_DIR, docs/runner.md), kept in
   * the agent's cache like the output video until the server has it; absent when the runner
   * left none (and from older agents).
   */
  results: ProducedFile.nullable().optional(),
});
export type OperationOutcome = z.infer<typeof OperationOutcome>;

/** One device script deployed on the board, as the agent supervises it (docs/device-scripts.md). */
export const ScriptState = z.object({
  script_id: z.string().min(1),
  name: z.string(),
  version: z.string(),
  port: z.number().int().min(1).max(65535),
  state: z.enum(['running', 'stopped', 'failed']),
  /** When it entered this state (ISO 8601 UTC). */
  since: z.string(),
  /** Restarts by the supervisor since the last deploy or start. */
  restarts: z.number().int().nonnegative(),
});
export type ScriptState = z.infer<typeof ScriptState>;

// ── link ────────────────────────────────────────────────────────────────────────────

/**
 * What the agent found on its board (docs/fleet-facts.md): the named fields where known,
 * plus any other small scalar it knows (`serial`, `som_model`, ...). Sizes in bytes.
 */
export const BoardFacts = z
  .object({
    arch: z.string().max(200).optional(),
    os: z.string().max(200).optional(),
    kernel: z.string().max(200).optional(),
    board_model: z.string().max(200).optional(),
    cpu_count: z.number().int().nonnegative().optional(),
    memory_bytes: z.number().nonnegative().optional(),
    disk_free_bytes: z.number().nonnegative().optional(),
    agent_version: z.string().max(200).optional(),
    node_version: z.string().max(200).optional(),
    active_pac: z.string().max(200).nullable().optional(),
  })
  .catchall(z.union([z.string().max(200), z.number(), z.boolean(), z.null()]))
  .refine((facts) => Object.keys(facts).length <= 64, 'at most 64 facts');
export type BoardFacts = z.infer<typeof BoardFacts>;

/** A→S, first message on every connection. */
export const Hello = z.object({
  type: z.literal('hello'),
  protocol_version: z.number().int(),
  agent_version: z.string(),
  hostname: z.string(),
  platform: z.string(),
  arch: z.string(),
  boot_id: z.string(),
  active_pac: z.string().nullable(),
  /** Content the agent's cache holds, complete and verified. */
  cached: z.array(Sha256),
  /** Operations still running on the board (the link dropped while they ran). */
  running: z.array(OperationId),
  /** Operations that ended while the server was unreachable, not yet acknowledged. */
  finished: z.array(OperationOutcome),
  /** Optional abilities of this agent (`LinkFeature`); absent from older agents. */
  features: z.array(z.string()).optional(),
  /** What the agent found on the board (feature `board.facts`); absent from older agents. */
  facts: BoardFacts.optional(),
  /** The device scripts deployed on the board and their states (`device.scripts` feature); absent from older agents. */
  scripts: z.array(ScriptState).optional(),
  /**
   * What the agent decodes, for the streams the server pushes it (`stream.push` feature; a
   * pushed stream has no `stream.pull` to carry this): as `stream.pull.compression`.
   */
  compression: z.object({ codecs: z.array(z.string()), decode_bps: z.number().positive().optional() }).optional(),
  /** The board's accelerator (docs/accelerators.md); absent from older agents and boards without the tools. */
  accelerator: AcceleratorFacts.optional(),
});

/**
 * A→S, the board's facts changed since the hello (a PAC was activated, disk filled, ...);
 * sent only to a server whose welcome names the `board.facts` feature. Replaces the facts.
 */
export const BoardFactsMessage = z.object({
  type: z.literal('board.facts'),
  facts: BoardFacts,
  /** The board's accelerator, as in hello (an older server ignores it). */
  accelerator: AcceleratorFacts.optional(),
});

/** S→A, the answer to hello. */
export const Welcome = z.object({
  type: z.literal('welcome'),
  board_id: z.string().uuid(),
  board_name: z.string(),
  server_version: z.string(),
  protocol_version: z.number().int(),
  /** Optional abilities of this server (`LinkFeature`); absent from older servers. */
  features: z.array(z.string()).optional(),
});

/** A↔S, the answer to a message that could not be understood or handled. Never answered. */
export const ErrorMessage = z.object({
  type: z.literal('error'),
  code: z.string(),
  message: z.string(),
  /** The `type` of the offending message, if it had one. */
  ref_type: z.string().optional(),
});

// ── operations ──────────────────────────────────────────────────────────────────────

/**
 * S→A, start (or, after a reconnect, resume) an operation. `transfer` makes the files
 * present under `$MM_AGENT_DIR/invocations/<id>/`; `execute` does that, then runs.
 */
export const OpStart = z.object({
  type: z.literal('op.start'),
  op_id: OperationId,
  kind: z.enum(['transfer', 'execute']),
  invocation: z.object({ id: z.number().int().positive(), name: z.string() }),
  files: z.array(FileRef),
  /** execute: how long the runner may take before it is stopped. */
  timeout_s: z.number().positive().optional(),
  /** execute: the board's labels when it started (the runner gets them as MM_BOARD_LABELS, JSON). */
  board_labels: z.record(z.string(), z.string()).optional(),
  /**
   * execute: the accelerated application the run needs (docs/accelerators.md). The agent loads
   * it before anything is transferred unless it is active already (`result.app_loaded`).
   */
  requires_app: z.string().min(1).max(200).optional(),
  /**
   * execute: the DPU fingerprints of the model's DPU subgraphs (its `.xmodel`). The agent
   * checks the board's DPU against them before anything is transferred, and fails the run
   * `dpu_fingerprint_mismatch` when none fits; without a DPU fingerprint it notes that the
   * check was skipped.
   */
  model_fingerprints: z.array(DpuFingerprint).max(64).optional(),
  /**
   * execute: run the runner `warmup` + `repeat` times in a row (docs/results.md); the result's
   * `runs` holds the metrics of the `repeat` counted runs and `metrics` their medians. An agent
   * that does not know the field runs once.
   */
  run: z.object({ repeat: z.number().int().min(1).max(100), warmup: z.number().int().min(0).max(20) }).optional(),
});

/** S→A, stop an operation; the agent ends the whole process group and reports `cancelled`. */
export const OpCancel = z.object({ type: z.literal('op.cancel'), op_id: OperationId });

/** A→S, bytes moved or phase changed. */
export const OpProgress = z.object({ type: z.literal('op.progress'), op_id: OperationId, progress: Progress });

/** A→S, output of the runner (or the agent's own notes), live. */
export const OpLog = z.object({
  type: z.literal('op.log'),
  op_id: OperationId,
  stream: z.enum(['stdout', 'stderr', 'agent']),
  data: z.string(),
  /**
   * Characters of this operation's log (all three streams, in order) before `data`. After a
   * reconnect the agent sends its last log text again with the same offsets; the server
   * keeps only what goes past what it already stored, so nothing in flight at a drop is lost
   * and nothing is doubled. Absent: stored as it comes.
   */
  offset: z.number().int().nonnegative().optional(),
});

/**
 * A→S, an execute's runner exited and left this output video (only to a server whose
 * welcome names the `op.output` feature). The server may pull it at once (source `output`)
 * while the agent hashes it into its cache; `op.result` then names its sha256, and the
 * server keeps what it pulled only if that hashes to the same sha256 and size. Otherwise
 * (or if this pull fails) it pulls `produced` by sha256 as without this message.
 */
export const OpOutput = z.object({
  type: z.literal('op.output'),
  op_id: OperationId,
  filename: z.string().min(1),
  size: z.number().int().nonnegative(),
  content_type: z.string(),
});

/** A→S, how the operation ended; repeated (hello.finished) until acknowledged. */
export const OpResult = z.object({ type: z.literal('op.result'), outcome: OperationOutcome });

/** S→A, the server has stored the outcome (and its output file); the agent drops it from its journal. */
export const OpResultAck = z.object({ type: z.literal('op.result.ack'), op_id: OperationId });

// ── streams (file data) ─────────────────────────────────────────────────────────────

/** What a stream carries; the receiver names it in `stream.pull`. */
export const StreamSource = z.discriminatedUnion('kind', [
  /** Content the server stores (A pulls from S). */
  z.object({ kind: z.literal('content'), sha256: Sha256 }),
  /** A file the agent produced and keeps in its cache (S pulls from A). */
  z.object({ kind: z.literal('produced'), sha256: Sha256 }),
  /** The output video an `op.output` announced, before the agent has hashed it (S pulls from A). */
  z.object({ kind: z.literal('output'), op_id: OperationId }),
  /** An upload the server holds for an RPC (e.g. a PAC archive); A pulls from S. */
  z.object({ kind: z.literal('upload'), upload_id: z.string().min(1) }),
  /** The body of a relayed HTTP request (`http.request` with `has_body`); A pulls from S, offset 0. */
  z.object({ kind: z.literal('http.request_body'), req_id: RelayRequestId }),
  /** The body of a relayed HTTP response (`http.response` with `has_body`); S pulls from A, offset 0. */
  z.object({ kind: z.literal('http.response_body'), req_id: RelayRequestId }),
]);
export type StreamSource = z.infer<typeof StreamSource>;

/**
 * A↔S, sent by the side that wants bytes: open stream `stream_id` (chosen by the puller,
 * unique among its open pulls) of `source` from `offset`, with `credit` bytes it may send
 * before waiting for `stream.credit`.
 */
export const StreamPull = z.object({
  type: z.literal('stream.pull'),
  stream_id: StreamId,
  source: StreamSource,
  offset: z.number().int().nonnegative(),
  credit: z.number().int().positive(),
  /**
   * The puller takes compressed data frames (only when both sides named the
   * `stream.compress` feature): the codecs it decodes (`br`), its decompression rate and the
   * link rate it measured before, in bytes per second, and the link's round trip it saw. The sender decides per frame;
   * credit always counts the bytes on the wire. An older sender ignores this and sends raw.
   */
  compression: z
    .object({
      codecs: z.array(z.string()),
      decode_bps: z.number().positive().optional(),
      link_bps: z.number().positive().optional(),
      rtt_ms: z.number().nonnegative().optional(),
    })
    .optional(),
});

/**
 * S→A, only when both sides named the `stream.push` feature: the server opens stream
 * `stream_id` (from its own id range) of `source` from `offset` itself, right behind the
 * `op.start` that needs the file, and sends up to `credit` bytes (at most PUSH_CREDIT_BYTES)
 * before the agent's first `stream.credit`. The agent adopts it as the pull it would have
 * sent, which saves that pull's round trip, or gives it up with `stream.abort` (code
 * `declined`: the file is cached, a partial file resumes elsewhere, nothing adopted it in
 * time). Everything else is a pull's: credit, frames, `stream.end`, `stream.abort`.
 */
export const StreamPush = z.object({
  type: z.literal('stream.push'),
  stream_id: StreamId,
  source: StreamSource,
  offset: z.number().int().nonnegative(),
  credit: z.number().int().positive(),
});

/** A↔S, the puller has written `bytes` more to disk: the sender may send that much more. */
export const StreamCredit = z.object({ type: z.literal('stream.credit'), stream_id: StreamId, bytes: z.number().int().positive() });

/** A↔S, from the sender: everything from the offset has been sent; `size` is the source's total size. */
export const StreamEnd = z.object({ type: z.literal('stream.end'), stream_id: StreamId, size: z.number().int().nonnegative() });

/** A↔S, either side gives up the stream (unknown source, read error, cancel). */
export const StreamAbort = z.object({ type: z.literal('stream.abort'), stream_id: StreamId, error: ErrorInfo });

// ── remote procedure calls (PAC commands, device scripts, …) ─────────────────────────

/** S→A, call `method` on the agent; methods and their params/results are in rpc.ts. */
export const RpcRequest = z.object({
  type: z.literal('rpc.request'),
  id: z.number().int().positive(),
  method: z.string().min(1),
  params: z.unknown(),
});

/** A→S, the answer to rpc.request with the same id. */
export const RpcResponse = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('rpc.response'), id: z.number().int().positive(), ok: z.literal(true), result: z.unknown() }),
  z.object({ type: z.literal('rpc.response'), id: z.number().int().positive(), ok: z.literal(false), error: ErrorInfo }),
]);

// ── device-script relay (proxy and event streams; docs/agent-link.md) ──────────────

/**
 * A header as it travels over the link: name and value, in order, repeated names kept
 * (Set-Cookie…). Names are HTTP tokens; values carry no CR, LF or NUL.
 */
export const HttpHeader = z.tuple([
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
  z.string().regex(/^[^\r\n\0]*$/, 'must not contain CR, LF or NUL'),
]);
export type HttpHeader = z.infer<typeof HttpHeader>;

/** A TCP port on the board's loopback; the server only ever sends a catalogue entry's port. */
export const ScriptPort = z.number().int().min(1).max(65535);

/** An origin-form request target: a path (and query) starting with `/`, printable ASCII, no spaces. */
export const ScriptPath = z.string().regex(/^\/[\x21-\x7e]*$/, 'must be a path starting with / (printable ASCII, no spaces)');

/**
 * S→A, make an HTTP request to `127.0.0.1:<port><path>` on the board and answer
 * `http.response` (or `http.error`). With `has_body` the agent pulls the request body
 * (`stream.pull`, source `http.request_body`) while the request is open.
 */
export const HttpRequest = z.object({
  type: z.literal('http.request'),
  req_id: RelayRequestId,
  port: ScriptPort,
  method: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP method'),
  path: ScriptPath,
  headers: z.array(HttpHeader),
  has_body: z.boolean(),
});

/** S→A, the server gives the request up (its client left, or it timed out): end it and its streams. */
export const HttpAbort = z.object({ type: z.literal('http.abort'), req_id: RelayRequestId });

/**
 * A→S, the script answered: status and headers as it sent them. With `has_body` the server
 * pulls the body (`stream.pull`, source `http.response_body`); the agent ends the request if
 * that pull does not come.
 */
export const HttpResponse = z.object({
  type: z.literal('http.response'),
  req_id: RelayRequestId,
  status: z.number().int().min(100).max(999),
  headers: z.array(HttpHeader),
  has_body: z.boolean(),
});

/**
 * A→S, the request failed before the script answered: `script_unreachable` (nothing listens
 * on the port), `script_failed` (the connection broke), `bad_request` (the agent refused it).
 */
export const HttpError = z.object({ type: z.literal('http.error'), req_id: RelayRequestId, error: ErrorInfo });

/**
 * S→A, follow the script's event stream at `127.0.0.1:<port><path>` (the `eventsource`
 * client, reconnecting on its own) and forward each event as `sse.event` until
 * `sse.unsubscribe` or the link closes. `last_event_id` is sent as `Last-Event-ID` on the
 * first request (a subscription made again after a reconnect).
 */
export const SseSubscribe = z.object({
  type: z.literal('sse.subscribe'),
  sub_id: RelaySubscriptionId,
  port: ScriptPort,
  path: ScriptPath,
  last_event_id: z.string().optional(),
});

/** S→A, stop following the stream of `sse.subscribe` `sub_id`. */
export const SseUnsubscribe = z.object({ type: z.literal('sse.unsubscribe'), sub_id: RelaySubscriptionId });

/** A→S, one event of a followed stream: its id (if it had one), its name (if not `message`) and data. */
export const SseEvent = z.object({
  type: z.literal('sse.event'),
  sub_id: RelaySubscriptionId,
  id: z.string().optional(),
  event: z.string().optional(),
  data: z.string(),
});

/** A→S, a followed stream opened (`open`) or dropped (`down`; the agent keeps retrying). */
export const SseStatus = z.object({
  type: z.literal('sse.status'),
  sub_id: RelaySubscriptionId,
  state: z.enum(['open', 'down']),
  message: z.string().optional(),
});

// ── board telemetry (only to a server whose welcome names `board.telemetry`) ─────────

/** Sensor names: what hwmon calls the device and the input (`ams.ps_temp`, `cpu_thermal.temp1`). */
export const SensorName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'must be 1-64 characters of a-z 0-9 _ . - starting alphanumeric');

/** One reading of the board. The server stamps it with the time it arrived (a board's clock may be off). */
export const TelemetryReading = z.object({
  /** Degrees Celsius by sensor; sensors that gave no valid reading are left out. */
  temperatures_c: z.record(SensorName, z.number().finite().min(-100).max(250)).refine((t) => Object.keys(t).length <= 32, 'at most 32 sensors'),
  /** Board power (the sum of its `ina260` monitors), where it has any. */
  power_w: z.number().finite().nonnegative().max(10_000).optional(),
  memory_used_bytes: z.number().int().nonnegative(),
  load_1m: z.number().finite().nonnegative(),
  /** Free space of the file system that holds MM_AGENT_DIR. */
  disk_free_bytes: z.number().int().nonnegative(),
});
export type TelemetryReading = z.infer<typeof TelemetryReading>;

/** A→S, the board's latest reading, every MM_TELEMETRY_INTERVAL_S. Never answered. */
export const BoardTelemetry = z.object({ type: z.literal('board.telemetry'), reading: TelemetryReading });

// ── device scripts on the board ─────────────────────────────────────────────────────


/**
 * A→S, the states of every deployed script, whole, whenever one changes (only to a server
 * that named the `device.scripts` feature in its welcome).
 */
export const ScriptsState = z.object({ type: z.literal('scripts.state'), scripts: z.array(ScriptState) });

// ── terminal (a login shell on the board; docs/terminal.md) ─────────────────────────

/** A terminal session on the link, numbered by the server. */
export const TerminalId = z.number().int().positive();
/** Columns and rows of a terminal. */
const TermCols = z.number().int().min(1).max(1000);
const TermRows = z.number().int().min(1).max(1000);
/** Terminal bytes in one `term.data`, base64: at most TERMINAL_CHUNK_BYTES before encoding. */
const TermBytes = z.string().max(Math.ceil((16 * 1024) / 3) * 4 + 4).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/**
 * S→A (only to an agent whose hello names `terminal`): start a login shell as MM_TERMINAL_USER
 * in a pseudo-terminal of `cols`×`rows`. The agent answers `term.data` (the shell's output) and
 * at the end `term.exit`; it may send up to `window` bytes of output before the server's
 * `term.ack`s (flow control: a `yes` flood waits on the board, not in the server's memory).
 */
export const TermOpen = z.object({
  type: z.literal('term.open'),
  term_id: TerminalId,
  cols: TermCols,
  rows: TermRows,
  window: z.number().int().positive().max(16 * 1024 * 1024),
});

/** A↔S, terminal bytes: keystrokes (S→A) or the shell's output (A→S), base64. */
export const TermData = z.object({ type: z.literal('term.data'), term_id: TerminalId, data: TermBytes });

/** A↔S, the receiver passed on `bytes` more of the other side's `term.data` (to the pty, or to the client): that much more may come. */
export const TermAck = z.object({ type: z.literal('term.ack'), term_id: TerminalId, bytes: z.number().int().positive() });

/** S→A, the client's terminal changed size. */
export const TermResize = z.object({ type: z.literal('term.resize'), term_id: TerminalId, cols: TermCols, rows: TermRows });

/** S→A, the client left (or the session was ended): the agent hangs up the shell (SIGHUP) and answers `term.exit`. */
export const TermClose = z.object({ type: z.literal('term.close'), term_id: TerminalId });

/**
 * A→S, the session ended: the shell's exit status (`code`; 128+N after signal N), or null with
 * `error` when it never started or was ended by the agent (`terminal_disabled`, `idle_timeout`,
 * `board_rebooting`, `pty_failed`, `agent_stopping`).
 */
export const TermExit = z.object({ type: z.literal('term.exit'), term_id: TerminalId, code: z.number().int().nullable(), error: ErrorInfo.optional() });

/** Every message of the catalog, by type. Add a message here and to its side's union below. */
export const catalog = {
  hello: Hello,
  'board.facts': BoardFactsMessage,
  welcome: Welcome,
  error: ErrorMessage,
  'op.start': OpStart,
  'op.cancel': OpCancel,
  'op.progress': OpProgress,
  'op.log': OpLog,
  'op.output': OpOutput,
  'op.result': OpResult,
  'op.result.ack': OpResultAck,
  'stream.pull': StreamPull,
  'stream.push': StreamPush,
  'stream.credit': StreamCredit,
  'stream.end': StreamEnd,
  'stream.abort': StreamAbort,
  'rpc.request': RpcRequest,
  'rpc.response': RpcResponse,
  'http.request': HttpRequest,
  'http.abort': HttpAbort,
  'http.response': HttpResponse,
  'http.error': HttpError,
  'sse.subscribe': SseSubscribe,
  'sse.unsubscribe': SseUnsubscribe,
  'sse.event': SseEvent,
  'sse.status': SseStatus,
  'board.telemetry': BoardTelemetry,
  'scripts.state': ScriptsState,
  'term.open': TermOpen,
  'term.data': TermData,
  'term.ack': TermAck,
  'term.resize': TermResize,
  'term.close': TermClose,
  'term.exit': TermExit,
} as const;

export type MessageType = keyof typeof catalog;
export type MessageOf<T extends MessageType> = z.infer<(typeof catalog)[T]>;

/**
 * Messages the agent sends (the server parses these), as one union discriminated on
 * `type`: a message of a known type is checked against that type's schema alone, so a
 * malformed one is named field by field.
 */
export const AgentMessage = z.discriminatedUnion('type', [
  Hello,
  BoardFactsMessage,
  ErrorMessage,
  OpProgress,
  OpLog,
  OpOutput,
  OpResult,
  StreamPull,
  StreamCredit,
  StreamEnd,
  StreamAbort,
  RpcResponse,
  HttpResponse,
  HttpError,
  SseEvent,
  SseStatus,
  BoardTelemetry,
  ScriptsState,
  TermData,
  TermAck,
  TermExit,
]);
export type AgentMessage = z.infer<typeof AgentMessage>;

/** Messages the server sends (the agent parses these); discriminated on `type` likewise. */
export const ServerMessage = z.discriminatedUnion('type', [
  Welcome,
  ErrorMessage,
  OpStart,
  OpCancel,
  OpResultAck,
  StreamPull,
  StreamPush,
  StreamCredit,
  StreamEnd,
  StreamAbort,
  RpcRequest,
  HttpRequest,
  HttpAbort,
  SseSubscribe,
  SseUnsubscribe,
  TermOpen,
  TermData,
  TermAck,
  TermResize,
  TermClose,
]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/** Any message of the catalog, whichever side sends it. */
export type LinkMessage = AgentMessage | ServerMessage;

export type ParseResult<T> = { ok: true; message: T } | { ok: false; code: 'malformed_message' | 'unknown_message'; error: string; type?: string };

/**
 * Parses one text frame with a side's union. Not JSON or a message of a type that does
 * not match its schema: `malformed_message`; a type the catalog lacks: `unknown_message`.
 * A catalog type the other side never sends is malformed too, and said so.
 */
function parseWith<T>(schema: z.ZodType<T>, sender: string, text: string): ParseResult<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, code: 'malformed_message', error: 'not JSON' };
  }
  const type = raw && typeof raw === 'object' ? (raw as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(catalog, type)) {
    return { ok: false, code: 'unknown_message', error: `unknown message type ${JSON.stringify(type)}`, ...(typeof type === 'string' ? { type } : {}) };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issues = parsed.error.issues;
  if (issues.some((i) => i.code === 'invalid_union' && i.path.length === 1 && i.path[0] === 'type')) {
    return { ok: false, code: 'malformed_message', error: `${type} is not a message ${sender} sends`, type };
  }
  const detail = issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; ');
  return { ok: false, code: 'malformed_message', error: `${type}: ${detail}`, type };
}

export const parseAgentMessage = (text: string) => parseWith(AgentMessage, 'the agent', text);
export const parseServerMessage = (text: string) => parseWith(ServerMessage, 'the server', text);
