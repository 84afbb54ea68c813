import { useState } from 'preact/hooks';
import { client, unwrap, type Board, type Operation } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { ConfirmButton } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { HealthCheckForm } from '../components/health-check-form.tsx';
import { HealthCheckHistory } from '../components/health-check-history.tsx';
import { LabelChips } from '../components/label-chips.tsx';
import { Link } from '../components/link.tsx';
import { checkSelector } from '../components/selector-hint.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ago, formatTime, plural } from '../lib/format.ts';
import { beforeChange, expectText, intervalText, runVerdict, type HealthCheck } from '../lib/health-verdict.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { useResource } from '../lib/use-resource.ts';

/** `?new=1&label=site=lab-1&label=…`: the form opened with these labels (a board page's "create a check for this board"). */
function newCheckFromQuery(query: string): Partial<HealthCheck> | null {
  const sp = new URLSearchParams(query);
  if (sp.get('new') !== '1') return null;
  const selector: Record<string, string> = {};
  for (const pair of sp.getAll('label')) {
    const at = pair.indexOf('=');
    if (at > 0) selector[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { board_selector: selector };
}

/** Runs a check now; says on which boards it started, or why it could not. */
function RunNow({ check, boards, onStarted }: { check: HealthCheck; boards: Board[] | null; onStarted?: () => void }) {
  const [runs, setRuns] = useState<Operation[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const names = new Map((boards ?? []).map((b) => [b.id, b.name]));
  return (
    <>
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          setRuns(null);
          try {
            setRuns((await unwrap(client.POST('/api/health-checks/{id}/run/', { params: { path: { id: check.id } } }))).runs);
            onStarted?.();
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        Run now <span class="visually-hidden">{check.name}</span>
      </button>
      {runs && (
        <span class="small ok" role="status" data-testid={`check-started-${check.id}`}>
          Started {plural(runs.length, 'run')}:{' '}
          {runs.map((op, i) => (
            <span key={op.id}>
              {i > 0 && ', '}
              <Link href={`/operations/${op.id}`}>#{op.id}</Link> on {(op.board_id && names.get(op.board_id)) ?? 'a board'}
            </span>
          ))}
        </span>
      )}
      {error !== null && (
        <div class="basis-full">
          <ErrorBox error={error} onDismiss={() => setError(null)} />
        </div>
      )}
    </>
  );
}

function DeleteCheck({ check, onDeleted }: { check: HealthCheck; onDeleted: () => void }) {
  return (
    <ConfirmButton
      label={
        <>
          Delete <span class="visually-hidden">{check.name}</span>
        </>
      }
      question={`Delete the health check “${check.name}”? It stops running; its past runs stay as operations, and boards keep the health it last gave them.`}
      yes="Yes, delete"
      action={async () => {
        await unwrap(client.DELETE('/api/health-checks/{id}/', { params: { path: { id: check.id } } }));
        onDeleted();
      }}
    />
  );
}

/** The boards a check's selector picks: its chips and how many match now. */
function CheckBoards({ check, boards }: { check: HealthCheck; boards: Board[] | null }) {
  const n = boards ? checkSelector(check.board_selector, boards).matching.length : null;
  return (
    <>
      {Object.keys(check.board_selector).length === 0 ? <span>every board</span> : <LabelChips labels={check.board_selector} />}
      {n !== null && <div class={`small ${n === 0 ? 'error-text' : 'muted'}`}>{n === 0 ? 'no board matches now' : `${plural(n, 'board')} ${n === 1 ? 'matches' : 'match'} now`}</div>}
    </>
  );
}

/** What a check runs, where, how often, what passes, and (in the list) how its latest run went. */
function CheckFacts({ check, boards, invocationName, lastRun }: { check: HealthCheck; boards: Board[] | null; invocationName?: string | undefined; lastRun?: Operation | null }) {
  // A run from before the check changed is not judged by today's bounds (see runVerdict).
  const v = lastRun && !(beforeChange(lastRun, check) && lastRun.status === 'succeeded') ? runVerdict(lastRun, check.expect) : null;
  return (
    <dl class="facts" data-testid="check-facts">
      <dt>Runs</dt>
      <dd>
        <Link href={`/invocations/${check.invocation_id}`}>{invocationName ?? `invocation #${check.invocation_id}`}</Link>
        {invocationName && <span class="muted small"> #{check.invocation_id}</span>}
      </dd>
      <dt>On boards</dt>
      <dd>
        <CheckBoards check={check} boards={boards} />
      </dd>
      <dt>Every</dt>
      <dd>{intervalText(check.interval_s)}</dd>
      <dt>Passes when</dt>
      <dd>{expectText(check.expect)}</dd>
      {lastRun !== undefined && (
        <>
          <dt>Last run</dt>
          <dd data-testid="check-last-run">
            {!lastRun ? (
              <span class="muted">none yet</span>
            ) : (
              <>
                {v === null ? <StatusBadge status={lastRun.status} /> : <span class={`badge ${v.pass ? 'badge-succeeded' : 'badge-failed'}`}>{v.pass ? 'passed' : 'failed'}</span>}{' '}
                <Link href={`/operations/${lastRun.id}`}>#{lastRun.id}</Link>
                {lastRun.board_id && <> on {boards?.find((b) => b.id === lastRun.board_id)?.name ?? 'a board'}</>}
                <span class="muted small"> {ago(lastRun.finished_at ?? lastRun.created_at)}</span>
                {v && !v.pass && <div class="small">{v.reason}</div>}
              </>
            )}
          </dd>
        </>
      )}
    </dl>
  );
}

/** Admins: the health checks (docs/fleet.md, "Health checks"): list, create, edit, delete, run now. */
export function HealthChecksPage() {
  const list = useResource(() => unwrap(client.GET('/api/health-checks/', { params: { query: { limit: 1000 } } })), [], { pollMs: 15_000 });
  const { boards } = useBoards(15_000);
  const asked = newCheckFromQuery(currentQuery.value);
  const [creating, setCreating] = useState<Partial<HealthCheck> | null>(asked);
  const checks = list.data?.health_checks;
  // The checks' latest runs (one request: health-check runs, newest first) and the invocations'
  // names (the latest 200; an older one is named by its number).
  const runs = useResource(() => unwrap(client.GET('/api/operations/', { params: { query: { health_checks: '1', limit: 500 } } })), [], { pollMs: 15_000 });
  const invocations = useResource(() => unwrap(client.GET('/api/invocations/', { params: { query: { limit: 200 } } })), []);
  const names = new Map((invocations.data?.invocations ?? []).map((i) => [i.id, i.name]));
  const lastRuns = new Map<number, Operation>();
  for (const op of runs.data?.operations ?? []) if (op.health_check_id !== null && !lastRuns.has(op.health_check_id)) lastRuns.set(op.health_check_id, op);
  return (
    <section aria-labelledby="checks-title" class="stack">
      <div class="page-head">
        <h1 id="checks-title">Health checks</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => setCreating({})}>
            New health check
          </button>
        )}
      </div>
      <p class="muted">
        A health check runs one invocation on every board whose labels match, every interval, ahead of other waiting work. A run that fails, or whose metrics fall outside the
        bounds, makes the board <strong>bad</strong>: it then takes no work sent by labels until a run passes again.
      </p>
      {creating && (
        <HealthCheckForm
          initial={creating}
          boards={boards}
          title="New health check"
          submitLabel="Create health check"
          onSaved={(c) => {
            setCreating(null);
            list.reload();
            navigate(`/health-checks/${c.id}`);
          }}
          onCancel={() => {
            setCreating(null);
            if (asked) navigate('/health-checks', true);
          }}
        />
      )}
      <ErrorBox error={list.error} />
      {checks && checks.length === 0 && !creating && (
        <p data-testid="no-health-checks">No health check yet. Create one with “New health check”: choose an invocation that exercises the board, the boards’ labels and how often.</p>
      )}
      {checks && checks.length > 0 && (
        <ul class="plain stack" aria-label="Health checks">
          {checks.map((c) => (
            <li key={c.id} class="card stack check-card" data-testid={`check-${c.name}`}>
              <div class="row wrap check-head">
                <h2 class="form-title">
                  <Link href={`/health-checks/${c.id}`}>{c.name}</Link>
                </h2>
                <div class="row wrap push-right">
                  <RunNow check={c} boards={boards} onStarted={runs.reload} />
                  <Link class="button" href={`/health-checks/${c.id}?edit=1`}>
                    Edit <span class="visually-hidden">{c.name}</span>
                  </Link>
                  <DeleteCheck check={c} onDeleted={list.reload} />
                </div>
              </div>
              <CheckFacts check={c} boards={boards} invocationName={names.get(c.invocation_id)} lastRun={runs.data ? (lastRuns.get(c.id) ?? null) : undefined} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One health check: what it runs, where and how often, its actions, and the history of its runs. */
export function HealthCheckPage({ id }: { id: number }) {
  const res = useResource(() => unwrap(client.GET('/api/health-checks/{id}/', { params: { path: { id } } })), [id]);
  const { boards } = useBoards(15_000);
  const [editing, setEditing] = useState(() => new URLSearchParams(currentQuery.value).get('edit') === '1');
  const [started, setStarted] = useState(0);
  const check = res.data;
  const invocation = useResource(
    () => (check ? unwrap(client.GET('/api/invocations/{id}/', { params: { path: { id: check.invocation_id } } })) : Promise.resolve(null)),
    [check?.invocation_id],
  );
  if (res.error && !check) return <ErrorBox error={res.error} />;
  if (!check) return <p aria-busy="true">Loading…</p>;
  return (
    <section aria-labelledby="check-title" class="stack">
      <p>
        <Link href="/health-checks">← Health checks</Link>
      </p>
      <div class="page-head">
        <h1 id="check-title">{check.name}</h1>
        <div class="row wrap">
          <RunNow check={check} boards={boards} onStarted={() => setStarted((n) => n + 1)} />
          {!editing && (
            <button type="button" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          <DeleteCheck check={check} onDeleted={() => navigate('/health-checks')} />
        </div>
      </div>
      {editing ? (
        <HealthCheckForm
          initial={check}
          boards={boards}
          title={`Edit ${check.name}`}
          submitLabel="Save changes"
          onSaved={(c) => {
            res.set(c);
            setEditing(false);
            navigate(`/health-checks/${c.id}`, true);
          }}
          onCancel={() => {
            setEditing(false);
            navigate(`/health-checks/${check.id}`, true);
          }}
        />
      ) : (
        <>
          <CheckFacts check={check} boards={boards} invocationName={invocation.data?.name} />
          <p class="muted small">
            Changed {formatTime(check.updated_at)} (created {formatTime(check.created_at)})
          </p>
        </>
      )}
      <HealthCheckHistory check={check} boards={boards} refresh={started} />
    </section>
  );
}
