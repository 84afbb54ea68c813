import { type SseBlock, takeSseBlocks } from '../../../test/support/sse.ts';

/**
 * Reads a `text/event-stream` response with plain fetch, block by block, so tests see
 * exactly what went over the wire (ids, comments, retry) rather than a client's view.
 */
export async function openSse(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (!res.body) throw new Error('no body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pending: SseBlock[] = [];

  async function next(): Promise<SseBlock> {
    for (;;) {
      const block = pending.shift();
      if (block) return block;
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      const taken = takeSseBlocks(buffer + decoder.decode(value, { stream: true }));
      buffer = taken.rest;
      pending.push(...taken.blocks);
    }
  }

  /** The next block that is an event (skipping comments and retry-only blocks). */
  async function nextEvent(): Promise<Required<Pick<SseBlock, 'id' | 'event' | 'data'>>> {
    for (;;) {
      const b = await next();
      if (b.data !== undefined) return { id: b.id ?? '', event: b.event ?? 'message', data: b.data };
    }
  }

  return {
    response: res,
    next,
    nextEvent,
    close: () => controller.abort(),
  };
}
