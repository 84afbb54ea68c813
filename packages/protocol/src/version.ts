/**
 * Version of the agent↔server link: its major version. A change that an older peer cannot
 * understand (a removed or retyped field, a new required message) bumps it; additions that
 * old peers can ignore do not. Each side refuses a peer of another major version (the
 * server answers such a hello with `error` `protocol_mismatch` and closes with 4001).
 */
export const PROTOCOL_VERSION = 1;

/**
 * Optional abilities a server announces in `welcome.features`, additions an older peer
 * simply does not use (so the major version stays). An agent uses one only when the
 * server that welcomed this connection named it.
 */
export const LinkFeature = {
  /**
   * The server takes `op.output`: the agent announces an execute's output video as soon as
   * the runner has exited, the server pulls it (source `output`) while the agent is still
   * hashing it, and keeps the bytes once `op.result` names the same sha256 and size.
   */
  earlyOutput: 'op.output',
  /**
   * Named by both sides (`hello.features`, `welcome.features`): a puller offers
   * `stream.pull.compression` and the sender may answer with compressed data frames
   * (frames.ts kind 2) when that moves the file faster (docs/compression.md).
   */
  streamCompression: 'stream.compress',
  /**
   * Named by both sides: the server pushes an operation's input files (`stream.push`) right
   * behind its `op.start` instead of waiting for the agent's pulls, unless it knows the board
   * holds them; the agent adopts or declines each (docs/agent-link.md, "Pushed streams").
   */
  streamPush: 'stream.push',
  /**
   * The server takes `board.telemetry`: the agent sends a sample of the board's
   * temperatures, power, memory, load and free disk every MM_TELEMETRY_INTERVAL_S. An agent
   * sends none to a server whose welcome does not name it; an older agent never sends any.
   */
  boardTelemetry: 'board.telemetry',
  /**
   * Named by both sides: the agent's hello carries `facts` (an older agent's does not; the
   * server derives what it can from the hello's own fields), and the agent sends
   * `board.facts` when they change, only to a server whose welcome names it.
   */
  boardFacts: 'board.facts',
  /**
   * Named by both sides: the agent deploys and supervises device scripts (`script.*` RPC
   * methods), reports their states in `hello.scripts` and, to a server that named it too,
   * in `scripts.state` whenever one changes.
   */
  deviceScripts: 'device.scripts',
  /**
   * Named by the agent when it gives terminals (`term.*`, docs/terminal.md): its MM_TERMINAL is
   * on and it has a user to run the shell as. A board whose hello lacks it refuses terminals.
   */
  terminal: 'terminal',
} as const;

/** The major version a peer announced (`hello.protocol_version`, `welcome.protocol_version`). */
export function protocolMajor(version: number): number {
  return Math.trunc(version);
}

/** Whether a peer announcing `theirs` speaks our protocol: the same major version. */
export function isCompatibleProtocol(theirs: number, ours: number = PROTOCOL_VERSION): boolean {
  return Number.isFinite(theirs) && protocolMajor(theirs) === protocolMajor(ours);
}

/** Where the agent connects (HTTP upgrade to WebSocket, `Authorization: Bearer <board token>`). */
export const AGENT_CONNECT_PATH = '/api/agent/connect/';

/** WebSocket close codes of the link (4000–4999 are the application's). */
export const CloseCode = {
  /** Normal shutdown of either side. */
  normal: 1000,
  /** The other side stopped answering heartbeats. */
  heartbeatTimeout: 4000,
  /** The peer speaks another protocol version. */
  protocolMismatch: 4001,
  /** A newer connection of the same board replaced this one. */
  replaced: 4002,
  /** The board was deleted or its token revoked. */
  revoked: 4003,
  /** The board goes down for a reboot. */
  rebooting: 4004,
  /** The peer kept sending messages this side could not take (link-guard.ts). */
  invalidMessages: 4005,
  /** The peer stopped reading while this side had more than the send-queue cap for it (link-guard.ts). */
  notReading: 4006,
} as const;
