import { ConfirmButton } from '../components/confirm.tsx';
import { useEffect, useState } from 'preact/hooks';
import { client, unwrap, type Schemas } from '../api/client.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { RolloutScript } from '../components/rollout-script.tsx';
import { MetricBars, type MetricBar } from '../components/metric-bars.tsx';
import { Pager } from '../components/pager.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { RunOnBoards } from '../components/run-on-boards.tsx';
import { DataTable } from '../components/table-box.tsx';
import { formatBytes, formatMetric, formatTime, metricLabel, plural } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { canOperate, isAdmin } from '../lib/session.ts';
import { followEvents } from '../lib/sse.ts';
import { useResource } from '../lib/use-resource.ts';

type Rollout = Schemas['Rollout'];
type RolloutBoard = Rollout['boards'][number];

const STATUSES = ['running', 'paused', 'succeeded', 'failed', 'aborted', 'cancelled'];
const KINDS = ['execute', 'pac_install', 'pac_activate', 'script_deploy', 'agent_update', 'app_install', 'app_load'];
const PAGE = 50;

/** A step's time, in seconds down the whole column (the boards' times compare at a glance). */
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function progressText(r: Rollout): string {
  const ended = r.counts.succeeded + r.counts.failed + r.counts.cancelled + r.counts.skipped;
  return `${ended}/${r.boards.length} ended · ${r.counts.succeeded} succeeded · ${r.counts.failed} failed${r.counts.skipped ? ` · ${r.counts.skipped} skipped` : ''}`;
}

function selectorText(s: Record<string, string>): string {
  const pairs = Object.entries(s).map(([k, v]) => `${k}=${v}`);
  return pairs.length ? pairs.join(', ') : 'every board';
}

