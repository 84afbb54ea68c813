import type { JSX } from 'preact';
import { BoardPage } from './pages/board.tsx';
import { BoardsPage } from './pages/boards.tsx';
import { InvocationPage } from './pages/invocation.tsx';
import { InvocationsPage } from './pages/invocations.tsx';
import { OperationPage, OperationsPage } from './pages/operations.tsx';
import { lazyPage } from './components/lazy-page.tsx';
import { match } from './lib/router.ts';
import type { Role } from './lib/session.ts';

/** One page of the dashboard. */
export interface Route {
  /** `/invocations/:id` style. */
  path: string;
  /** The tab's title (and the menu's label for `menu` pages). */
  title: string;
  page: (params: Record<string, string>) => JSX.Element;
  /** The least role that may see the page (none: everyone). */
  role?: Role;
  /** Only where the server has accounts (users, tokens, audit). */
  accounts?: boolean;
  /** Listed in the top menu. */
  menu?: boolean;
}

// Pages few visits start on load on first use: the first page's bundle stays small.
const VideosPage = lazyPage(() => import('./pages/videos.tsx').then((m) => m.VideosPage));
const DeviceScriptsPage = lazyPage(() => import('./pages/device-scripts.tsx').then((m) => m.DeviceScriptsPage));
const DeviceScriptPage = lazyPage(() => import('./pages/device-scripts.tsx').then((m) => m.DeviceScriptPage));
const TokensPage = lazyPage(() => import('./pages/admin.tsx').then((m) => m.TokensPage));
const UsersPage = lazyPage(() => import('./pages/admin.tsx').then((m) => m.UsersPage));
const AuditPage = lazyPage(() => import('./pages/admin.tsx').then((m) => m.AuditPage));
const ProvisioningKeysPage = lazyPage(() => import('./pages/provisioning-keys.tsx').then((m) => m.ProvisioningKeysPage));
const WebhooksPage = lazyPage(() => import('./pages/webhooks.tsx').then((m) => m.WebhooksPage));
const WebhookPage = lazyPage(() => import('./pages/webhooks.tsx').then((m) => m.WebhookPage));
const RolloutsPage = lazyPage(() => import('./pages/rollouts.tsx').then((m) => m.RolloutsPage));
const ReservationsPage = lazyPage(() => import('./pages/reservations.tsx').then((m) => m.ReservationsPage));
const RolloutPage = lazyPage(() => import('./pages/rollouts.tsx').then((m) => m.RolloutPage));
const DrivePage = lazyPage(() => import('./pages/drive.tsx').then((m) => m.DrivePage));
const BaselinesPage = lazyPage(() => import('./pages/results.tsx').then((m) => m.BaselinesPage));
const ComparisonPage = lazyPage(() => import('./pages/results.tsx').then((m) => m.ComparisonPage));
const HealthChecksPage = lazyPage(() => import('./pages/health-checks.tsx').then((m) => m.HealthChecksPage));
const HealthCheckPage = lazyPage(() => import('./pages/health-checks.tsx').then((m) => m.HealthCheckPage));
// A terminal (xterm.js) and recordings (asciinema-player): heavy, each in its own chunk.
const TerminalPage = lazyPage(() => import('./pages/terminal.tsx').then((m) => m.TerminalPage));
const TerminalSessionsPage = lazyPage(() => import('./pages/terminal-sessions.tsx').then((m) => m.TerminalSessionsPage));
const AccountPage = lazyPage(() => import('./pages/account.tsx').then((m) => m.AccountPage));

/** Every page: the router, the menu, the titles and the role checks all read this one table. */
export const ROUTES: Route[] = [
  { path: '/invocations', title: 'Invocations', page: () => <InvocationsPage />, menu: true },
  { path: '/invocations/:id', title: 'Invocation', page: (p) => <InvocationPage id={Number(p.id)} /> },
  { path: '/boards', title: 'Boards', page: () => <BoardsPage />, menu: true },
  { path: '/boards/:id', title: 'Board', page: (p) => <BoardPage id={p.id!} /> },
  { path: '/boards/:id/terminal', title: 'Terminal', page: (p) => <TerminalPage id={p.id!} />, role: 'operator' },
  { path: '/operations', title: 'Operations', page: () => <OperationsPage />, menu: true },
  { path: '/operations/:id', title: 'Operation', page: (p) => <OperationPage id={Number(p.id)} /> },
  { path: '/rollouts', title: 'Rollouts', page: () => <RolloutsPage />, menu: true },
  { path: '/rollouts/:id', title: 'Rollout', page: (p) => <RolloutPage id={Number(p.id)} /> },
  { path: '/reservations', title: 'Reservations', page: () => <ReservationsPage />, menu: true },
  { path: '/baselines', title: 'Baselines', page: () => <BaselinesPage />, menu: true },
  { path: '/compare', title: 'Comparison', page: () => <ComparisonPage /> },
  { path: '/videos', title: 'Videos', page: () => <VideosPage />, menu: true },
  { path: '/device-scripts', title: 'Device scripts', page: () => <DeviceScriptsPage />, menu: true },
  { path: '/device-scripts/:id', title: 'Device script', page: (p) => <DeviceScriptPage id={p.id!} /> },
  { path: '/drive', title: 'Drive', page: () => <DrivePage />, menu: true },
  { path: '/tokens', title: 'My tokens', page: () => <TokensPage />, accounts: true, menu: true },
  { path: '/account', title: 'My account', page: () => <AccountPage />, accounts: true },
  { path: '/admin/users', title: 'Users', page: () => <UsersPage />, role: 'admin', accounts: true, menu: true },
  { path: '/admin/audit', title: 'Audit log', page: () => <AuditPage />, role: 'admin', accounts: true, menu: true },
  { path: '/admin/terminal-sessions', title: 'Terminal sessions', page: () => <TerminalSessionsPage />, role: 'admin', menu: true },
  { path: '/admin/keys', title: 'Provisioning keys', page: () => <ProvisioningKeysPage />, role: 'admin', menu: true },
  { path: '/health-checks', title: 'Health checks', page: () => <HealthChecksPage />, role: 'admin', menu: true },
  { path: '/health-checks/:id', title: 'Health check', page: (p) => <HealthCheckPage id={Number(p.id)} />, role: 'admin' },
  { path: '/admin/webhooks', title: 'Webhooks', page: () => <WebhooksPage />, role: 'admin', menu: true },
  { path: '/admin/webhooks/:id', title: 'Webhook', page: (p) => <WebhookPage id={p.id!} />, role: 'admin' },
];

/** The route a path shows, with its parameters. */
export function findRoute(path: string): { route: Route; params: Record<string, string> } | null {
  for (const route of ROUTES) {
    const params = match(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
/** Whether `role` is at least `need`. */
export function roleAllows(role: Role, need: Role | undefined): boolean {
  return need === undefined || RANK[role] >= RANK[need];
}
