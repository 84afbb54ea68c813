/**
 * Server-sent event parsing for tests that check exactly what went over the wire (ids,
 * event names, comments, retry) rather than a client's view. No dependencies: the GPIO
 * motor package's tests use it too.
 */

/** One block of an event stream as it went over the wire: an event (id/event/data), a comment or a retry. */
export interface SseBlock {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
  retry?: string;
}

/** Parses one block (its lines, without the blank line that ends it). */
export function parseSseBlock(raw: string): SseBlock {
  const block: SseBlock = {};
  for (const line of raw.split('\n')) {
    if (line.startsWith(':')) {
      block.comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = (colon < 0 ? line : line.slice(0, colon)) as keyof SseBlock;
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    block[field] = field === 'data' && block.data !== undefined ? `${block.data}\n${value}` : value;
  }
  return block;
}

/** Takes every complete block (ended by a blank line) off the front of `buffer`; `rest` is the incomplete tail. */
export function takeSseBlocks(buffer: string): { blocks: SseBlock[]; rest: string } {
  const blocks: SseBlock[] = [];
  for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
    blocks.push(parseSseBlock(buffer.slice(0, end)));
    buffer = buffer.slice(end + 2);
  }
  return { blocks, rest: buffer };
}
