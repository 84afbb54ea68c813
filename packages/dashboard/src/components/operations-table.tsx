import type { Board, Operation } from '../api/client.ts';
import { formatTime } from '../lib/format.ts';
import { boardName } from './latest-run.tsx';
import { LabelChips } from './label-chips.tsx';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';
import { DataTable } from './table-box.tsx';

/** The board an operation runs on, or (selector work not yet assigned) the labels it waits for. */
export function OperationBoard({ op, boards }: { op: Operation; boards: Board[] | null | undefined }) {
  const o = op;
  const sel = o.board_selector && Object.keys(o.board_selector).length > 0 ? o.board_selector : null;
  if (op.board_id)
    return (
      <>
        <Link href={`/boards/${op.board_id}`}>{boardName(boards, op.board_id)}</Link>
        {sel && (
          <div class="small muted">
            picked for <LabelChips labels={sel} />
          </div>
        )}
      </>
    );
  if (sel)
    return (
      <span class="small" data-testid={`waiting-for-${op.id}`}>
        {op.status === 'queued' ? 'waiting for ' : 'was for '}
        <LabelChips labels={sel} />
        {o.priority ? <span class="muted"> · priority {o.priority}</span> : null}
      </span>
    );
  return <>—</>;
}

/** A list of operations; the invocation and board columns when they are not the page's own. */
export function OperationsTable({ operations, boards, showInvocation = false }: { operations: Operation[]; boards?: Board[] | null; showInvocation?: boolean }) {
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
          {boards !== undefined && (
            <td>
              <OperationBoard op={o} boards={boards} />
            </td>
          )}
          <td>{formatTime(o.created_at)}</td>
          <td>{formatTime(o.finished_at)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
