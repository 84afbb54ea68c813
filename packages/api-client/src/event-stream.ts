/**
 * Server-sent events on the client side, shared by the dashboard and the `mm` client: the
 * parser of a `text/event-stream` body (the WHATWG HTML standard's "event stream
 * interpretation") and a follower that reconnects after a drop with `Last-Event-ID`.
 * Both read the body with `fetch` rather than `EventSource`, so a bearer token can be sent
 * and the caller decides what a failed connection means.
 */

/** One dispatched event. */
export interface SseEvent {
  /** The event type (`event:`); `message` when the event named none. */
  event: string;
  /** The event's `data:` lines joined with `\n`. */
  data: string;
  /** The `id:` this event carried itself (`''` when it cleared the id), undefined when it carried none. */
  id: string | undefined;
  /**
   * The stream's last event id at this event: the latest `id:` so far, carried over from
   * earlier events and connections. A reconnect sends it as `Last-Event-ID` (when not empty).
   */
  lastEventId: string;
}

const LF = 0x0a;
const CR = 0x0d;
const LINE_BREAK = /[\r\n]/g;
const DIGITS = /^[0-9]+$/;

/**
 * An incremental event-stream parser. Bytes go in as they arrive, in chunks split anywhere
 * (inside a line, a CRLF or a UTF-8 sequence); `push` answers the events the chunk completed.
 * Lines end with CR, LF or CRLF; one leading byte order mark is dropped; a line starting with
 * `:` is a comment; a field without a colon has the empty value; `id:` with a NULL in it is
 * ignored, an empty `id:` clears the id; `retry:` with anything but digits is ignored. An event
 * is dispatched at a blank line, and only when it had data.
 *
 * One parser follows a stream across its reconnections (`endOfStream` between them) and keeps
 * what outlives a connection: the last event id and the server's `retry:`. Like browsers do,
 * a new connection starts with the last event id it had, so an event without `id:` after a
 * reconnect still resumes from the last one that had an id.
 */
export class EventStreamParser {
  private decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Text of the line being received (no line break in it yet). */
  private pending = '';
  private bomChecked = false;
  /** The last line ended with CR: an LF right after it belongs to it. */
  private afterCr = false;
  private dataBuffer = '';
  private eventType = '';
  private ownId: string | undefined;
  private idBuffer: string;
  private last: string;
  private retry: number | undefined;

  constructor(lastEventId = '') {
    this.idBuffer = lastEventId;
    this.last = lastEventId;
  }

  /** What a reconnect sends as `Last-Event-ID` (when not empty): the id as of the last dispatched event. */
  get lastEventId(): string {
    return this.last;
  }

  /** The reconnection time the server asked for with `retry:`, if it did. */
  get retryMs(): number | undefined {
    return this.retry;
  }

  /** Feeds a chunk of the body; answers the events it completed, in order. */
  push(chunk: Uint8Array): SseEvent[] {
    return this.pushText(this.decoder.decode(chunk, { stream: true }));
  }

  /** Feeds decoded text (for a body read as text already). */
  pushText(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    if (text === '') return events;
    if (!this.bomChecked) {
      this.bomChecked = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let pos = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF) pos = 1;
    }
    for (;;) {
      LINE_BREAK.lastIndex = pos;
      const found = LINE_BREAK.exec(text);
      if (!found) break;
      const end = found.index;
      const line = this.pending === '' ? text.slice(pos, end) : this.pending + text.slice(pos, end);
      this.pending = '';
      pos = end + 1;
      if (text.charCodeAt(end) === CR) {
        if (pos < text.length) {
          if (text.charCodeAt(pos) === LF) pos++;
        } else this.afterCr = true;
      }
      this.line(line, events);
    }
    if (pos < text.length) this.pending += text.slice(pos);
    return events;
  }

  /**
   * The body ended (or broke): an unfinished line or event is dropped, as the standard says.
   * The parser is ready for the next connection's body and keeps the last event id and retry.
   */
  endOfStream(): void {
    this.decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    this.pending = '';
    this.bomChecked = false;
    this.afterCr = false;
    this.dataBuffer = '';
    this.eventType = '';
    this.ownId = undefined;
    this.idBuffer = this.last;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') return this.dispatch(events);
    if (line.charCodeAt(0) === 0x3a) return; // ':' a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataBuffer += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.idBuffer = value;
          this.ownId = value;
        }
        break;
      case 'retry':
        if (DIGITS.test(value)) this.retry = Number.parseInt(value, 10);
        break;
      default: // unknown fields are ignored
    }
  }

  private dispatch(events: SseEvent[]): void {
    this.last = this.idBuffer;
    const ownId = this.ownId;
    this.ownId = undefined;
    if (this.dataBuffer === '') {
      this.eventType = '';
      return;
    }
    const data = this.dataBuffer.slice(0, -1);
    const event = this.eventType || 'message';
    this.dataBuffer = '';
    this.eventType = '';
    events.push({ event, data, id: ownId, lastEventId: this.last });
  }
}

