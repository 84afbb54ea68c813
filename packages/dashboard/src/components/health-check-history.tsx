import { client, unwrap, type Board } from '../api/client.ts';
import { ago, formatTime } from '../lib/format.ts';
import { beforeChange, runMetrics, runVerdict, type HealthCheck } from '../lib/health-verdict.ts';
import { useResource } from '../lib/use-resource.ts';
import { ErrorBox } from './error-box.tsx';
import { Link } from './link.tsx';
import { StatusBadge } from './status-badge.tsx';
import { DataTable } from './table-box.tsx';

const SHOWN = 50;

/**
 * A health check's latest runs, newest first: on which board, and whether each passed (it
 * succeeded and its metrics were within the check's bounds) or why it failed. `refresh`
 * changes when a run was just started here, so the list is asked again at once.
 */
export function HealthCheckHistory({ check, boards, refresh }: { check: HealthCheck; boards: Board[] | null; refresh: number }) {
  const runs = useResource(() => unwrap(client.GET('/api/operations/', { params: { query: { health_check_id: check.id, limit: SHOWN } } })), [check.id, refresh], {
    pollMs: 5000,
  });
  const names = new Map((boards ?? []).map((b) => [b.id, b.name]));
  const ops = runs.data?.operations;
  return (
    <section class="stack" aria-labelledby="check-history-title">
      <h2 id="check-history-title">Its runs</h2>
      <ErrorBox error={runs.error} />
      {ops && ops.length === 0 && (
        <p class="muted" data-testid="check-history-empty">
          It has not run yet. It runs on every matching board when due, or now with “Run now”.
        </p>
      )}
      {ops && ops.length > 0 && (
        <DataTable
          label="Runs of this check"
          columns={['Run', 'Board', 'Result', 'Finished']}
          caption={runs.data!.total > ops.length ? `The latest ${ops.length} of ${runs.data!.total} runs.` : undefined}
        >
          {ops.map((op) => {
            const v = runVerdict(op, check.expect);
            const old = beforeChange(op, check);
            // The figures the check bounds, as the run reported them (fps 30.1).
            const figures = Object.keys(check.expect.metrics ?? {})
              .map((name) => [name, runMetrics(op)[name]] as const)
              .filter(([, value]) => typeof value === 'number')
              .map(([name, value]) => `${name} ${Number(value).toLocaleString(undefined, { maximumFractionDigits: 3 })}`)
              .join(', ');
            return (
              <tr key={op.id} data-testid={`check-run-${op.id}`}>
                <td>
                  <Link href={`/operations/${op.id}`}>#{op.id}</Link>
                </td>
                <td>{op.board_id ? <Link href={`/boards/${op.board_id}`}>{names.get(op.board_id) ?? op.board_id.slice(0, 8)}</Link> : '—'}</td>
                <td class="verdict">
                  {v === null ? (
                    <StatusBadge status={op.status} />
                  ) : old && op.status === 'succeeded' ? (
                    // Judged by bounds this page no longer knows: the figures, not a verdict.
                    <>
                      <span class="badge badge-cancelled">ran</span> <span class="small">{figures && `${figures} · `}before the check last changed</span>
                    </>
                  ) : v.pass ? (
                    <>
                      <span class="badge badge-succeeded">passed</span> {figures && <span class="small">{figures}</span>}
                    </>
                  ) : (
                    <>
                      <span class="badge badge-failed">failed</span> <span class="small">{v.reason}</span>
                    </>
                  )}
                </td>
                <td class="nowrap" title={formatTime(op.finished_at ?? op.created_at)}>
                  {op.finished_at ? ago(op.finished_at) : `asked ${ago(op.created_at)}`}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
