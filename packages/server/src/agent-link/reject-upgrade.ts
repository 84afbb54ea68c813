import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { ProblemBody } from '../http/problem.ts';

/**
 * Answers a WebSocket upgrade request with a full problem+json response, body included.
 * (@hono/node-server turns a non-101 answer to an upgrade into a bodyless response, so the
 * agent connect route writes its refusal on the socket itself, then closes it.)
 */
export async function rejectUpgrade(incoming: IncomingMessage, problem: ProblemBody, headers: Record<string, string> = {}): Promise<void> {
  const socket = incoming.socket;
  if (socket.destroyed) return;
  const body = Buffer.from(JSON.stringify(problem));
  const lines = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${body.length}`,
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  await new Promise<void>((resolve) => socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]), () => resolve()));
  socket.destroy();
}
