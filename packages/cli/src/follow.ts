import type { Api, Operation } from './api.ts';
import { ApiProblemError, InterruptedError, UnreachableError, unreachable } from './errors.ts';

export interface FollowHandlers {
  log?: (stream: string, data: string) => void;
  status?: (op: Partial<Operation> & { status?: string }) => void;
  progress?: (p: { phase: string; bytes_done: number; bytes_total: number }) => void;
}

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Parses a text/event-stream body into events. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
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
      res = await api.answer(
        api.client.GET('/api/operations/{id}/events/', {
          params: { path: { id } },
          headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
          parseAs: 'stream',
          signal,
        }),
      );
    } catch (err) {
      if (signal.aborted) throw new InterruptedError();
      // The server away (restarting) or failing for now: try again a while.
      const transient = err instanceof UnreachableError || (err instanceof ApiProblemError && err.status >= 500);
      if (!transient || ++failures > 30) throw err;
      await sleep(Math.min(5000, 200 * failures), signal);
      continue;
    }
    if (res.status === 204 || !res.body) {
      // No stream: the operation has ended (the server tells a client not to reconnect so).
      const op = await api.call(api.client.GET('/api/operations/{id}/', { params: { path: { id } }, signal }));
      if (op.status !== 'queued' && op.status !== 'running') return op;
      await sleep(Math.min(5000, 200 * ++failures), signal);
      continue;
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
