/** The log on a terminal (issue 32, item 17): readable lines, and routine reads at debug. */
import { describe, expect, it } from 'vitest';
import { isRoutineRead } from '../src/http/request-log.ts';
import { formatLogEntry } from '../src/log-pretty.ts';

describe('the readable log format', () => {
  it('a request is one short line: time, level, method, path, status, duration', () => {
    const line = formatLogEntry({ level: 30, time: '2026-11-26T10:11:12.345Z', service: 'mm-server', req_id: 'r1', method: 'POST', path: '/api/boards/', status: 201, duration_ms: 3.1, msg: 'request' });
    expect(line).toBe('10:11:12.345 INFO  POST /api/boards/ 201 3.1 ms');
  });

  it('other fields follow as key=value; an error brings its stack; colours only when asked', () => {
    const line = formatLogEntry({ level: 40, time: '2026-11-26T10:11:12.345Z', component: 'agent-link', msg: 'board went away', board_id: 'b-1', name: 'lab board', err: { message: 'boom', stack: 'Error: boom\n    at x (y.ts:1:1)' } });
    expect(line).toBe('10:11:12.345 WARN  [agent-link] board went away  board_id=b-1 name="lab board"\n    Error: boom\n        at x (y.ts:1:1)');
    expect(formatLogEntry({ level: 50, time: '2026-11-26T10:11:12.345Z', msg: 'x' }, true)).toContain('\u001b[31mERROR\u001b[0m');
  });

  it('successful reads are routine (debug); changes and failures are not', () => {
    expect(isRoutineRead('GET', 200)).toBe(true);
    expect(isRoutineRead('GET', 304)).toBe(true);
    expect(isRoutineRead('HEAD', 206)).toBe(true);
    expect(isRoutineRead('GET', 401)).toBe(false);
    expect(isRoutineRead('GET', 503)).toBe(false);
    expect(isRoutineRead('POST', 200)).toBe(false);
    expect(isRoutineRead('DELETE', 204)).toBe(false);
  });
});
