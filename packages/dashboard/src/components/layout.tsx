import type { ComponentChildren } from 'preact';
import { hasAccounts, role, session, signOut } from '../lib/session.ts';
import { ROUTES, roleAllows } from '../routes.tsx';
import { navigate } from '../lib/router.ts';
import { Link, NavLink } from './link.tsx';

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
          {ROUTES.filter((r) => r.menu && (!r.accounts || hasAccounts.value) && roleAllows(role.value, r.role)).map((r) => (
            <NavLink key={r.path} href={r.path}>
              {r.title}
            </NavLink>
          ))}
        </nav>
        <div class="who">
          {s.kind === 'signed-in' && (
            <>
              <Link href="/account" title="My account: change my password">
                {s.user.username ?? 'API token'} <span class="muted">({s.user.role})</span>
              </Link>
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
