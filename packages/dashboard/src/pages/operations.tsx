import { useEffect, useState } from 'preact/hooks';
import { api, client, unwrap, type Operation } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { OperationLive } from '../components/operation-live.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { formatTime } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { canOperate } from '../lib/session.ts';

const KINDS = ['transfer', 'execute', 'pac_query', 'pac_activate', 'pac_install', 'script_deploy'];
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const PAGE = 50;

export function OperationsPage() {
  const sp = new URLSearchParams(currentQuery.value);
  const filters = { kind: sp.get('kind') ?? '', status: sp.get('status') ?? '', board_id: sp.get('board_id') ?? '', invocation_id: sp.get('invocation_id') ?? '' };
  const page = Number(sp.get('page') ?? '0') || 0;
  const [data, setData] = useState<{ operations: Operation[]; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { boards } = useBoards();

  useEffect(() => {
    let stale = false;
    const load = () => {
      const query: Record<string, string | number> = { limit: PAGE, offset: page * PAGE };
      for (const [k, v] of Object.entries(filters)) if (v) query[k] = v;
      api<{ operations: Operation[]; total: number }>(`/api/operations/?${new URLSearchParams(query as Record<string, string>)}`)
        .then((d) => !stale && (setData(d), setError(null)))
        .catch((e) => !stale && setError(e));
    };
    load();
    const t = setInterval(() => document.visibilityState === 'visible' && load(), 5000);
    return () => {
      stale = true;
      clearInterval(t);
    };
  }, [currentQuery.value]);

  function set(key: string, value: string) {
    const next = new URLSearchParams(currentQuery.value);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== 'page') next.delete('page');
    navigate(`/operations${next.size ? `?${next}` : ''}`, true);
  }

  const pages = data ? Math.max(1, Math.ceil(data.total / PAGE)) : 1;
  return (
    <section aria-labelledby="ops-title" class="stack">
      <h1 id="ops-title">Operations</h1>
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
        <label>
          Board
          <select value={filters.board_id} onChange={(e) => set('board_id', (e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {boards?.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Invocation id
          <input inputMode="numeric" size={6} value={filters.invocation_id} onChange={(e) => set('invocation_id', (e.target as HTMLInputElement).value.trim())} />
        </label>
      </form>
      <ErrorBox error={error} />
      {data && (
        <>
          <p class="muted">{data.total} operations</p>
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Invocation</th>
                <th scope="col">Board</th>
                <th scope="col">Created</th>
                <th scope="col">Finished</th>
              </tr>
            </thead>
            <tbody>
              {data.operations.map((o) => (
                <tr key={o.id}>
                  <td>
                    <Link href={`/operations/${o.id}`}>#{o.id}</Link>
                  </td>
                  <td>{o.kind}</td>
                  <td>
                    <StatusBadge status={o.status} />
                  </td>
                  <td>{o.invocation_id ? <Link href={`/invocations/${o.invocation_id}`}>#{o.invocation_id}</Link> : '—'}</td>
                  <td>{boards?.find((b) => b.id === o.board_id)?.name ?? (o.board_id ? o.board_id.slice(0, 8) : '—')}</td>
                  <td>{formatTime(o.created_at)}</td>
                  <td>{formatTime(o.finished_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="pager" aria-label="Pages">
            <button type="button" disabled={page === 0} onClick={() => set('page', String(page - 1))}>
              Previous
            </button>
            <span>
              Page {page + 1} of {pages}
            </span>
            <button type="button" disabled={page + 1 >= pages} onClick={() => set('page', String(page + 1))}>
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}

export function OperationPage({ id }: { id: number }) {
  const [op, setOp] = useState<Operation | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    unwrap(client.GET('/api/operations/{id}/', { params: { path: { id } } }))
      .then(setOp)
      .catch(setError);
  }, [id]);
  if (error && !op) return <ErrorBox error={error} />;
  if (!op) return <p aria-busy="true">Loading…</p>;
  const ended = op.status === 'succeeded' || op.status === 'failed' || op.status === 'cancelled';
  return (
    <section aria-labelledby="op-title" class="stack">
      <p>
        <Link href="/operations">← Operations</Link>
      </p>
      <div class="page-head">
        <h1 id="op-title">
          Operation #{op.id} <span class="muted">{op.kind}</span>
        </h1>
        {canOperate.value && !ended && (
          <button
            type="button"
            class="danger"
            onClick={async () => {
              try {
                setOp(await unwrap(client.POST('/api/operations/{id}/cancel/', { params: { path: { id } } })));
              } catch (err) {
                setError(err);
              }
            }}
          >
            Cancel operation
          </button>
        )}
      </div>
      <ErrorBox error={error} />
      <dl class="facts">
        <dt>Invocation</dt>
        <dd>{op.invocation_id ? <Link href={`/invocations/${op.invocation_id}`}>#{op.invocation_id}</Link> : '—'}</dd>
        <dt>Board</dt>
        <dd>{op.board_id ? <Link href={`/boards/${op.board_id}`}>{op.board_id}</Link> : '—'}</dd>
        {op.result !== undefined && op.result !== null && (
          <>
            <dt>Result</dt>
            <dd>
              <code class="small">{JSON.stringify(op.result)}</code>
            </dd>
          </>
        )}
      </dl>
      <OperationLive key={op.id} operation={op} onEnd={setOp} />
    </section>
  );
}
