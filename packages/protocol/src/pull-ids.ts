/**
 * The stream ids each side picks for its own pulls. The two directions are separate id
 * spaces, but `stream.abort` names only an id and travels both ways: with the agent's
 * pulls in the bottom half and the server's in the top half, an abort is never ambiguous.
 */
export interface PullIdRange {
  first: number;
  last: number;
}

export const AGENT_PULL_IDS: PullIdRange = { first: 1, last: 0x7fff_ffff };
export const SERVER_PULL_IDS: PullIdRange = { first: 0x8000_0000, last: 0xffff_ffff };

/** Hands out ids of a range in turn, wrapping at its end and skipping ids still in use. */
export class PullIdAllocator {
  private next: number;

  constructor(private readonly range: PullIdRange) {
    this.next = range.first;
  }

  take(inUse: (id: number) => boolean): number {
    for (;;) {
      const id = this.next;
      this.next = id >= this.range.last ? this.range.first : id + 1;
      if (!inUse(id)) return id;
    }
  }
}
