import { client, unwrap } from '../api/client.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { OperationsTable } from './operations-table.tsx';

const RECENT = 10;

/** The board page's section of its most recent operations (newest first). */
export function BoardOperations({ boardId }: { boardId: string }) {
  const ops = useResource(() => unwrap(client.GET('/api/operations/', { params: { query: { board_id: boardId, limit: RECENT } } })), [boardId], { pollMs: 5000 });
  return (
    <section aria-labelledby="board-ops-title" class="stack" data-testid="board-operations">
      <h2 id="board-ops-title">Recent operations</h2>
      <ErrorBox error={ops.error} />
      {ops.data && (ops.data.operations.length === 0 ? <p class="muted">No operations on this board yet.</p> : <OperationsTable operations={ops.data.operations} showInvocation />)}
      {ops.data && ops.data.total > RECENT && (
        <p>
          <Link href={`/operations?board_id=${boardId}`}>All {ops.data.total} operations</Link>
        </p>
      )}
    </section>
  );
}
