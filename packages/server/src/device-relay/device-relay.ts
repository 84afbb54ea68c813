import type { AppContext } from '../app-context.ts';
import type { BoardLink, RelayMessage } from '../agent-link/board-link.ts';
import { ProxyRelay } from './proxy-relay.ts';
import { DEFAULT_STREAM_RELAY_OPTIONS, StreamRelay, type StreamRelayOptions } from './stream-relay.ts';

/** The relay's messages from agents (the catalog's A→S `http.*` and `sse.*`). */
const RELAY_MESSAGE_TYPES = ['http.response', 'http.error', 'sse.event', 'sse.status'] as const;

/**
 * The device-script relay of one server: the proxy (`…/proxy/<path>`) and the event-stream
 * relay (`…/stream/`), both carried by the boards' agent links.
 */
export class DeviceRelay {
  readonly proxy = new ProxyRelay();
  readonly streams: StreamRelay;

  constructor(ctx: Pick<AppContext, 'agents'>, streamOptions: StreamRelayOptions = DEFAULT_STREAM_RELAY_OPTIONS) {
    const hub = ctx.agents;
    this.streams = new StreamRelay(hub, streamOptions);
    hub.handleMessages(RELAY_MESSAGE_TYPES, (conn, m) => this.onMessage(conn, m));
    // The agent pulls a relayed request's body from us.
    hub.registerSource('http.request_body', async (conn, pull) => this.proxy.openRequestBody(conn, pull));
    // A board that says hello again gets its streams' subscriptions back.
    hub.on('online', (boardId) => this.streams.boardOnline(boardId));
  }

  onMessage(conn: BoardLink, m: RelayMessage): void {
    switch (m.type) {
      case 'http.response':
      case 'http.error':
        return this.proxy.onHead(conn, m);
      case 'sse.event':
        return this.streams.onEvent(conn, m);
      case 'sse.status':
        return this.streams.onStatus(conn, m);
    }
  }

  close(): void {
    this.streams.close();
    this.proxy.close();
  }
}

/**
 * Creates the relay and plugs it into the agent hub. Its shutdown goes first, so event
 * streams end before the server waits for its connections to close.
 */
export function installDeviceRelay(ctx: AppContext): DeviceRelay {
  const relay = new DeviceRelay(ctx);
  ctx.shutdownHooks.unshift(async () => relay.close());
  return relay;
}
