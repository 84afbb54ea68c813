import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';

export type StoredPacs = Schemas['StoredPacs'];

/** While a query of the board's PACs is under way: how often to look at the stored list again. */
const PENDING_POLL_MS = 2000;

/**
 * The board's PACs as the server last listed them (`GET /api/boards/<id>/pacs/`): a visit
 * asks the board (a `pac_query` in its queue) only when the list is stale and nobody asked
 * already (`query_operation_id`), and when `mayQuery` (operator) and the board is online;
 * otherwise `refresh()` asks on request. Issue 39: each visit queued a query before.
 */
export function useBoardPacs(boardId: string, opts: { mayQuery: boolean; online: boolean }) {
  const [stored, setStored] = useState<StoredPacs | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState(false);

  const load = async (): Promise<StoredPacs> => {
    const s = await unwrap(client.GET('/api/boards/{id}/pacs/', { params: { path: { id: boardId } } }));
    setStored(s);
    return s;
  };

  const refresh = async (): Promise<void> => {
    setAsking(true);
    try {
      // Waits for the answer (MM_SYNC_WAIT_S at most; then 202 and the query goes on).
      await unwrap(client.POST('/api/pacs/query/', { body: { board_id: boardId } }));
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      await load().catch(setError);
      setAsking(false);
    }
  };

  useEffect(() => {
    let gone = false;
    load()
      .then((s) => {
        if (!gone && s.stale && s.query_operation_id === null && opts.mayQuery && opts.online) void refresh();
      })
      .catch((err: unknown) => !gone && setError(err));
    return () => {
      gone = true;
    };
  }, [boardId, opts.online]);

  // Someone's query is under way: the list changes when it ends.
  const pending = stored?.query_operation_id ?? null;
  useEffect(() => {
    if (pending === null) return;
    const t = window.setInterval(() => void load().catch(() => {}), PENDING_POLL_MS);
    return () => clearInterval(t);
  }, [pending]);

  return { stored, error, setError, asking, refresh };
}
