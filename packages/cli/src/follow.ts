import { followEventStream } from '@mm/api-client';
import type { Api, Operation } from './api.ts';
import { ApiProblemError, InterruptedError, UnreachableError, unreachable } from './errors.ts';

export interface FollowHandlers {
  log?: (stream: string, data: string) => void;
  status?: (op: Partial<Operation> & { status?: string }) => void;
  progress?: (p: { phase: string; bytes_done: number; bytes_total: number }) => void;
}

/**
 * Follows an operation's events (status, progress, live log) until its `end` event and
 * resolves with the final operation. A dropped stream is resumed with Last-Event-ID, so no
 * log line is shown twice or lost. Aborting the signal (Ctrl-C) rejects with
 * InterruptedError; the operation itself goes on.
 */
export async function followOperation(api: Api, id: number, handlers: FollowHandlers, signal: AbortSignal): Promise<Operation> {
  try {
    return await followEventStream<Operation>({
      signal,
      async open(lastEventId) {
        const res = await api.answer(
          api.client.GET('/api/operations/{id}/events/', {
            params: { path: { id } },
            headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
            parseAs: 'stream',
            signal,
          }),
        );
        if (res.status !== 204 && res.body) return res.body;
        // No stream: the operation has ended (the server tells a client not to reconnect so).
        const op = await api.call(api.client.GET('/api/operations/{id}/', { params: { path: { id } }, signal }));
        if (op.status !== 'queued' && op.status !== 'running') return { done: op };
        throw new NoStreamYet();
      },
      onEvent(e) {
        const data = e.data ? (JSON.parse(e.data) as unknown) : undefined;
        if (e.event === 'log') {
          const d = data as { stream: string; data: string };
          handlers.log?.(d.stream, d.data);
        } else if (e.event === 'status') handlers.status?.(data as Partial<Operation>);
        else if (e.event === 'progress') handlers.progress?.(data as { phase: string; bytes_done: number; bytes_total: number });
        else if (e.event === 'end') return { done: data as Operation };
      },
      retryDelay({ error, opened, failures }) {
        // A refusal is final. The server away (restarting) or failing for now, or a stream that
        // broke (server restart, proxy), is tried again a while, resuming after the last event.
        const transient = opened
          ? !(error instanceof ApiProblemError)
          : error instanceof NoStreamYet || error instanceof UnreachableError || (error instanceof ApiProblemError && error.status >= 500);
        if (!transient) throw error;
        if (failures > 30) throw opened || error instanceof NoStreamYet ? unreachable(api.server, new Error('the event stream keeps breaking')) : error;
        return Math.min(5000, 200 * failures);
      },
    });
  } catch (err) {
    if (signal.aborted) throw new InterruptedError();
    throw err;
  }
}

/** The stream answered 204 but the operation has not ended (yet): look again shortly. */
class NoStreamYet extends Error {}
