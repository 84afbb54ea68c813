import type { Board, Operation } from '../api/client.ts';
import { formatTime } from '../lib/format.ts';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';
import { DataTable } from './table-box.tsx';

/** A list of operations; the invocation and board columns when they are not the page's own. */
export function OperationsTable({ operations, boards, showInvocation = false }: { operations: Operation[]; boards?: Board[] | null; showInvocation?: boolean }) {
  const boardName = (id: string | null) => (id ? (boards?.find((b) => b.id === id)?.name ?? id.slice(0, 8)) : '—');
  return (
    <DataTable label="Operations" columns={['Id', 'Kind', 'Status', showInvocation && 'Invocation', boards !== undefined && 'Board', 'Created', 'Finished']}>
      {operations.map((o) => (
        <tr key={o.id}>
          <td>
            <Link href={`/operations/${o.id}`}>#{o.id}</Link>
          </td>
          <td>{o.kind}</td>
          <td>
            <StatusBadge status={o.status} />
          </td>
          {showInvocation && <td>{o.invocation_id ? <Link href={`/invocations/${o.invocation_id}`}>#{o.invocation_id}</Link> : '—'}</td>}
          {boards !== undefined && <td>{boardName(o.board_id)}</td>}
          <td>{formatTime(o.created_at)}</td>
          <td>{formatTime(o.finished_at)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
