import { useEffect, useRef, useState } from 'preact/hooks';
import { client, unwrap, type Invocation } from '../api/client.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Link } from '../components/link.tsx';
import { formatTime } from '../lib/format.ts';
import { currentQuery, navigate } from '../lib/router.ts';
import { canOperate } from '../lib/session.ts';

const PAGE = 50;

type ListPage = { invocations: Invocation[]; total: number };

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
  const [data, setData] = useState<ListPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [search, setSearch] = useState(q);
  const timer = useRef<number>();

  useEffect(() => {
    let stale = false;
    setError(null);
    const prefetched = early?.key === `${q}\n${page}` ? early.answer : undefined;
    early = undefined;
    (prefetched ? prefetched.catch(() => loadPage(q, page)) : loadPage(q, page))
      .then((d) => !stale && setData(d))
      .catch((e) => !stale && setError(e));
    return () => {
      stale = true;
    };
  }, [q, page]);

  function go(nextQ: string, nextPage: number) {
    const sp = new URLSearchParams();
    if (nextQ) sp.set('q', nextQ);
    if (nextPage) sp.set('page', String(nextPage));
    navigate(`/invocations${sp.size ? `?${sp}` : ''}`, true);
  }

  const pages = data ? Math.max(1, Math.ceil(data.total / PAGE)) : 1;
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
      <ErrorBox error={error} />
      {data && (
        <>
          <p class="muted" aria-live="polite">
            {data.total} invocation{data.total === 1 ? '' : 's'}
            {q ? ` matching “${q}”` : ''}
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Files</th>
                <th scope="col">Output</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.invocations.map((inv) => (
                <tr key={inv.id}>
                  <td>{inv.id}</td>
                  <td>
                    <Link href={`/invocations/${inv.id}`}>{inv.name}</Link>
                    {inv.description && <div class="muted small">{inv.description}</div>}
                  </td>
                  <td>{(['parameter', 'bitstream', 'weights', 'input_video'] as const).filter((k) => inv.files[k]).length} / 4</td>
                  <td>{inv.files.output_video ? 'video' : '—'}</td>
                  <td>{formatTime(inv.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="pager" aria-label="Pages">
            <button type="button" disabled={page === 0} onClick={() => go(q, page - 1)}>
              Previous
            </button>
            <span>
              Page {page + 1} of {pages}
            </span>
            <button type="button" disabled={page + 1 >= pages} onClick={() => go(q, page + 1)}>
              Next
            </button>
          </nav>
        </>
      )}
    </section>
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
