import { followEventStream, type SseEvent } from '@mm/api-client';
import { authHeaders } from '../api/client.ts';

export type { SseEvent } from '@mm/api-client';

export interface SseOptions {
  onEvent(e: SseEvent): void;
  /** The connection is up (true) or lost and being retried (false). */
  onConnection?(up: boolean): void;
  /** The server ended the stream for good (e.g. after an operation's `end`): no reconnect. */
  endEvent?: string;
}

/** An answer that will not get better by asking again (deleted, forbidden; 204: nothing more will come). */
class FinalAnswer extends Error {}

/**
 * Follows a server-sent events route with fetch (so a bearer token works as well as the
 * session cookie) through the shared parser of `@mm/api-client`, reconnecting with
 * `Last-Event-ID` after a drop, after the server's `retry:` (1 s when it named none).
 * Returns a stop function.
 */
export function followEvents(url: string, opts: SseOptions): () => void {
  const abort = new AbortController();
  followEventStream<void>({
    signal: abort.signal,
    async open(lastEventId, signal) {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...authHeaders() };
      if (lastEventId !== '') headers['last-event-id'] = lastEventId;
      const res = await fetch(url, { headers, signal, credentials: 'same-origin', cache: 'no-store' });
      if ((res.status >= 400 && res.status < 500) || res.status === 204) throw new FinalAnswer(`HTTP ${res.status}`);
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      return res.body;
    },
    onEvent(e) {
      opts.onEvent(e);
      if (opts.endEvent && e.event === opts.endEvent) return { done: undefined };
    },
    onConnection: opts.onConnection,
    retryDelay({ error, serverRetryMs }) {
      if (error instanceof FinalAnswer) throw error;
      return serverRetryMs ?? 1000;
    },
  }).catch(() => {
    // Stopped, or a final answer (the connection shows as lost).
  });
  return () => abort.abort();
}
