import { describe, expect, it } from 'vitest';
import { EventStreamParser, followEventStream, readEventStream, type SseEvent, type StreamFailure } from '../src/event-stream.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);

/** Every event of one body fed in the chunks given, and the parser's state after it. */
function parse(chunks: Uint8Array[]): { events: SseEvent[]; lastEventId: string; retryMs: number | undefined } {
  const parser = new EventStreamParser();
  const events = chunks.flatMap((c) => parser.push(c));
  parser.endOfStream();
  return { events, lastEventId: parser.lastEventId, retryMs: parser.retryMs };
}

const ev = (data: string, more: Partial<SseEvent> = {}): SseEvent => ({ event: 'message', data, id: undefined, lastEventId: '', ...more });

/** Bodies and what a conforming parser makes of them (several from the HTML standard's examples). */
const CASES: Array<{ name: string; body: string; events: SseEvent[]; lastEventId?: string; retryMs?: number }> = [
  { name: 'data lines joined with LF', body: 'data: YHOO\ndata: +2\ndata: 10\n\n', events: [ev('YHOO\n+2\n10')] },
  {
    name: 'comments, id, a bare `id` clearing it, one leading space dropped',
    body: ': test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n',
    events: [ev('first event', { id: '1', lastEventId: '1' }), ev('second event', { id: '' }), ev(' third event')],
  },
  {
    name: 'a field without colon has the empty value; an unfinished event is dropped',
    body: 'data\n\ndata\ndata\n\ndata:\n',
    events: [ev(''), ev('\n')],
  },
  { name: 'the space after the colon is optional', body: 'data:test\n\ndata: test\n\n', events: [ev('test'), ev('test')] },
  {
    name: 'CR, LF and CRLF line ends, mixed',
    body: 'data: a\r\rdata: b\r\n\r\ndata: c\n\nevent: x\r\ndata: d\r\r\n',
    events: [ev('a'), ev('b'), ev('c'), ev('d', { event: 'x' })],
  },
  { name: 'a CR then LF ends one line, not two', body: 'data: a\r\ndata: b\r\n\r\n', events: [ev('a\nb')] },
  { name: 'one leading byte order mark is dropped', body: '\uFEFFdata: x\n\n', events: [ev('x')] },
  { name: 'a second byte order mark is part of the field name', body: '\uFEFF\uFEFFdata: x\n\ndata: y\n\n', events: [ev('y')] },
  { name: 'a byte order mark later on is text', body: 'data: \uFEFFx\n\n', events: [ev('\uFEFFx')] },
  {
    name: 'the event type applies to one event',
    body: 'event: log\ndata: 1\n\ndata: 2\n\nevent: end\n\ndata: 3\n\n',
    events: [ev('1', { event: 'log' }), ev('2'), ev('3')],
  },
  { name: 'an event with no data is not dispatched, yet its id counts', body: 'id: 7\n\n', events: [], lastEventId: '7' },
  {
    name: 'the id carries over to later events; an empty id clears it',
    body: 'id: 5\ndata: a\n\ndata: b\n\nid:\ndata: c\n\ndata: d\n\n',
    events: [ev('a', { id: '5', lastEventId: '5' }), ev('b', { lastEventId: '5' }), ev('c', { id: '' }), ev('d')],
  },
  { name: 'an id with NULL in it is ignored', body: 'id: 3\n\nid: 4\0x\ndata: a\n\n', events: [ev('a', { lastEventId: '3' })], lastEventId: '3' },
  { name: 'retry: digits only', body: 'retry: 2500\n\nretry: 1x\nretry: -3\nretry:  7\nretry:\n\n', events: [], retryMs: 2500 },
  { name: 'unknown fields and colons in the value', body: 'foo: bar\nData: no\ndata: a:b: c\n\n', events: [ev('a:b: c')] },
  { name: 'multi-byte UTF-8', body: 'data: héllo ✓ 🚀 日本\n\n', events: [ev('héllo ✓ 🚀 日本')] },
  { name: 'an id set by an unfinished event does not count', body: 'data: a\n\nid: 9\ndata: b\n', events: [ev('a')], lastEventId: '' },
  { name: 'empty lines with no event between them', body: '\n\n\r\n\r\rdata: z\n\n', events: [ev('z')] },
];

