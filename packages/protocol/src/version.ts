/**
 * Version of the agent↔server link. A change that an older peer cannot understand
 * (a removed or retyped field, a new required message) bumps it; additions that old
 * peers can ignore do not. The server refuses a hello with another major version.
 */
export const PROTOCOL_VERSION = 1;

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
} as const;
