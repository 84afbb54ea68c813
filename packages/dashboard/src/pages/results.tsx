import { client, unwrap, type Schemas } from '../api/client.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { DataTable } from '../components/table-box.tsx';
import { formatChangePercent } from '@mm/api-client';
import { ago, formatMetric, formatTime, metricLabel } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { useResource } from '../lib/use-resource.ts';

type Comparison = Schemas['Comparison'];
type Verdict = Schemas['Verdict'];

const VERDICT_TEXT: Record<Verdict, string> = { regressed: 'Regressed', improved: 'Improved', unchanged: 'Unchanged', inconclusive: 'Inconclusive' };

export function VerdictBadge({ verdict }: { verdict: Verdict }) {
  return <span class={`badge verdict verdict-${verdict}`}>{VERDICT_TEXT[verdict]}</span>;
}

/** `?baseline=NAME&operations=1,2` or `&rollout=7`: what the comparison page compares. */
export function comparisonRequest(query: string): Schemas['ComparisonRequest'] | null {
  const q = new URLSearchParams(query);
  const baseline = q.get('baseline');
  if (!baseline) return null;
  const rollout = Number(q.get('rollout'));
  if (Number.isInteger(rollout) && rollout > 0) return { baseline, rollout_id: rollout };
  const ops = (q.get('operations') ?? '')
    .split(/[\s,]+/)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  return ops.length ? { baseline, operation_ids: ops } : null;
}

/** Baselines, and a form to compare runs against one (docs/results.md). */
export function BaselinesPage() {
  const list = useResource(() => unwrap(client.GET('/api/baselines/', { params: { query: { limit: 200 } } })), [], { pollMs: 30_000 });
  const baselines = list.data?.baselines ?? [];
  return (
    <section aria-labelledby="baselines-title" class="stack">
      <h1 id="baselines-title">Baselines</h1>
      <p class="muted">Named sets of runs. Compare new runs (operations or a rollout) with one: each metric on each board gets a verdict from its 95 % interval.</p>
      <form
        class="card stack"
        aria-label="Compare with a baseline"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const target = String(f.get('target') ?? '').trim();
          const rollout = /^(?:rollout[:/]|r)(\d+)$/i.exec(target)?.[1];
          const q = new URLSearchParams({ baseline: String(f.get('baseline')) });
          if (rollout) q.set('rollout', rollout);
          else q.set('operations', target);
          navigate(`/compare?${q.toString()}`);
        }}
      >
        <label>
          Baseline{' '}
          <select name="baseline" required>
            {baselines.map((b) => (
              <option key={b.id} value={b.name}>
                {b.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operations (ids) or rollout (<code>rollout:7</code>) <input name="target" required placeholder="41, 42 or rollout:7" />
        </label>
        <button type="submit">Compare</button>
      </form>
      {list.error != null && <ErrorBox error={list.error} />}
      <DataTable label="Baselines" columns={['Name', 'Invocation', 'Runs', 'Boards', 'Created']}>
        {baselines.map((b) => (
          <tr key={b.id}>
            <td>{b.name}</td>
            <td>{b.invocation_id !== null ? <Link href={`/invocations/${b.invocation_id}`}>#{b.invocation_id}</Link> : '—'}</td>
            <td>{b.runs.length}</td>
            <td>{Object.keys(b.summary_by_board).length}</td>
            <td title={formatTime(b.created_at)}>{ago(b.created_at)}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

function interval(metric: string, ci: readonly [number, number]): string {
  return `${formatMetric(metric, ci[0])} – ${formatMetric(metric, ci[1])}`;
}

/** A comparison: metric × board with coloured verdicts, and what differs between the two results. */
export function ComparisonPage() {
  const req = comparisonRequest(currentQuery.value);
  const key = JSON.stringify(req);
  const res = useResource<Comparison | null>(() => (req ? unwrap(client.POST('/api/comparisons/', { body: req })) : Promise.resolve(null)), [key]);
  if (!req) {
    return (
      <section class="stack">
        <h1>Comparison</h1>
        <p>
          Choose a baseline and runs on the <Link href="/baselines">Baselines</Link> page.
        </p>
      </section>
    );
  }
  const c = res.data;
  const boards = c ? [...new Set(c.metrics.flatMap((m) => m.boards.map((b) => b.board_id)))] : [];
  return (
    <section aria-labelledby="comparison-title" class="stack">
      <h1 id="comparison-title">
        Comparison with <code>{String(req.baseline)}</code> {c && <VerdictBadge verdict={c.verdict} />}
      </h1>
      {res.error != null && <ErrorBox error={res.error} />}
      {c && (
        <>
          <p class="muted">
            {c.rollout_id !== null ? (
              <>
                Rollout <Link href={`/rollouts/${c.rollout_id}`}>#{c.rollout_id}</Link>:{' '}
              </>
            ) : null}
            operations{' '}
            {c.operation_ids.map((id, i) => (
              <span key={id}>
                {i > 0 && ', '}
                <Link href={`/operations/${id}`}>#{id}</Link>
              </span>
            ))}
            . A metric regresses when it is worse beyond its interval on at least two boards (or the only one).
          </p>
          <DataTable label="Verdicts by metric and board" columns={['Metric', ...boards.map((b) => `Board ${b.slice(0, 8)}`), 'Overall']}>
            {c.metrics.map((m) => (
              <tr key={m.metric}>
                <th scope="row">
                  {metricLabel(m.metric)}
                  <div class="muted small">
                    {m.better} is better · threshold {m.threshold_pct} %
                  </div>
                </th>
                {boards.map((board) => {
                  const b = m.boards.find((x) => x.board_id === board);
                  if (!b) return <td key={board}>—</td>;
                  return (
                    <td key={board} class={`verdict-cell verdict-cell-${b.verdict}`}>
                      <VerdictBadge verdict={b.verdict} />
                      <div>
                        <strong>{formatChangePercent(b.change_pct)}</strong>
                        {b.ci95_pct && (
                          <span class="muted small">
                            {' '}
                            [{formatChangePercent(b.ci95_pct[0])}, {formatChangePercent(b.ci95_pct[1])}]
                          </span>
                        )}
                      </div>
                      <div class="muted small">
                        {formatMetric(m.metric, b.baseline.median)} → {formatMetric(m.metric, b.current.median)} (n {b.n.baseline}/{b.n.current})
                      </div>
                      <div class="muted small" title="95 % intervals of the medians">
                        {interval(m.metric, b.baseline.ci95)} → {interval(m.metric, b.current.ci95)}
                      </div>
                    </td>
                  );
                })}
                <td>
                  <VerdictBadge verdict={m.verdict} />
                </td>
              </tr>
            ))}
          </DataTable>
          {c.skipped_metrics.length > 0 && <p class="muted small">Not compared (which way is better is unknown): {c.skipped_metrics.join(', ')}</p>}
          <h2>What differs</h2>
          {Object.keys(c.differs).length === 0 ? (
            <p class="muted">Nothing: same files, board models, PAC, app, DPU, agent and runner.</p>
          ) : (
            <DataTable label="What differs" columns={['Field', 'Baseline', 'Current']} stacked>
              {Object.entries(c.differs).map(([field, [b, cur]]) => (
                <tr key={field}>
                  <th scope="row">
                    <code>{field}</code>
                  </th>
                  <td class="mono small" data-label="Baseline">
                    {JSON.stringify(b)}
                  </td>
                  <td class="mono small" data-label="Current">
                    {JSON.stringify(cur)}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
    </section>
  );
}
