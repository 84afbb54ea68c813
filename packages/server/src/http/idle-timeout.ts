import type http from 'node:http';

/**
 * Node server options: no total time limit per request, but a deadline for its headers.
 * Node derives `headersTimeout` from `requestTimeout` (min of 60 s and it), so turning the
 * request limit off also let a client trickle header lines forever. Node checks the
 * deadline every `connectionsCheckingInterval` (30 s by default): a quarter of the deadline
 * keeps a cut within 25 % of it.
 */
export function headerDeadlineOptions(headersTimeoutMs: number): http.ServerOptions {
  return {
    requestTimeout: 0,
    headersTimeout: headersTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeoutMs / 4))),
  };
}

/**
 * Replaces Node's total request time limit with an idle limit while a request body is
 * being received. Node's default `requestTimeout` (300 s) answered 408 to any upload
 * slower than five minutes, however steadily it moved (an 8 GiB file needs 28 MB/s for
 * that). Here a body that keeps moving may take as long as it takes; one that sends
 * nothing for `idleMs` has its socket closed, and its handler cleans up as for any
 * aborted upload.
 *
 * Only the request body is timed: once the whole request has arrived (or for a request
 * without a body) the socket gets no timeout from here, as the handler may rightly take long (a
 * sync wait, an event stream). Headers stay under Node's `headersTimeout` (headerDeadlineOptions); idle
 * keep-alive sockets under `keepAliveTimeout`.
 */
export function applyIdleTimeouts(server: http.Server, idleMs: number): void {
  server.requestTimeout = 0;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    if (req.complete || !hasBody(req)) return;
    // Only while this response is the socket's: Node then asks it first. Without a listener
    // (a keep-alive socket between requests) Node destroys a timed-out socket by itself,
    // which is what its keepAliveTimeout relies on: no server-wide 'timeout' listener here.
    const onTimeout = () => {
      if (req.complete) socket.setTimeout(0); // the body is all in, the handler is just slow to read it
      else socket.destroy(); // the body stalled
    };
    res.on('timeout', onTimeout);
    // Not cleared when the body ends: that would race with Node arming the keep-alive
    // timeout on the same socket once the response is done. A timer that fires after the
    // body ended is simply disarmed by onTimeout.
    socket.setTimeout(idleMs);
  });
}

function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
