import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * Replaces Node's total request time limit with an idle limit while a request body is
 * being received. Node's default `requestTimeout` (300 s) answered 408 to any upload
 * slower than five minutes, however steadily it moved (an 8 GiB file needs 28 MB/s for
 * that). Here a body that keeps moving may take as long as it takes; one that sends
 * nothing for `idleMs` has its socket closed, and its handler cleans up as for any
 * aborted upload.
 *
 * Only the request body is timed: once the whole request has arrived (or for a request
 * without a body) the socket has no timeout, as the handler may rightly take long (a
 * sync wait, an event stream). Headers stay under Node's `headersTimeout`; idle
 * keep-alive sockets under `keepAliveTimeout`.
 */
export function applyIdleTimeouts(server: http.Server, idleMs: number): void {
  server.requestTimeout = 0;
  const current = new WeakMap<Socket, http.IncomingMessage>();
  server.on('request', (req: http.IncomingMessage) => {
    const socket = req.socket;
    current.set(socket, req);
    if (req.complete || !hasBody(req)) {
      socket.setTimeout(0);
      return;
    }
    socket.setTimeout(idleMs);
    req.once('end', () => socket.setTimeout(0));
  });
  // A listener here means Node leaves the decision to us instead of destroying the socket.
  server.on('timeout', (socket: Socket) => {
    const req = current.get(socket);
    if (req && !req.complete) {
      socket.destroy();
      return;
    }
    // The body is all in (the handler just has not read it yet): nothing is stalled.
    socket.setTimeout(0);
  });
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