export function RolloutsPage() {
  const sp = new URLSearchParams(currentQuery.value);
  const filters = { kind: sp.get('kind') ?? '', status: sp.get('status') ?? '' };
  const page = Number(sp.get('page') ?? '0') || 0;
  const list = useResource(
    () =>
      unwrap(
        client.GET('/api/rollouts/', {
          params: { query: { limit: PAGE, offset: page * PAGE, ...(filters.kind ? { kind: filters.kind } : {}), ...(filters.status ? { status: filters.status as Rollout['status'] } : {}) } },
        }),
      ),
    [currentQuery.value],
    { pollMs: 5000 },
  );
  function set(key: string, value: string) {
    const next = new URLSearchParams(currentQuery.value);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== 'page') next.delete('page');
    navigate(`/rollouts${next.size ? `?${next}` : ''}`, true);
  }
  const data = list.data;
  return (
    <section aria-labelledby="rollouts-title" class="stack">
      <h1 id="rollouts-title">Rollouts</h1>
      <p class="muted small">One run or one change across many boards, in phases that stop by themselves when too many boards fail.</p>
      <div>
        <RunOnBoards kind="pac_install" label="Roll out a PAC archive…" />
      </div>
      <form class="row wrap filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Kind
          <select value={filters.kind} onChange={(e) => set('kind', (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={filters.status} onChange={(e) => set('status', (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {STATUSES.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={list.error} />
      {data && (
        <>
          <p class="muted">{plural(data.total, 'rollout')}</p>
          {data.rollouts.length === 0 ? (
            <p>No rollout yet. Start one with “Run on boards…” on an invocation's page, or <code>mm run --all</code>.</p>
          ) : (
            <DataTable label="Rollouts list" columns={['#', 'Kind', 'Status', 'Boards', 'Selector', 'Created']}>
              {data.rollouts.map((r) => (
                <tr key={r.id}>
                  <td>
                    <Link href={`/rollouts/${r.id}`}>#{r.id}</Link>
                  </td>
                  <td>{r.kind}</td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>{progressText(r)}</td>
                  <td class="small">{selectorText(r.board_selector)}</td>
                  <td class="small">{formatTime(r.created_at)}</td>
                </tr>
              ))}
            </DataTable>
          )}
          <Pager page={page} total={data.total} pageSize={PAGE} onPage={(p) => set('page', String(p))} />
        </>
      )}
    </section>
  );
}

/** The rollout, kept live by its event stream. */
function useLiveRollout(id: number) {
  const first = useResource(() => unwrap(client.GET('/api/rollouts/{id}/', { params: { path: { id } } })), [id]);
  const [live, setLive] = useState<Rollout | null>(null);
  const [connected, setConnected] = useState(true);
  useEffect(() => {
    setLive(null);
    return followEvents(`/api/rollouts/${id}/events/`, {
      endEvent: 'end',
      onConnection: setConnected,
      onEvent(e) {
        if (e.event === 'status' || e.event === 'end') setLive(JSON.parse(e.data) as Rollout);
        else if (e.event === 'board') {
          const b = JSON.parse(e.data) as RolloutBoard & { counts: Rollout['counts'] };
          setLive((r) => {
            if (!r) return r;
            const { counts, ...board } = b;
            return { ...r, counts, boards: r.boards.map((x) => (x.board_id === board.board_id && x.phase === board.phase ? board : x)) };
          });
        }
      },
    });
  }, [id]);
  return { rollout: live ?? first.data, error: first.error, connected, set: setLive };
}

export function RolloutPage({ id }: { id: number }) {
  const { rollout: r, error, connected, set } = useLiveRollout(id);
  const [actionError, setActionError] = useState<unknown>(null);
  if (error && !r) return <ErrorBox error={error} />;
  if (!r) return <p aria-busy="true">Loading…</p>;
  const metricNames = [...new Set(r.boards.flatMap((b) => Object.keys(b.metrics ?? {})).filter((k) => k !== 'run_ms'))].sort();
  // A run time is a model's figure: a script deploy's step time is no benchmark to chart.
  const charts = [
    ...(r.kind === 'execute' && r.boards.some((b) => b.run_ms !== null) ? ['run_ms'] : []),
    ...metricNames,
  ];
  const valueOf = (b: RolloutBoard, name: string) => (name === 'run_ms' ? b.run_ms : (b.metrics?.[name] ?? null));
  // A failed step's run_ms is the time until it failed: shown as such, never as a measure.
  const timeOf = (b: RolloutBoard) => (b.run_ms === null ? '—' : b.status === 'failed' ? `failed after ${seconds(b.run_ms)}` : seconds(b.run_ms));
  const mayAct = r.kind === 'execute' ? canOperate.value : isAdmin.value;
  // A script deploy names its script by name (RolloutScript), not by its id among the parameters.
  const scriptId = r.kind === 'script_deploy' && typeof r.params.script_id === 'string' ? r.params.script_id : null;
  const params = scriptId ? Object.fromEntries(Object.entries(r.params).filter(([k]) => k !== 'script_id')) : r.params;
  const act = (what: 'pause' | 'resume' | 'cancel') => async () => {
    setActionError(null);
    try {
      const path = `/api/rollouts/{id}/${what}/` as const;
      set(await unwrap(client.POST(path, { params: { path: { id } } })));
    } catch (err) {
      setActionError(err);
    }
  };
  return (
    <section aria-labelledby="rollout-title" class="stack">
      <p>
        <Link href="/rollouts">← Rollouts</Link>
      </p>
      <div class="page-head">
        <h1 id="rollout-title">
          Rollout #{r.id} <span class="muted">{r.kind}</span> <StatusBadge status={r.status} />
        </h1>
        {mayAct && !r.finished_at && (
          <div class="row">
            {r.status === 'running' && (
              <button type="button" onClick={act('pause')}>
                Pause
              </button>
            )}
            {r.status === 'paused' && (
              <button type="button" class="primary" onClick={act('resume')}>
                Resume
              </button>
            )}
            {(r.status === 'running' || r.status === 'paused') && (
              <ConfirmButton
                label="Cancel"
                question={`Cancel rollout #${r.id} (${r.kind})? Boards not started are skipped and queued steps cancelled; what is done is not undone.`}
                yes="Yes, cancel it"
                action={async () => set(await unwrap(client.POST('/api/rollouts/{id}/cancel/', { params: { path: { id } } })))}
              />
            )}
          </div>
        )}
      </div>
      <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />
      {!connected && <p class="small muted">Live updates lost; reconnecting…</p>}
      <dl class="facts">
        <dt>Boards</dt>
        <dd data-testid="rollout-progress">{progressText(r)}</dd>
        <dt>Selector</dt>
        <dd>{selectorText(r.board_selector)}</dd>
        {(r.left_out ?? []).length > 0 && (
          <>
            <dt>Left out</dt>
            <dd data-testid="rollout-left-out">
              {(r.left_out ?? []).map((b, i) => (
                <span key={b.board_id}>
                  {i > 0 && ', '}
                  <Link href={`/boards/${b.board_id}`}>{b.board_name}</Link> <span class="muted">({b.reason === 'bad' ? 'health bad' : 'in maintenance'})</span>
                </span>
              ))}
            </dd>
          </>
        )}
        {r.invocation_id !== null && (
          <>
            <dt>Invocation</dt>
            <dd>
              <Link href={`/invocations/${r.invocation_id}`}>#{r.invocation_id}</Link>
            </dd>
          </>
        )}
        {scriptId && (
          <>
            <dt>Device script</dt>
            <dd>
              <RolloutScript scriptId={scriptId} />
            </dd>
          </>
        )}
        {Object.keys(params).length > 0 && (
          <>
            <dt>Parameters</dt>
            <dd>
              <ParamsList params={params} />
            </dd>
          </>
        )}
        <dt>Phases</dt>
        <dd>
          {r.batch_size ? `${plural(r.batch_size, 'board')} at a time${r.batch_interval_s ? `, ${r.batch_interval_s} s apart` : ''}` : 'every board at once'}
          {r.abort ? ` · stops when ${r.abort.failure_percent}% of at least ${r.abort.min_finished} finished failed` : ''}
        </dd>
        <dt>Created</dt>
        <dd>
          {formatTime(r.created_at)}
          {r.created_by ? ` by ${r.created_by}` : ''}
          {r.finished_at ? ` · finished ${formatTime(r.finished_at)}` : ''}
        </dd>
      </dl>
      <DataTable label="Boards of the rollout" columns={['Board', 'Phase', 'Status', 'Time', ...metricNames.map(metricLabel), 'Output']}>
        {r.boards.map((b) => (
          <tr key={`${b.board_id}-${b.phase}`} data-testid="rollout-board">
            <td class="nowrap">{b.board_id ? <Link href={`/boards/${b.board_id}`}>{b.board_name}</Link> : b.board_name}</td>
            <td>{b.phase + 1}</td>
            <td>
              {b.operation_id !== null ? <Link href={`/operations/${b.operation_id}`}><StatusBadge status={b.status} /></Link> : <StatusBadge status={b.status} />}
              {b.board_offline_since && (
                <span class="small warn" data-testid="step-board-offline">
                  {' '}
                  board offline since {formatTime(b.board_offline_since)}
                </span>
              )}
              {b.error && (b.status === 'failed' || b.status === 'cancelled') && (
                <div class="small step-error" data-testid="step-error">
                  {b.error.message} <span class="muted">({b.error.code})</span>
                </div>
              )}
            </td>
            <td class="nowrap">{timeOf(b)}</td>
            {metricNames.map((n) => (
              <td key={n} class="nowrap">
                {formatMetric(n, b.metrics?.[n])}
              </td>
            ))}
            <td>
              {r.kind === 'execute' && b.status === 'succeeded' && b.board_id ? (
                <a href={`/api/rollouts/${r.id}/boards/${b.board_id}/output/`} download data-testid="board-output" aria-label={`Output video of ${b.board_name}`}>
                  video
                </a>
              ) : (
                '—'
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      {charts.length > 0 && (
        <>
          <h2>By board</h2>
          <div class="row wrap charts">
            {charts.map((name) => (
              <MetricBars
                key={name}
                name={name}
                dropFailed={name === 'run_ms'}
                boards={r.boards.flatMap((b): MetricBar[] => {
                  const v = valueOf(b, name);
                  if (b.status === 'failed') return [{ board: b.board_name, value: v, failed: true }];
                  return v === null ? [] : [{ board: b.board_name, value: v }];
                })}
              />
            ))}
          </div>
        </>
      )}
    </section>
  );
}

/**
 * A rollout's params one per line (`filename ui_pac.tar.gz`), a sha256 cut to its first 12
 * digits with the whole in its title, sizes in bytes as sizes: one JSON line ran off narrow
 * screens and hid what mattered.
 */
function ParamsList(props: { params: Record<string, unknown> }) {
  const shown = (key: string, value: unknown): string => {
    if (typeof value === 'string' && /^[0-9a-f]{64}$/.test(value)) return `${value.slice(0, 12)}…`;
    if (key === 'size' && typeof value === 'number') return formatBytes(value);
    return typeof value === 'string' ? value : JSON.stringify(value);
  };
  return (
    <ul class="plain small" data-testid="rollout-params">
      {Object.entries(props.params).map(([k, v]) => (
        <li key={k}>
          <span class="muted">{k}</span> <code title={typeof v === 'string' ? v : undefined}>{shown(k, v)}</code>
        </li>
      ))}
    </ul>
  );
}
