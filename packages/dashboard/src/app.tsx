import { useEffect } from 'preact/hooks';
import { ErrorBox, NotAllowed } from './components/error-box.tsx';
import { Layout } from './components/layout.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { currentPath, navigate } from './lib/router.ts';
import { hasAccounts, loadSession, role, session } from './lib/session.ts';
import { RETRY_MS } from './lib/use-resource.ts';
import { findRoute, roleAllows } from './routes.tsx';

function Page({ path }: { path: string }) {
  if (path === '/' || path === '') {
    navigate('/invocations', true);
    return null;
  }
  const found = findRoute(path);
  if (!found)
    return (
      <section>
        <h1>Page not found</h1>
        <p>
          There is no page at <code>{path}</code>. Go to the <a href="/invocations">invocations</a>.
        </p>
      </section>
    );
  const { route, params } = found;
  if (route.accounts && !hasAccounts.value) return <NoAccounts />;
  if (!roleAllows(role.value, route.role))
    return (
      <section class="stack">
        <h1>{route.title}</h1>
        <NotAllowed need={route.role === 'admin' ? 'admin' : 'operator'} />
      </section>
    );
  return route.page(params);
}

function NoAccounts() {
  return (
    <section>
      <h1>No accounts on this server</h1>
      <p>This server has no users, so there is nothing to manage here. Create the first admin with <code>pnpm exec mm-server create-user &lt;name&gt; --role admin</code>.</p>
    </section>
  );
}

/** The server could not be reached: said so, and tried again by itself until it answers. */
function Unreachable({ error }: { error: unknown }) {
  useEffect(() => {
    const t = setInterval(() => void loadSession(), RETRY_MS);
    return () => clearInterval(t);
  }, []);
  return (
    <main id="main" class="sign-in">
      <h1>Model Manager</h1>
      <ErrorBox error={error} />
      <p class="muted" aria-live="polite">
        Trying again every few seconds…
      </p>
      <button type="button" onClick={() => void loadSession()}>
        Try again now
      </button>
    </main>
  );
}

export function App() {
  useEffect(() => void loadSession(), []);
  const path = currentPath.value.replace(/\/+$/, '') || '/';
  useEffect(() => {
    const found = findRoute(path);
    document.title = found ? `${found.route.title} · Model Manager` : 'Model Manager';
  }, [path]);

  const s = session.value;
  if (s.kind === 'loading') return <p class="loading" aria-busy="true">Loading…</p>;
  if (s.kind === 'sign-in') return <SignInPage />;
  if (s.kind === 'unreachable') return <Unreachable error={s.error} />;
  return (
    <Layout>
      <Page path={path} />
    </Layout>
  );
}
