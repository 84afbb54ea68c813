/**
 * `followOperation` (mm run, mm ops logs -f) over a stream that breaks: a stand-in server
 * cuts the first connection in the middle of an event, then fails once (503), then goes on
 * from the Last-Event-ID it is sent. Every log line arrives once, in order.
 */
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { standInServer, type StandIn } from '../../../test/support/stand-in-server.ts';
import { Api } from '../src/api.ts';
import { followOperation } from '../src/follow.ts';

const log = (id: number, text: string, eol = '\n') => `id: ${id}${eol}event: log${eol}data: ${JSON.stringify({ stream: 'stdout', data: text })}${eol}${eol}`;
const FINAL = { id: 7, kind: 'execute', status: 'succeeded' };

describe('following an operation across a broken stream', () => {
  let server: StandIn;
  const asked: Array<string | undefined> = [];

  beforeAll(async () => {
    server = await standInServer((req: http.IncomingMessage, res: http.ServerResponse) => {
      expect(req.url).toBe('/api/operations/7/events/');
      asked.push(req.headers['last-event-id'] as string | undefined);
      if (asked.length === 1) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        // A comment, a retry the CLI does not need, two whole events, then half of one: cut.
        res.write(`: hello\nretry: 10\nid: 1\nevent: status\ndata: {"status":"running"}\n\n${log(2, 'line 1\n')}${log(3, 'line 2\n')}`);
        res.write('id: 4\nevent: log\ndata: {"stream":"stdout","da', () => res.destroy());
      } else if (asked.length === 2) {
        res.writeHead(503, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'about:blank', title: 'Restarting', status: 503, code: 'starting', detail: 'starting' }));
      } else {
        // CR line ends this time (the standard allows CR, LF and CRLF).
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`${log(4, 'line 3\n', '\r')}id: 5\revent: end\rdata: ${JSON.stringify(FINAL)}\r\r`);
      }
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('resumes after the last whole event, through a failed attempt, and ends with the operation', async () => {
    const lines: string[] = [];
    const statuses: unknown[] = [];
    const op = await followOperation(new Api(server.url, 'a-token'), 7, { log: (_s, d) => lines.push(d), status: (s) => statuses.push(s) }, new AbortController().signal);
    expect(op).toEqual(FINAL);
    expect(lines).toEqual(['line 1\n', 'line 2\n', 'line 3\n']);
    expect(statuses).toEqual([{ status: 'running' }]);
    expect(asked).toEqual([undefined, '3', '3']);
  });
});
