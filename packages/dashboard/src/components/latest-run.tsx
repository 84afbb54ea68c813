import type { Board, Operation } from '../api/client.ts';
import { ago, formatTime } from '../lib/format.ts';
import { Elapsed } from './elapsed.tsx';
import { runDuration } from '../lib/run-result.ts';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';


export function boardName(boards: Board[] | null | undefined, id: string | null): string {
  if (!id) return '';
  return boards?.find((b) => b.id === id)?.name ?? id.slice(0, 8);
}

/** A CI-style run cell: status, board, duration, when (or "never run"). */
export function LatestRun({ run, boards }: { run: Operation | null | undefined; boards: Board[] | null | undefined }) {
  if (run === undefined) return <span class="muted">—</span>;
  if (run === null) return <span class="muted">never run</span>;
  const when = run.finished_at ?? run.started_at ?? run.created_at;
  const dur = runDuration(run);
  return (
    <div class="latest-run">
      <Link href={`/operations/${run.id}`} aria-label={`Run #${run.id}: ${run.status}`}>
        <StatusBadge status={run.status} />
      </Link>{' '}
      <span class="small">
        {run.board_id ? boardName(boards, run.board_id) : 'waiting for a board'}
        {dur && (
          <>
            {' · '}
            <Elapsed op={run} tookWord="" />
          </>
        )}
        {' · '}
        <time dateTime={when} title={formatTime(when)}>
          {ago(when)}
        </time>
      </span>
    </div>
  );
}
