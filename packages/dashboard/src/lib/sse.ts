import { authHeaders } from '../api/client.ts';

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseOptions {
  onEvent(e: SseEvent): void;
  /** The connection is up (true) or lost and being retried (false). */
  onConnection?(up: boolean): void;
  /** The server ended the stream for good (e.g. after an operation's `end`): no reconnect. */
  endEvent?: string;
}

/**
 * Follows a server-sent events route with fetch (so a bearer token works as well as the
 * session cookie), reconnecting with `Last-Event-ID` after a drop. Returns a stop function.
 */
export function followEvents(url: string, opts: SseOptions): () => void {
  const abort = new AbortController();
  let lastId: string | undefined;
  let retryMs = 1000;

  async function run(): Promise<void> {
    while (!abort.signal.aborted) {
      let ended = false;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...authHeaders() };
        if (lastId !== undefined) headers['last-event-id'] = lastId;
        const res = await fetch(url, { headers, signal: abort.signal, credentials: 'same-origin', cache: 'no-store' });
        if (!res.ok || !res.body) {
          // 4xx will not get better by retrying (deleted, forbidden): stop.
          if (res.status >= 400 && res.status < 500) {
            opts.onConnection?.(false);
            return;
          }
          throw new Error(`HTTP ${res.status}`);
        }
        opts.onConnection?.(true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        let ev: SseEvent = { id: undefined, event: 'message', data: '' };
        let dataLines: string[] = [];
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).replace(/\r$/, '');
            buf = buf.slice(nl + 1);
            if (line === '') {
              if (dataLines.length) {
                ev.data = dataLines.join('\n');
                if (ev.id !== undefined) lastId = ev.id;
                opts.onEvent(ev);
                if (opts.endEvent && ev.event === opts.endEvent) ended = true;
              }
              ev = { id: undefined, event: 'message', data: '' };
              dataLines = [];
              continue;
            }
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') dataLines.push(val);
            else if (field === 'event') ev.event = val;
            else if (field === 'id') ev.id = val;
            else if (field === 'retry' && /^\d+$/.test(val)) retryMs = Number(val);
          }
          if (ended) {
            await reader.cancel();
            return;
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      if (ended) return;
      opts.onConnection?.(false);
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }
  void run();
  return () => abort.abort();
}
