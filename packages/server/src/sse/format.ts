/**
 * Server-sent events as the server writes them (operation events, the device-script relay):
 * each event is formatted once into a Buffer that every client's socket then takes as is.
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

export const HEARTBEAT_COMMENT = Buffer.from(': heartbeat\n\n', 'utf8');

/** First bytes of every stream: how long a client's EventSource waits before reconnecting. */
export function preamble(retryMs: number): Buffer {
  return Buffer.from(`retry: ${retryMs}\n\n`, 'utf8');
}

/**
 * `event: gap`: the client resumed after `lastEventId` but events after it are no longer
 * held (the ring moved past it, or they would not fit in one client's allowance): what follows
 * is the oldest still held, and what came between is lost. No id, so the client's own
 * Last-Event-ID stays until the next event that has one.
 */
export function gapEvent(lastEventId: string): Buffer {
  return formatEvent({
    event: 'gap',
    data: JSON.stringify({
      last_event_id: lastEventId,
      message: 'Events after this id are no longer held: some were missed. The stream goes on from the oldest it still holds.',
    }),
  });
}
