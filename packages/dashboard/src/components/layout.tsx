import type { ComponentChildren } from 'preact';
import { hasAccounts, isAdmin, session, signOut } from '../lib/session.ts';
import { navigate } from '../lib/router.ts';
import { NavLink } from './link.tsx';

export function Layout({ children }: { children: ComponentChildren }) {
  const s = session.value;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Model Manager</span>
        <nav aria-label="Main">
          <NavLink href="/invocations">Invocations</NavLink>
          <NavLink href="/boards">Boards</NavLink>
          <NavLink href="/operations">Operations</NavLink>
          <NavLink href="/videos">Videos</NavLink>
          <NavLink href="/device-scripts">Device scripts</NavLink>
          {hasAccounts.value && <NavLink href="/tokens">My tokens</NavLink>}
          {hasAccounts.value && isAdmin.value && <NavLink href="/admin/users">Users</NavLink>}
          {hasAccounts.value && isAdmin.value && <NavLink href="/admin/audit">Audit log</NavLink>}
          {isAdmin.value && <NavLink href="/admin/keys">Keys</NavLink>}
        </nav>
        <div class="who">
          {s.kind === 'signed-in' && (
            <>
              <span>
                {s.user.username} <span class="muted">({s.user.role})</span>
              </span>
              <button
                type="button"
                onClick={async () => {
                  await signOut();
                  navigate('/', true);
                }}
              >
                Sign out
              </button>
            </>
          )}
          {s.kind === 'open' && <span class="muted">No sign-in on this server</span>}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
