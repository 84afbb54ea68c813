import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Operation } from '../api/client.ts';
import { formatTime } from '../lib/format.ts';

type FleetView = Operation & {
  waiting?: { reason: string; gives_up_at: string | null } | null;
  board_offline_since?: string | null;
};

/** How often an operation under way is read again for what the fleet says about it. */
const LOOK_EVERY_MS = 5000;

/**
 * What the fleet says about an operation (docs/fleet.md): why queued selector work waits and
 * when it gives up; "board offline since …" while its board is gone mid-run; what a lost
 * board reported later. Read again every few seconds while it is under way.
 */
export function OperationFleetNotes({ operation }: { operation: Operation }) {
  const [view, setView] = useState<FleetView>(operation);
  const underWay = operation.status === 'queued' || operation.status === 'running';
  useEffect(() => {
    setView(operation);
    if (!underWay) return;
    let stopped = false;
    const look = async () => {
      try {
        const now = (await unwrap(client.GET('/api/operations/{id}/', { params: { path: { id: operation.id } } }))) as FleetView;
        if (!stopped) setView(now);
      } catch {
        // The next look tries again.
      }
    };
    void look();
    const timer = setInterval(() => void look(), LOOK_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [operation.id, operation.status]);
  const waiting = operation.status === 'queued' ? view.waiting : null;
  const offline = operation.status === 'running' ? view.board_offline_since : null;
  const late = (view.result as { late_result?: { status: string; reported_at: string } } | null)?.late_result;
  if (!waiting && !offline && !late) return null;
  return (
    <div class="stack" data-testid="operation-fleet-notes">
      {waiting && (
        <p class="notice" role="status" data-testid="operation-waiting">
          <strong>Waiting for a board:</strong> {waiting.reason}
          {waiting.gives_up_at && (
            <>
              {' '}
              Gives up at <time dateTime={waiting.gives_up_at}>{formatTime(waiting.gives_up_at)}</time>.
            </>
          )}
        </p>
      )}
      {offline && (
        <p class="notice warn" role="status" data-testid="board-offline">
          <strong>Board offline since <time dateTime={offline}>{formatTime(offline)}</time>.</strong> The operation fails (board_lost) if the board does not come back in time.
        </p>
      )}
      {late && (
        <p class="small muted" data-testid="late-result">
          The board reported “{late.status}” later ({formatTime(late.reported_at)}); kept as a note, the status stays.
        </p>
      )}
    </div>
  );
}
