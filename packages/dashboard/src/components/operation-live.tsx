import { useEffect, useRef, useState } from 'preact/hooks';
import type { Operation } from '../api/client.ts';
import { formatBytes, formatMetric, formatTime } from '../lib/format.ts';
import { followEvents } from '../lib/sse.ts';
import { CancelOperation } from './cancel-operation.tsx';
import { OperationFleetNotes } from './operation-fleet-notes.tsx';
import { StatusBadge } from './status-badge.tsx';

/**
 * Only the end of a long log is kept and drawn (about 650 lines of 100 characters, cut at a
 * line start); the whole log is a download away. Drawing is throttled to DRAW_EVERY_MS, so
 * a log arriving at megabytes per second costs one small text update every few frames.
 */
const TAIL_CHARS = 64 * 1024;
const DRAW_EVERY_MS = 150;

/** The last TAIL_CHARS of `text`, starting at a line start when there is one in range. */
function tailOf(text: string): string {
  if (text.length <= TAIL_CHARS) return text;
  const from = text.length - TAIL_CHARS;
  const nl = text.indexOf('\n', from);
  return nl >= 0 && nl < text.length - 1 ? text.slice(nl + 1) : text.slice(from);
}

/** A phase or a notable status change, in the order the events came. */
interface TimelineEntry {
  at: string;
  text: string;
}

/**
 * One operation followed live from `/api/operations/<id>/events/`: its status timeline,
 * progress and the tail of its log. Updates are drawn at most once per frame, so a log
 * arriving at megabytes per second (30 MB in all) stays smooth.
 */
