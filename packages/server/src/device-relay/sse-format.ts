/**
 * Server-sent events as the relay writes them: each event is formatted once into a Buffer
 * that every client's socket then takes as is.
 */

/** Keeps a field on one line: an id or event name with a line break would start a new field. */
const oneLine = (s: string) => s.replace(/[\r\n\0]/g, '');

/** One event: `id:` if it has one, `event:` unless it is the default `message`, one `data:` line per line of data. */
export function formatEvent(e: { id?: string | undefined; event?: string | undefined; data: string }): Buffer {
  let text = '';
  if (e.id !== undefined) text += `id: ${oneLine(e.id)}\n`;
  if (e.event !== undefined && e.event !== '' && e.event !== 'message') text += `event: ${oneLine(e.event)}\n`;
  for (const line of e.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return Buffer.from(`${text}\n`, 'utf8');
}

/** The relay's own `upstream` event: the script's stream dropped (`down`) or is back (`up`). No id: it is not the script's. */
export function upstreamEvent(state: 'up' | 'down', message?: string): Buffer {
  return formatEvent({ event: 'upstream', data: JSON.stringify(message ? { state, message } : { state }) });
}

export const HEARTBEAT_COMMENT = Buffer.from(': heartbeat\n\n', 'utf8');

/** First bytes of every stream: how long a client's EventSource waits before reconnecting. */
export function preamble(retryMs: number): Buffer {
  return Buffer.from(`retry: ${retryMs}\n\n`, 'utf8');
}

interface Buffered {
  /** The stream's last event id once this event was seen (SSE ids stick until the next one). */
  lastId: string | undefined;
  frame: Buffer;
}

/**
 * The last `capacity` events of a stream, for `Last-Event-ID` resumption. Ids are the
 * script's own, compared as strings.
 */
export class EventRing {
  private readonly items: Buffered[] = [];

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.items.length;
  }

  push(lastId: string | undefined, frame: Buffer): void {
    this.items.push({ lastId, frame });
    if (this.items.length > this.capacity) this.items.shift();
  }

  /**
   * The events a client that last saw `lastEventId` missed: those after the newest event
   * that carried that id. An id the buffer no longer (or never) held yields everything
   * buffered: the client did miss events, and these are the ones still known.
   */
  since(lastEventId: string): Buffer[] {
    for (let i = this.items.length - 1; i >= 0; i--) {
      if (this.items[i]!.lastId === lastEventId) return this.items.slice(i + 1).map((b) => b.frame);
    }
    return this.items.map((b) => b.frame);
  }
}
