/** One block of a server-sent event stream: an event (id/event/data) or a comment. */
export interface SseBlock {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  retry?: string;
}

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

  async function next(): Promise<SseBlock> {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const raw = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const block: SseBlock = {};
        for (const line of raw.split('\n')) {
          if (line.startsWith(':')) block.comment = line.slice(1).trim();
          else {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon) as keyof SseBlock;
            const value = line.slice(colon + 1).replace(/^ /, '');
            block[field] = block[field] === undefined || field !== 'data' ? value : `${block[field]}\n${value}`;
          }
        }
        return block;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended');
      buffer += decoder.decode(value, { stream: true });
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
