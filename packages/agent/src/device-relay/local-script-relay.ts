import type { Clock, MessageOf, StreamSource } from '@mm/protocol';
import type { ControlPlaneLink } from '../link/control-plane-link.ts';
import type { Logger } from '../logger.ts';
import { HttpRelay, type ScriptPortPolicy } from './http-relay.ts';
import { SseRelay } from './sse-relay.ts';

/** The server's relay messages the agent handles. */
export type RelayRequestMessage = MessageOf<'http.request'> | MessageOf<'http.abort'> | MessageOf<'sse.subscribe'> | MessageOf<'sse.unsubscribe'>;

/**
 * The board's side of the device-script relay (docs/api.md, "Device-script relay"): proxied HTTP requests to
 * a script's port on 127.0.0.1 and followed event streams. Everything it opens ends with
 * the link it came on.
 */
export class LocalScriptRelay {
  private readonly http: HttpRelay;
  private readonly sse: SseRelay;
  private readonly ports: Set<number>;

  /** `allowedPorts`: the only loopback ports it reaches (the board's setting, whatever the catalogue says). */
  constructor(log: Logger, allowedPorts: Iterable<number>, clock?: Clock) {
    this.ports = new Set(allowedPorts);
    const ports: ScriptPortPolicy = this.ports;
    this.http = new HttpRelay(log, ports, clock);
    this.sse = new SseRelay(log, ports, clock);
  }

  /** A port the board itself deployed a device script on (docs/device-scripts.md): reachable from now on. */
  allowPort(port: number): void {
    this.ports.add(port);
  }

  /** The `stream.pull` sources this relay serves (the rest are the operations'). */
  static serves(source: StreamSource): boolean {
    return source.kind === 'http.response_body';
  }

  handle(message: RelayRequestMessage, connection: ControlPlaneLink): void {
    switch (message.type) {
      case 'http.request':
        return this.http.request(message, connection);
      case 'http.abort':
        return this.http.abort(message, connection);
      case 'sse.subscribe':
        return this.sse.subscribe(message, connection);
      case 'sse.unsubscribe':
        return this.sse.unsubscribe(message, connection);
    }
  }

  serveBody(pull: MessageOf<'stream.pull'>, connection: ControlPlaneLink): Promise<void> {
    return this.http.serveResponseBody(pull, connection);
  }

  close(): void {
    this.http.closeAll();
    this.sse.closeAll();
  }
}
