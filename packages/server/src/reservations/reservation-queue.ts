import { matchesSelector, type BoardSelector } from '../boards/board-selector.ts';

/**
 * The reservation queue's rules (docs/reservations.md), without a database: which waiting
 * requests get which boards now, each request's place in its line, and when it may expect a
 * board. reservations.ts runs `planGrants` on rows it read under one lock and applies it.
 */

export interface WaitingRequest {
  id: number;
  /** A named board, or (null) any board the selector matches. */
  boardId: string | null;
  boardSelector: BoardSelector | null;
  durationS: number;
}

export interface CandidateBoard {
  id: string;
  labels: Record<string, string>;
  /**
   * May a selector request take it now: linked, not pending, not in maintenance, not `bad`,
   * not rebooting, nothing queued or running. (A named request only needs it unreserved.)
   */
  idle: boolean;
  /** Reserved by an active lease now (`ends_at` in the future). */
  reserved: boolean;
}

/** The line a request waits in: its named board, or its selector (keys sorted). */
export function queueKey(r: Pick<WaitingRequest, 'boardId' | 'boardSelector'>): string {
  if (r.boardId !== null) return `board:${r.boardId}`;
  const sel = r.boardSelector ?? {};
  return `selector:${JSON.stringify(Object.keys(sel).sort().map((k) => [k, sel[k]]))}`;
}

/**
 * First come, first served: the oldest waiting request (lowest id) is looked at first and
 * takes the first free board it may have (boards in the order given: longest idle first);
 * a board given is not given again. A request that finds nothing waits, and so does every
 * later request of its line (they want the same boards), but a later request of another
 * line may still take a board the earlier one could not use.
 */
export function planGrants(waiting: WaitingRequest[], boards: CandidateBoard[]): Array<{ requestId: number; boardId: string }> {
  const taken = new Set(boards.filter((b) => b.reserved).map((b) => b.id));
  const byId = new Map(boards.map((b) => [b.id, b]));
  const blockedLines = new Set<string>();
  const grants: Array<{ requestId: number; boardId: string }> = [];
  for (const r of [...waiting].sort((a, b) => a.id - b.id)) {
    const line = queueKey(r);
    if (blockedLines.has(line)) continue;
    let board: CandidateBoard | undefined;
    if (r.boardId !== null) {
      const b = byId.get(r.boardId);
      if (b && !taken.has(b.id)) board = b;
    } else {
      board = boards.find((b) => b.idle && !taken.has(b.id) && matchesSelector(b.labels, r.boardSelector ?? {}));
    }
    if (!board) {
      blockedLines.add(line);
      continue;
    }
    taken.add(board.id);
    grants.push({ requestId: r.id, boardId: board.id });
  }
  return grants;
}

/** Each waiting request's place in its line, 1 first. */
export function positions(waiting: WaitingRequest[]): Map<number, number> {
  const seen = new Map<string, number>();
  const out = new Map<number, number>();
  for (const r of [...waiting].sort((a, b) => a.id - b.id)) {
    const line = queueKey(r);
    const n = (seen.get(line) ?? 0) + 1;
    seen.set(line, n);
    out.set(r.id, n);
  }
  return out;
}

/**
 * When each waiting request may expect its board (ms since the epoch), or null when no
 * estimate can be made (its boards are busy with work, offline, or none matches). The boards
 * its line may take free up as their leases end; every request ahead of it in its line
 * takes the first one to free and holds it for its duration.
 */
export function estimates(
  waiting: WaitingRequest[],
  leases: Array<{ boardId: string; labels: Record<string, string>; endsAt: number }>,
  now: number,
): Map<number, number | null> {
  const out = new Map<number, number | null>();
  const lines = new Map<string, WaitingRequest[]>();
  for (const r of [...waiting].sort((a, b) => a.id - b.id)) {
    const line = queueKey(r);
    lines.set(line, [...(lines.get(line) ?? []), r]);
  }
  for (const requests of lines.values()) {
    const first = requests[0]!;
    const frees = leases
      .filter((l) => (first.boardId !== null ? l.boardId === first.boardId : matchesSelector(l.labels, first.boardSelector ?? {})))
      .map((l) => Math.max(now, l.endsAt));
    for (const r of requests) {
      if (frees.length === 0) {
        out.set(r.id, null);
        continue;
      }
      frees.sort((a, b) => a - b);
      const at = frees.shift()!;
      out.set(r.id, at);
      frees.push(at + r.durationS * 1000);
    }
  }
  return out;
}