/**
 * The events of one `text/event-stream` body, as they arrive. Pass the parser of a followed
 * stream to keep its last event id across connections. Leaving the loop early cancels the body.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>, parser = new EventStreamParser()): AsyncGenerator<SseEvent, void, undefined> {
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      yield* parser.push(next.value);
    }
    done = true;
  } finally {
    parser.endOfStream();
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The follow ends with this value (the stream said its last word, or there is nothing to stream). */
export interface FollowDone<T> {
  done: T;
}

/** A connection that failed, or a stream that dropped, as the follower tells `retryDelay`. */
export interface StreamFailure {
  /** What failed: an error of `open`, of reading the body or of `onEvent`; undefined when the body just ended. */
  error: unknown;
  /** Whether the stream had opened (false: `open` failed). */
  opened: boolean;
  /** Failures in a row since the last event (this one included). */
  failures: number;
  /** What the server asked for with `retry:`, if it did. */
  serverRetryMs: number | undefined;
}

export interface FollowEventStreamOptions<T> {
  /**
   * Opens the stream, sending `lastEventId` as `Last-Event-ID` when it is not empty. Answers
   * the body to read, or `{ done }` when there is nothing to follow any more. Throwing is a
   * failed connection (see `retryDelay`).
   */
  open(lastEventId: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | FollowDone<T>>;
  /** Each event, in order; answering `{ done }` ends the follow (the body is cancelled). */
  onEvent(event: SseEvent): FollowDone<T> | void;
  /** The stream is up (true), or failed or dropped (false). */
  onConnection?(up: boolean): void;
  /** How long to wait before connecting again; throw (the failure's error or another) to give up. */
  retryDelay(failure: StreamFailure): number;
  /** Stops the follow: it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Waits between connections (default: a timer); rejects with the signal's reason when it aborts. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
}

/**
 * Follows an event stream until `onEvent` or `open` says it is done: each drop reconnects,
 * after `retryDelay`, with the last event id, so no event is lost or repeated where the
 * server honours `Last-Event-ID`.
 */
export async function followEventStream<T>(opts: FollowEventStreamOptions<T>): Promise<T> {
  const signal = opts.signal ?? new AbortController().signal;
  const sleep = opts.sleep ?? abortableSleep;
  const parser = new EventStreamParser();
  let failures = 0;
  for (;;) {
    signal.throwIfAborted();
    let opened = false;
    let error: unknown;
    try {
      const body = await opts.open(parser.lastEventId, signal);
      if ('done' in body) return body.done;
      opened = true;
      opts.onConnection?.(true);
      for await (const e of readEventStream(body, parser)) {
        failures = 0;
        const answer = opts.onEvent(e);
        if (answer) return answer.done;
      }
    } catch (err) {
      signal.throwIfAborted();
      error = err;
    }
    signal.throwIfAborted();
    opts.onConnection?.(false);
    const wait = opts.retryDelay({ error, opened, failures: ++failures, serverRetryMs: parser.retryMs });
    await sleep(wait, signal);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
