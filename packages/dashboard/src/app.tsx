import { useEffect } from 'preact/hooks';
import { ErrorBox, NotAllowed } from './components/error-box.tsx';
import { Layout } from './components/layout.tsx';
import { AuditPage, TokensPage, UsersPage } from './pages/admin.tsx';
import { BoardPage } from './pages/board.tsx';
import { BoardsPage } from './pages/boards.tsx';
import { DeviceScriptPage, DeviceScriptsPage } from './pages/device-scripts.tsx';
import { InvocationPage } from './pages/invocation.tsx';
import { InvocationsPage } from './pages/invocations.tsx';
import { OperationPage, OperationsPage } from './pages/operations.tsx';
import { ProvisioningKeysPage } from './pages/provisioning-keys.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { VideosPage } from './pages/videos.tsx';
import { currentPath, match, navigate } from './lib/router.ts';
import { hasAccounts, isAdmin, loadSession, session } from './lib/session.ts';

const TITLES: Array<[string, string]> = [
  ['/invocations', 'Invocations'],
  ['/boards', 'Boards'],
  ['/operations', 'Operations'],
  ['/videos', 'Videos'],
  ['/device-scripts', 'Device scripts'],
  ['/tokens', 'My tokens'],
  ['/admin/users', 'Users'],
  ['/admin/audit', 'Audit log'],
  ['/admin/keys', 'Provisioning keys'],
];

function Page({ path }: { path: string }) {
  let m: Record<string, string> | null;
  if (path === '/' || path === '') {
    navigate('/invocations', true);
    return null;
  }
  if (path === '/invocations') return <InvocationsPage />;
  if ((m = match('/invocations/:id', path))) return <InvocationPage id={Number(m.id)} />;
  if (path === '/boards') return <BoardsPage />;
  if ((m = match('/boards/:id', path))) return <BoardPage id={m.id!} />;
  if (path === '/operations') return <OperationsPage />;
  if ((m = match('/operations/:id', path))) return <OperationPage id={Number(m.id)} />;
  if (path === '/videos') return <VideosPage />;
  if (path === '/device-scripts') return <DeviceScriptsPage />;
  if ((m = match('/device-scripts/:id', path))) return <DeviceScriptPage id={m.id!} />;
  if (path === '/tokens') return hasAccounts.value ? <TokensPage /> : <NoAccounts />;
  if (path === '/admin/users') return !hasAccounts.value ? <NoAccounts /> : isAdmin.value ? <UsersPage /> : <NotAllowed need="admin" />;
  if (path === '/admin/keys') return isAdmin.value ? <ProvisioningKeysPage /> : <NotAllowed need="admin" />;
  if (path === '/admin/audit') return !hasAccounts.value ? <NoAccounts /> : isAdmin.value ? <AuditPage /> : <NotAllowed need="admin" />;
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path}</code>. Go to the <a href="/invocations">invocations</a>.
      </p>
    </section>
  );
}

function NoAccounts() {
  return (
    <section>
      <h1>No accounts on this server</h1>
      <p>This server has no users, so there is nothing to manage here. Create the first admin with `pnpm exec mm-server create-user &lt;name&gt; --role admin`.</p>
    </section>
  );
}

export function App() {
  useEffect(() => void loadSession(), []);
  const path = currentPath.value.replace(/\/+$/, '') || '/';
  useEffect(() => {
    const t = TITLES.find(([p]) => path === p || path.startsWith(p + '/'));
    document.title = t ? `${t[1]} · Model Manager` : 'Model Manager';
  }, [path]);

  const s = session.value;
  if (s.kind === 'loading') return <p class="loading" aria-busy="true">Loading…</p>;
  if (s.kind === 'sign-in') return <SignInPage />;
  if (s.kind === 'unreachable')
    return (
      <main id="main" class="sign-in">
        <h1>Model Manager</h1>
        <ErrorBox error={s.error} />
        <button type="button" onClick={() => void loadSession()}>
          Try again
        </button>
      </main>
    );
  return (
    <Layout>
      <Page path={path} />
    </Layout>
  );
}