export function OperationLive({ operation, onEnd }: { operation: Operation; onEnd?: (op: Operation) => void }) {
  const [op, setOp] = useState(operation);
  const [timeline, setTimeline] = useState<TimelineEntry[]>([]);
  const [connected, setConnected] = useState(true);
  const [logView, setLogView] = useState({ text: '', total: 0 });
  /** The event stream has been replayed to the operation's end: an empty log is then known to be empty. */
  const [ended, setEnded] = useState(false);
  const tail = useRef({ text: '', total: 0, timer: 0, frame: 0 });
  const pre = useRef<HTMLPreElement>(null);
  const follow = useRef(true);
  const onEndRef = useRef(onEnd);
  onEndRef.current = onEnd;

  useEffect(() => {
    const t = tail.current;
    t.text = '';
    t.total = 0;
    setTimeline([]);
    setEnded(false);
    const flush = () => {
      t.timer = 0;
      t.frame = 0;
      t.text = tailOf(t.text);
      setLogView({ text: t.text, total: t.total });
    };
    // Only the log's last TAIL_CHARS bytes are replayed (a finished 30 MB log opens at once);
    // `log_skipped` says how much came before. A resumed stream continues where it was.
    const stop = followEvents(`/api/operations/${operation.id}/events/?log_tail_bytes=${TAIL_CHARS}`, {
      endEvent: 'end',
      onConnection: setConnected,
      onEvent(e) {
        const data = JSON.parse(e.data) as Record<string, unknown>;
        if (e.event === 'log_skipped') {
          t.total += Number(data.bytes ?? 0);
        } else if (e.event === 'log') {
          const chunk = String(data.data ?? '');
          t.total += chunk.length;
          t.text += chunk;
          // Trimmed as it grows (amortised: at twice the tail), drawn at most every DRAW_EVERY_MS.
          if (t.text.length > TAIL_CHARS * 2) t.text = tailOf(t.text);
          t.timer ||= window.setTimeout(() => (t.frame = requestAnimationFrame(flush)), DRAW_EVERY_MS);
        } else if (e.event === 'status') {
          setOp((o) => ({
            ...o,
            status: (data.status as Operation['status']) ?? o.status,
            started_at: data.status === 'running' && !o.started_at ? new Date().toISOString() : o.started_at,
            error: (data.error as Operation['error']) ?? o.error,
          }));
          if (data.reason) setTimeline((tl) => [...tl, { at: '', text: `${String(data.status)} (${String(data.reason)})` }]);
        } else if (e.event === 'progress') {
          const phase = String(data.phase ?? '');
          setOp((o) => ({ ...o, progress: { ...o.progress, ...(data as Partial<Operation['progress']>) } }));
          // The server stamps each progress event with its time (`at`); a phase's entry keeps its first.
          const at = typeof data.at === 'string' ? data.at : '';
          setTimeline((tl) => (phase && tl.at(-1)?.text !== phase ? [...tl, { at, text: phase }] : tl));
        } else if (e.event === 'end') {
          const final = data as unknown as Operation;
          setOp(final);
          // The last lines are drawn with the end, not a throttle's delay after it.
          if (t.timer) {
            clearTimeout(t.timer);
            flush();
          }
          setEnded(true);
          onEndRef.current?.(final);
        }
      },
    });
    return () => {
      stop();
      clearTimeout(t.timer);
      cancelAnimationFrame(t.frame);
      t.timer = 0;
      t.frame = 0;
    };
  }, [operation.id]);

  useEffect(() => {
    if (follow.current && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [logView]);

  const p = op.progress;
  const pct = p && p.bytes_total ? Math.round((100 * (p.bytes_done ?? 0)) / p.bytes_total) : undefined;
  return (
    <div class="op-live stack">
      <div class="row wrap">
        <span>
          Operation <a href={`/operations/${op.id}`}>#{op.id}</a> ({op.kind})
        </span>
        <StatusBadge status={op.status} />
        {!connected && op.status !== 'succeeded' && op.status !== 'failed' && op.status !== 'cancelled' && (
          <span class="muted">reconnecting to the live feed…</span>
        )}
      </div>
      <OperationFleetNotes operation={op} />
      {p && p.phase && p.phase !== op.status && (op.status === 'running' || op.status === 'queued') && (
        <div>
          <span>{p.phase}</span>
          {pct !== undefined && (
            <>
              {' '}
              <progress max={100} value={pct} aria-label={`${op.kind} progress`} /> {formatBytes(p.bytes_done)} of {formatBytes(p.bytes_total)}
            </>
          )}
        </div>
      )}
      {/* A run with no byte count (the runner at work): a moving bar says it is alive. */}
      {op.status === 'running' && pct === undefined && <progress class="busy-bar" aria-label={`${op.kind} running`} />}
      {op.error && (
        <div class="error" role="alert">
          <strong>{op.error.message}</strong> <span class="muted">({op.error.code})</span>
        </div>
      )}
      <ol class="timeline" aria-label="Timeline">
        <li>
          queued <time>{formatTime(op.created_at)}</time>
        </li>
        {op.started_at && (
          <li>
            running <time>{formatTime(op.started_at)}</time>
          </li>
        )}
        {timeline.map((t, i) => (
          <li key={i} data-testid="timeline-phase">
            {t.text} {t.at && <time dateTime={t.at}>{formatTime(t.at)}</time>}
            {t.at && <PhaseLength from={t.at} to={timeline[i + 1]?.at || op.finished_at} />}
          </li>
        ))}
        {op.finished_at && (
          <li>
            {op.status} <time>{formatTime(op.finished_at)}</time>
          </li>
        )}
      </ol>
      <div class="row wrap">
        <h3 class="inline">Log</h3>
        <span class="muted small">
          {logView.total > logView.text.length
            ? `showing the last ${formatBytes(logView.text.length)} of ${formatBytes(logView.total)}`
            : logView.total > 0
              ? formatBytes(logView.total)
              : ''}
        </span>
        <a href={`/api/operations/${op.id}/log/`} download={`operation-${op.id}.log`}>
          Download the whole log
        </a>
        <CancelOperation operation={op} onCancelled={setOp} />
      </div>
      {/* role="log": a live region of appended lines, and a role that may carry a label (a bare <pre> may not, and axe says so when it is empty). */}
      <pre
        class={!logView.text && ended ? 'log log-empty' : 'log'}
        ref={pre}
        role="log"
        tabIndex={0}
        aria-label="Live log"
        data-testid="live-log"
        onScroll={(e) => {
          const el = e.currentTarget;
          follow.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
        }}
      >
        {logView.text || emptyLogNote(op.status, ended)}
      </pre>
    </div>
  );
}

/** How long a phase of the timeline lasted, to the next phase or the end: ` (1.2 s)`. */
function PhaseLength({ from, to }: { from: string; to: string | null | undefined }) {
  if (!to) return null;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms >= 0 ? <span class="muted"> ({formatMetric('phase_ms', ms)})</span> : null;
}

/**
 * What the log box says while it has no line. `ended`: the events were replayed to the
 * operation's end, so a finished operation that wrote none says so, rather than an empty box
 * under "0 B"; before that, a finished one shows nothing yet.
 */
function emptyLogNote(status: string, ended: boolean): string {
  if (ended) return 'This operation wrote no log.';
  if (status === 'queued') return 'Waiting for the board…';
  return status === 'running' ? 'No output yet.' : '';
}
