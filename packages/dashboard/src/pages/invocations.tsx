import { useEffect, useRef, useState } from 'preact/hooks';
import { client, unwrap, type Invocation, type Operation } from '../api/client.ts';
import { LatestRun } from '../components/latest-run.tsx';
import { useBoards } from '../components/board-picker.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { formatTime } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { canOperate } from '../lib/session.ts';
import { useResource } from '../lib/use-resource.ts';
import { Pager } from '../components/pager.tsx';
import { DataTable } from '../components/table-box.tsx';

const PAGE = 50;

type ListPage = { invocations: Array<Invocation & { latest_run?: Operation | null }>; total: number };

/** The `q` and page a list URL's query asks for. */
function listParams(search: string): { q: string; page: number } {
  const params = new URLSearchParams(search);
  return { q: params.get('q') ?? '', page: Math.max(0, Number(params.get('page') ?? '0') || 0) };
}

function loadPage(q: string, page: number): Promise<ListPage> {
  return unwrap(client.GET('/api/invocations/', { params: { query: { q: q || undefined, limit: PAGE, offset: page * PAGE } } }));
}

/**
 * The list page's first request, started by main.tsx while the session is still being
 * checked (the two answers then arrive together instead of one after the other: the
 * first useful paint is one round trip sooner). Used once, and only if it succeeded.
 */
let early: { key: string; answer: Promise<ListPage> } | undefined;
export function prefetchInvocations(search: string): void {
  const { q, page } = listParams(search);
  const answer = loadPage(q, page);
  answer.catch(() => undefined); // a refusal (not signed in) is nobody's error: the page asks again
  early = { key: `${q}\n${page}`, answer };
}

/** The list: server-side search (`q`) and paging, so it stays fast at any number of invocations. */
export function InvocationsPage() {
  const { q, page } = listParams(currentQuery.value);
  const [search, setSearch] = useState(q);
  const timer = useRef<number>();
  // While a run on this page is under way the list is polled, so its status moves by itself.
  const [runsActive, setRunsActive] = useState(false);
  const list = useResource(
    () => {
      const prefetched = early?.key === `${q}\n${page}` ? early.answer : undefined;
      early = undefined;
      return prefetched ? prefetched.catch(() => loadPage(q, page)) : loadPage(q, page);
    },
    [q, page],
    { pollMs: runsActive ? 5000 : 0 },
  );
  const data = list.data;
  const active = !!data?.invocations.some((i) => i.latest_run?.status === 'queued' || i.latest_run?.status === 'running');
  useEffect(() => setRunsActive(active), [active]);
  // Board names for the run column (a list refreshed now and then: names rarely change).
  const { boards } = useBoards(30_000);

  function go(nextQ: string, nextPage: number) {
    const sp = new URLSearchParams();
    if (nextQ) sp.set('q', nextQ);
    if (nextPage) sp.set('page', String(nextPage));
    navigate(`/invocations${sp.size ? `?${sp}` : ''}`, true);
  }

  return (
    <section aria-labelledby="inv-title">
      <div class="page-head">
        <h1 id="inv-title">Invocations</h1>
        {canOperate.value && <CreateInvocation />}
      </div>
      <form role="search" onSubmit={(e) => (e.preventDefault(), go(search, 0))}>
        <label>
          Search by name
          <input
            type="search"
            value={search}
            onInput={(e) => {
              const v = (e.target as HTMLInputElement).value;
              setSearch(v);
              clearTimeout(timer.current);
              timer.current = window.setTimeout(() => go(v, 0), 300);
            }}
          />
        </label>
      </form>
      <ErrorBox error={list.error} />
      {data && data.total === 0 && !q && <NoInvocationsYet />}
      {data && (data.total > 0 || q) && (
        <>
          <p class="muted" aria-live="polite">
            {data.total} invocation{data.total === 1 ? '' : 's'}
            {q ? ` matching “${q}”` : ''}
          </p>
          <DataTable label="Invocations" columns={['Id', 'Name', 'Latest run', 'Files', 'Output', 'Created']}>
            {data.invocations.map((inv) => (
              <tr key={inv.id}>
                <td>{inv.id}</td>
                <td>
                  <Link href={`/invocations/${inv.id}`}>{inv.name}</Link>
                  {inv.description && <div class="muted small">{inv.description}</div>}
                </td>
                <td>
                  <LatestRun run={inv.latest_run} boards={boards} />
                </td>
                <td>{(['parameter', 'bitstream', 'weights', 'input_video'] as const).filter((k) => inv.files[k]).length} / 4</td>
                <td>{inv.files.output_video ? 'video' : '—'}</td>
                <td>{formatTime(inv.created_at)}</td>
              </tr>
            ))}
          </DataTable>
          <Pager page={page} total={data.total} pageSize={PAGE} onPage={(p) => go(q, p)} />
        </>
      )}
    </section>
  );
}

/** The first visit: what an invocation is and what to do first. */
function NoInvocationsYet() {
  return (
    <div class="card stack" data-testid="empty-invocations">
      <h2>No invocations yet</h2>
      <p>An invocation holds what one run needs: a parameter file, a bitstream, the model weights and an input video.</p>
      <ol>
        <li>
          Check that a board is online on the <Link href="/boards">Boards</Link> page (register one there if none is).
        </li>
        <li>{canOperate.value ? 'Create an invocation with “New invocation” above and give it a name.' : 'Ask an operator to create an invocation: your role can watch runs but not start them.'}</li>
        <li>Open it, drop its four files into their slots, then press Execute: the log and the output video appear on its page.</li>
      </ol>
    </div>
  );
}

function CreateInvocation() {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!open)
    return (
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        New invocation
      </button>
    );
  return (
    <form
      class="card stack"
      aria-label="New invocation"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        try {
          const inv = await unwrap(
            client.POST('/api/invocations/create/', { body: { name: String(f.get('name')), description: String(f.get('description') ?? '') } }),
          );
          navigate(`/invocations/${inv.id}`);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <label>
        Name
        <input name="name" required maxLength={200} autoFocus />
      </label>
      <label>
        Description
        <textarea name="description" rows={2} />
      </label>
      <ErrorBox error={error} />
      <div class="row">
        <button type="submit" class="primary">
          Create
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