describe('the event-stream parser (WHATWG HTML, event stream interpretation)', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const got = parse([utf8(c.body)]);
      expect(got.events).toEqual(c.events);
      expect(got.lastEventId).toBe(c.lastEventId ?? c.events.at(-1)?.lastEventId ?? '');
      expect(got.retryMs).toBe(c.retryMs);
    });
  }

  it('gives the same events however the bytes are split: at any one byte, at any two, and byte by byte', () => {
    // Compared as JSON and collected, so the ~50,000 parses stay well under a second.
    const differ: string[] = [];
    let parses = 0;
    for (const c of CASES) {
      const bytes = utf8(c.body);
      const whole = JSON.stringify(parse([bytes]));
      const check = (chunks: Uint8Array[], how: string) => {
        parses++;
        if (JSON.stringify(parse(chunks)) !== whole) differ.push(`${c.name}: ${how}`);
      };
      for (let i = 0; i <= bytes.length; i++) {
        check([bytes.subarray(0, i), bytes.subarray(i)], `split at ${i}`);
        for (let j = i; j <= bytes.length; j++) check([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)], `split at ${i} and ${j}`);
      }
      check([...bytes].map((b) => Uint8Array.of(b)), 'byte by byte');
    }
    expect(differ).toEqual([]);
    expect(parses).toBeGreaterThan(10_000);
  });

  it('keeps the last event id and retry across connections; each body may start with its own byte order mark', () => {
    const parser = new EventStreamParser();
    expect(parser.push(utf8('\uFEFFretry: 300\nid: 1\ndata: a\n\nid: 2\ndata: unfinish'))).toEqual([ev('a', { id: '1', lastEventId: '1' })]);
    parser.endOfStream();
    expect(parser.lastEventId).toBe('1');
    // The next body: a fresh line buffer, the BOM dropped again, and an event without id keeps id 1.
    expect(parser.push(utf8('\uFEFFdata: b\n\n'))).toEqual([ev('b', { lastEventId: '1' })]);
    expect(parser.retryMs).toBe(300);
  });

  it('a CR at the end of one body does not eat an LF at the start of the next', () => {
    const parser = new EventStreamParser();
    expect(parser.push(utf8('data: a\r'))).toEqual([]);
    parser.endOfStream();
    expect(parser.push(utf8('\ndata: b\n\n'))).toEqual([ev('b')]);
  });

  it('starts from a last event id it is given', () => {
    const parser = new EventStreamParser('41');
    expect(parser.push(utf8('data: x\n\n'))).toEqual([ev('x', { lastEventId: '41' })]);
  });

  it('makes invalid UTF-8 U+FFFD rather than failing', () => {
    expect(parse([Uint8Array.of(...utf8('data: '), 0xff, 0xc3, ...utf8('\n\n'))]).events).toEqual([ev('\uFFFD\uFFFD')]);
  });
});

/** A body that sends the chunks, then ends (or fails with `error`). */
function body(chunks: string[], error?: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(utf8(chunks[i++]!));
      else if (error) controller.error(error);
      else controller.close();
    },
  });
}

describe('reading a body', () => {
  it('yields events as the chunks arrive and cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(utf8('data: 1\n\nda'));
        controller.enqueue(utf8('ta: 2\n\ndata: 3\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const seen: string[] = [];
    for await (const e of readEventStream(stream)) {
      seen.push(e.data);
      if (e.data === '2') break;
    }
    expect(seen).toEqual(['1', '2']);
    expect(cancelled).toBe(true);
  });
});

describe('following a stream', () => {
  it('reconnects after a drop with Last-Event-ID, waiting what retryDelay says, until onEvent is done', async () => {
    const asked: string[] = [];
    const failures: StreamFailure[] = [];
    const waits: number[] = [];
    const bodies = [
      () => body(['retry: 1500\nid: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: cut']),
      () => {
        throw new Error('connection refused');
      },
      () => body(['data: c\n\n'], new Error('reset by peer')),
      () => body(['id: 4\ndata: d\n\nevent: end\ndata: last\n\ndata: never\n\n']),
    ];
    const seen: string[] = [];
    const result = await followEventStream<string>({
      async open(lastEventId) {
        asked.push(lastEventId);
        return bodies[asked.length - 1]!();
      },
      onEvent(e) {
        seen.push(`${e.event}:${e.data}@${e.lastEventId}`);
        if (e.event === 'end') return { done: e.data };
      },
      retryDelay(f) {
        failures.push(f);
        return f.serverRetryMs ?? 1000;
      },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(result).toBe('last');
    expect(asked).toEqual(['', '2', '2', '2']);
    expect(seen).toEqual(['message:a@1', 'message:b@2', 'message:c@2', 'message:d@4', 'end:last@4']);
    expect(failures.map((f) => ({ error: f.error instanceof Error ? f.error.message : f.error, opened: f.opened, failures: f.failures }))).toEqual([
      { error: undefined, opened: true, failures: 1 },
      { error: 'connection refused', opened: false, failures: 2 },
      // An event came in between: the count starts again.
      { error: 'reset by peer', opened: true, failures: 1 },
    ]);
    expect(waits).toEqual([1500, 1500, 1500]);
  });

  it('ends with what open answers when there is nothing to stream, and tells when the stream is up or down', async () => {
    const connection: boolean[] = [];
    let opens = 0;
    const result = await followEventStream<number>({
      async open() {
        if (++opens === 1) return body([]);
        return { done: 42 };
      },
      onEvent() {},
      onConnection: (up) => connection.push(up),
      retryDelay: () => 0,
      sleep: async () => {},
    });
    expect(result).toBe(42);
    expect(connection).toEqual([true, false]);
  });

  it('gives up with what retryDelay throws, and an abort rejects with its reason', async () => {
    await expect(
      followEventStream({
        open: () => Promise.reject(new Error('forbidden')),
        onEvent() {},
        retryDelay: (f) => {
          throw f.error;
        },
      }),
    ).rejects.toThrow('forbidden');

    const abort = new AbortController();
    const following = followEventStream({
      open: async () => body(['data: x\n\n']),
      onEvent: () => abort.abort(new Error('stopped')),
      retryDelay: () => 60_000,
      signal: abort.signal,
    });
    await expect(following).rejects.toThrow('stopped');
  });
});
