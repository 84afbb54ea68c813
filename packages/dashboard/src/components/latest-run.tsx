import type { Board, Operation } from '../api/client.ts';
import { ago, formatTime } from '../lib/format.ts';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';

/** How long a run took (or has been running), in words: `42 s`, `3 min 5 s`, `1 h 2 min`. */
export function runDuration(op: Pick<Operation, 'started_at' | 'finished_at'>, now = Date.now()): string {
  if (!op.started_at) return '';
  const ms = (op.finished_at ? new Date(op.finished_at).getTime() : now) - new Date(op.started_at).getTime();
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

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
        {dur && ` · ${dur}`}
        {' · '}
        <time dateTime={when} title={formatTime(when)}>
          {ago(when)}
        </time>
      </span>
    </div>
  );
}
