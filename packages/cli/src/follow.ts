import type { Api, Operation } from './api.ts';
import { problemOf } from './api.ts';
import { ApiProblemError, InterruptedError, unreachable } from './errors.ts';

export interface FollowHandlers {
  log?: (stream: string, data: string) => void;
  status?: (op: Partial<Operation> & { status?: string }) => void;
  progress?: (p: { phase: string; bytes_done: number; bytes_total: number }) => void;
}

interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Parses a text/event-stream body into events. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id?: string; event?: string; data: string[] } = { data: [] };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (current.data.length || current.event) {
          yield { ...(current.id !== undefined ? { id: current.id } : {}), event: current.event ?? 'message', data: current.data.join('\n') };
        }
        current = { data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') current.data.push(value);
      else if (field === 'event') current.event = value;
      else if (field === 'id') current.id = value;
    }
  }
}

/**
 * Follows an operation's events (status, progress, live log) until its `end` event and
 * resolves with the final operation. A dropped stream is resumed with Last-Event-ID, so no
 * log line is shown twice or lost. Aborting the signal (Ctrl-C) rejects with
 * InterruptedError; the operation itself goes on.
 */
export async function followOperation(api: Api, id: number, handlers: FollowHandlers, signal: AbortSignal): Promise<Operation> {
  let lastId: string | undefined;
  let failures = 0;
  for (;;) {
    if (signal.aborted) throw new InterruptedError();
    let res: Response;
    try {
      res = await fetch(api.url(`/api/operations/${id}/events/`), {
        headers: { ...api.authHeaders(), accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw new InterruptedError();
      if (++failures > 30) throw unreachable(api.server, err);
      await sleep(Math.min(5000, 200 * failures), signal);
      continue;
    }
    if (!res.ok || !res.body) {
      if (res.status >= 500 && ++failures <= 30) {
        await sleep(Math.min(5000, 200 * failures), signal);
        continue;
      }
      throw await problemOf(res);
    }
    try {
      for await (const e of sseEvents(res.body)) {
        failures = 0;
        if (e.id !== undefined) lastId = e.id;
        const data = e.data ? (JSON.parse(e.data) as unknown) : undefined;
        if (e.event === 'log') {
          const d = data as { stream: string; data: string };
          handlers.log?.(d.stream, d.data);
        } else if (e.event === 'status') handlers.status?.(data as Partial<Operation>);
        else if (e.event === 'progress') handlers.progress?.(data as { phase: string; bytes_done: number; bytes_total: number });
        else if (e.event === 'end') return data as Operation;
      }
    } catch (err) {
      if (signal.aborted) throw new InterruptedError();
      if (err instanceof ApiProblemError) throw err;
    }
    // The stream ended without `end` (server restart, proxy): resume after the last event.
    if (++failures > 30) throw unreachable(api.server, new Error('the event stream keeps breaking'));
    await sleep(Math.min(5000, 200 * failures), signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new InterruptedError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
