import { client, unwrap, type Operation } from '../api/client.ts';
import { useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { OperationLive } from '../components/operation-live.tsx';
import { OperationBoard, OperationsTable } from '../components/operations-table.tsx';
import { OperationResult } from '../components/operation-result.tsx';
import { runDuration } from '../lib/run-result.ts';
import { Elapsed } from '../components/elapsed.tsx';
import { Pager } from '../components/pager.tsx';
import { plural } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { useResource } from '../lib/use-resource.ts';

const KINDS = ['transfer', 'execute', 'pac_query', 'pac_activate', 'pac_install', 'script_deploy', 'app_query', 'app_load', 'app_unload', 'app_install'];
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const PAGE = 50;

export function OperationsPage() {
  const sp = new URLSearchParams(currentQuery.value);
  const filters = { kind: sp.get('kind') ?? '', status: sp.get('status') ?? '', board_id: sp.get('board_id') ?? '', invocation_id: sp.get('invocation_id') ?? '' };
  const page = Number(sp.get('page') ?? '0') || 0;
  const { boards } = useBoards();
  const ops = useResource(
    () => {
      const query = {
        limit: PAGE,
        offset: page * PAGE,
        ...(filters.kind ? { kind: filters.kind } : {}),
        ...(filters.status ? { status: filters.status as Operation['status'] } : {}),
        ...(filters.board_id ? { board_id: filters.board_id } : {}),
        ...(filters.invocation_id ? { invocation_id: Number(filters.invocation_id) } : {}),
      };
      return unwrap(client.GET('/api/operations/', { params: { query } }));
    },
    [currentQuery.value],
    { pollMs: 5000 },
  );
  const data = ops.data;

  function set(key: string, value: string) {
    const next = new URLSearchParams(currentQuery.value);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== 'page') next.delete('page');
    navigate(`/operations${next.size ? `?${next}` : ''}`, true);
  }

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
      <ErrorBox error={ops.error} />
      {data && (
        <>
          <p class="muted">{plural(data.total, 'operation')}</p>
          {data.operations.length === 0 ? (
            <p>No operation matches. Operations appear here when files are transferred, an invocation is executed or a PAC is queried, activated or installed.</p>
          ) : (
            <OperationsTable operations={data.operations} boards={boards} showInvocation />
          )}
          <Pager page={page} total={data.total} pageSize={PAGE} onPage={(p) => set('page', String(p))} />
        </>
      )}
    </section>
  );
}

export function OperationPage({ id }: { id: number }) {
  const { data: op, error, set: setOp } = useResource(() => unwrap(client.GET('/api/operations/{id}/', { params: { path: { id } } })), [id]);
  const { boards } = useBoards();
  if (error && !op) return <ErrorBox error={error} />;
  if (!op) return <p aria-busy="true">Loading…</p>;
  const took = runDuration(op);
  return (
    <section aria-labelledby="op-title" class="stack">
      <p>
        <Link href="/operations">← Operations</Link>
      </p>
      <h1 id="op-title">
        Operation #{op.id} <span class="muted">{op.kind}</span>
      </h1>
      <ErrorBox error={error} />
      <dl class="facts">
        <dt>Invocation</dt>
        <dd>{op.invocation_id ? <Link href={`/invocations/${op.invocation_id}`}>#{op.invocation_id}</Link> : '—'}</dd>
        <dt>Board</dt>
        <dd data-testid="operation-board">
          <OperationBoard op={op} boards={boards} />
        </dd>
        {took && (
          <>
            <dt>{op.finished_at ? 'Took' : 'Time'}</dt>
            <dd>
              <Elapsed op={op} tookWord="" />
            </dd>
          </>
        )}
        {op.created_by && (
          <>
            <dt>Started by</dt>
            <dd>{op.created_by}</dd>
          </>
        )}
      </dl>
      {/* Ended: what it produced first, then its log; under way: the live view first. */}
      {op.finished_at && <OperationResult op={op} />}
      <OperationLive key={op.id} operation={op} onEnd={setOp} />
      {!op.finished_at && <OperationResult op={op} />}
    </section>
  );
}
