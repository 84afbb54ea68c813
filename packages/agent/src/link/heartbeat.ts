import type WebSocket from 'ws';

/**
 * Pings the server every `intervalMs` and terminates the socket when nothing at all (a
 * message, a frame, a ping or a pong) arrived for `timeoutMs`: a half-open TCP link would
 * otherwise look alive for hours. Returns a function that stops it.
 */
export function startHeartbeat(ws: WebSocket, opts: { intervalMs: number; timeoutMs: number; onTimeout: (silentMs: number) => void }): () => void {
  let lastHeard = Date.now();
  const heard = () => {
    lastHeard = Date.now();
  };
  ws.on('message', heard);
  ws.on('ping', heard);
  ws.on('pong', heard);
  const ping = setInterval(() => {
    if (ws.readyState === ws.OPEN) ws.ping();
  }, opts.intervalMs);
  // Checked more often than pinged so a short timeout is noticed on time.
  const check = setInterval(
    () => {
      const silent = Date.now() - lastHeard;
      if (silent >= opts.timeoutMs) {
        stop();
        opts.onTimeout(silent);
        ws.terminate();
      }
    },
    Math.max(5, Math.min(opts.intervalMs, opts.timeoutMs / 4)),
  );
  const stop = () => {
    clearInterval(ping);
    clearInterval(check);
    ws.off('message', heard);
    ws.off('ping', heard);
    ws.off('pong', heard);
  };
  return stop;
}
