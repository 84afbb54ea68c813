import { useEffect, useRef, useState } from 'preact/hooks';
import type { Board, Operation } from '../api/client.ts';
import { formatMetric, formatTime, metricLabel } from '../lib/format.ts';
import { metricsOf } from '../lib/run-result.ts';
import { followEvents } from '../lib/sse.ts';
import { Elapsed } from './elapsed.tsx';
import { boardName } from './latest-run.tsx';
import { LabelChips } from './label-chips.tsx';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';

/** How much of a failed run's log the summary shows (its end, where the error usually is). */
const TAIL_BYTES = 4096;
const TAIL_LINES = 25;

/** The end of a finished operation's log, replayed from its event stream (never the whole log). */
function useLogTail(op: Operation | null): string | null {
  const [tail, setTail] = useState<string | null>(null);
  const failed = op?.status === 'failed';
  useEffect(() => {
    setTail(null);
    if (!op || !failed) return;
    let text = '';
    const stop = followEvents(`/api/operations/${op.id}/events/?log_tail_bytes=${TAIL_BYTES}`, {
      endEvent: 'end',
      onEvent(e) {
        if (e.event === 'log') text += String((JSON.parse(e.data) as { data?: unknown }).data ?? '');
        if (e.event === 'end') setTail(text.split('\n').slice(-TAIL_LINES).join('\n'));
      },
    });
    return stop;
  }, [op?.id, failed]);
  return tail;
}

/** The invocation's latest run at a glance: outcome, board, duration, metrics; for a failure the error and the log's end. */
export function RunSummary({ run, boards }: { run: Operation | null; boards: Board[] | null }) {
  const tail = useLogTail(run);
  const pre = useRef<HTMLPreElement>(null);
  // The error is usually in the last lines: show the end of the tail.
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [tail]);
  if (!run) return <p class="muted">Not run yet.</p>;
  const sel = run.board_selector;
  const metrics = metricsOf(run);
  const when = run.finished_at ?? run.started_at ?? run.created_at;
  return (
    <div class="card stack run-summary" data-testid="latest-run">
      <div class="row wrap">
        <StatusBadge status={run.status} />
        <Link href={`/operations/${run.id}`}>Run #{run.id}</Link>
        <span>
          on {run.board_id ? <Link href={`/boards/${run.board_id}`}>{boardName(boards, run.board_id)}</Link> : 'a board not yet chosen'}
        </span>
        {sel && Object.keys(sel).length > 0 && (
          <span class="small">
            for <LabelChips labels={sel} />
          </span>
        )}
        <span class="muted">
          <Elapsed op={run} />
        </span>
        <span class="muted small">{formatTime(when)}</span>
      </div>
      {Object.keys(metrics).length > 0 && (
        <dl class="metric-list">
          {Object.entries(metrics).map(([k, v]) => (
            <div key={k}>
              <dt title={k}>{metricLabel(k)}</dt>
              <dd>{formatMetric(k, v)}</dd>
            </div>
          ))}
        </dl>
      )}
      {run.error && (
        <div class="error" role="alert">
          <strong>{run.error.message}</strong> <span class="muted">({run.error.code})</span>
        </div>
      )}
      {run.status === 'failed' && (
        <>
          <h3>End of the log</h3>
          <pre class="log" ref={pre} tabIndex={0} aria-label="End of the log" data-testid="failure-log-tail">
            {tail ?? 'Loading…'}
          </pre>
        </>
      )}
    </div>
  );
}
