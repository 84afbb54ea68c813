import type { Board } from '../api/client.ts';
import { ago } from '../lib/format.ts';
import { Link } from './link.tsx';

/**
 * The board's device scripts that sit `failed` (exited, waiting for their next restart), as
 * badges on the boards list: a webcam in a restart loop was invisible there (issue 39). Each
 * leads to the board page, where the script's output says why.
 */
export function ScriptFailures({ board }: { board: Board }) {
  const failed = board.scripts.filter((s) => s.state === 'failed');
  if (failed.length === 0) return null;
  return (
    <>
      {failed.map((s) => (
        <Link
          key={s.script_id}
          href={`/boards/${board.id}`}
          class="badge badge-script-failed"
          data-testid={`script-failed-${board.name}`}
          title={`${s.name} failed ${ago(s.since)}${s.restarts ? ` after ${s.restarts} restart${s.restarts === 1 ? '' : 's'}` : ''}: see its output on the board page`}
        >
          {s.name} failed{s.restarts ? ` ×${s.restarts}` : ''}
        </Link>
      ))}
    </>
  );
}
