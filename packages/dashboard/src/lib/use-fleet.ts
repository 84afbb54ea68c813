import { client, unwrap, type Board, type Operation } from '../api/client.ts';
import { recordTelemetry } from './telemetry-history.ts';
import { useResource } from './use-resource.ts';

/** The server's largest page. */
const PAGE = 1000;

export interface Fleet {
  boards: Board[];
  /** The operation each board runs now, by board id (its progress on the row). */
  running: Map<string, Operation>;
  /** Operations waiting for each board, by board id (where the server does not say `queued`). */
  queuedFor: Map<string, number>;
  /** Selector work waiting for any matching board (not assigned yet). */
  unassigned: Operation[];
}

async function allPages<T>(load: (offset: number) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const first = await load(0);
  const all = [...first.items];
  while (all.length < first.total) {
    const next = await load(all.length);
    if (next.items.length === 0) break;
    all.push(...next.items);
  }
  return all;
}

async function loadFleet(): Promise<Fleet> {
  const [boards, running, queued] = await Promise.all([
    allPages(async (offset) => {
      const d = await unwrap(client.GET('/api/boards/', { params: { query: { limit: PAGE, offset } } }));
      return { items: d.boards, total: d.total };
    }),
    unwrap(client.GET('/api/operations/', { params: { query: { status: 'running', limit: PAGE } } })),
    unwrap(client.GET('/api/operations/', { params: { query: { status: 'queued', limit: PAGE } } })),
  ]);
  const runningBy = new Map<string, Operation>();
  for (const op of running.operations) if (op.board_id) runningBy.set(op.board_id, op);
  const queuedFor = new Map<string, number>();
  const unassigned: Operation[] = [];
  for (const op of queued.operations) {
    if (op.board_id) queuedFor.set(op.board_id, (queuedFor.get(op.board_id) ?? 0) + 1);
    else unassigned.push(op);
  }
  recordTelemetry(boards);
  return { boards, running: runningBy, queuedFor, unassigned };
}

/** Every board with what it runs and what waits for it, polled every `pollMs` while the tab is visible. */
export function useFleet(pollMs: number) {
  return useResource(loadFleet, [], { pollMs });
}
