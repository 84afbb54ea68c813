import type { Board } from '../api/client.ts';
import { userLabels } from '../lib/fleet-fields.ts';
import { formatLabels } from '@mm/api-client';
import { newCheckHref } from '../lib/health-verdict.ts';
import { isAdmin } from '../lib/session.ts';
import { Link } from './link.tsx';

/**
 * "Run health checks now" on a board no check matches (409 `no_health_check`): what that means
 * and what to do, a check whose labels match this board, with the form opened for its labels.
 */
export function NoHealthCheck({ board, onDismiss }: { board: Board; onDismiss: () => void }) {
  const labels = userLabels(board.labels);
  const pairs = formatLabels(labels);
  return (
    <div class="notice small" role="status" data-testid="no-health-check">
      <p>
        <strong>No health check matches this board</strong>, so there is nothing to run on it. A health check runs on the boards whose labels hold all of its
        labels{pairs ? <> (this board has {pairs})</> : ' (this board has none of its own: a check with no labels runs on every board)'}.
      </p>
      <p>
        {isAdmin.value ? (
          <>
            <Link href={newCheckHref(labels)}>Create a health check for this board</Link> (its labels filled in), or change an existing one on the{' '}
            <Link href="/health-checks">Health checks</Link> page.
          </>
        ) : (
          'An administrator creates one on the Health checks page, with labels this board carries.'
        )}{' '}
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      </p>
    </div>
  );
}
