import { TrieRouter } from 'hono/router/trie-router';
import type { Role } from './roles.ts';

/** Who may call a route: a role, or `public` (no user auth: the route authenticates otherwise, or not at all). */
export type Access = Role | 'public';

export interface RouteRole {
  /** Upper-case methods; GET also covers HEAD (Hono answers HEAD with the GET handler). */
  methods: readonly string[];
  /** The OpenAPI path, `{param}` for each path parameter. */
  path: string;
  access: Access;
  /**
   * The audit action recorded when a state-changing call succeeds (auth/audit.ts).
   * `self`: the route records its own events (sign-in, user and token changes).
   */
  action?: string;
}

const R = (methods: string | readonly string[], path: string, access: Access, action?: string): RouteRole => ({
  methods: typeof methods === 'string' ? [methods] : methods,
  path,
  access,
  ...(action ? { action } : {}),
});

const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/**
 * tus 1.0: creation and discovery on the collection, offset and append on one upload. No
 * audit action: the PATCH that carries the last byte records `upload.attach` itself, so an
 * upload is one entry, not one per chunk.
 */
const TUS_COLLECTION_METHODS = ['POST', 'OPTIONS'] as const;
/** POST: a PATCH sent as POST with X-HTTP-Method-Override (tus 1.0); OPTIONS: discovery on the upload URL. DELETE has its own row (audited). */
const TUS_UPLOAD_METHODS = ['GET', 'HEAD', 'PATCH', 'POST', 'OPTIONS'] as const;

/**
 * THE one place that says which role each route needs (docs/api.md, "People and access").
 * A test walks the OpenAPI document: every documented route must be here, and a user
 * one role lower gets 403 on it, and no entry may name a route that is not served.
 */
export const ROUTE_ROLES: readonly RouteRole[] = [
  // Outside user auth: health for probes, the agent link (board tokens), signing in.
  R('GET', '/api/health/', 'public'),
  R('GET', '/api/agent/connect/', 'public'),
  R('POST', '/api/agent/enroll/', 'public', 'board.enroll'),
  // Downloads for boards (install-agent.sh, packages) and people (mm): nothing secret.
  R('GET', '/api/downloads/', 'public'),
  R('GET', '/api/downloads/{file}', 'public'),
  R('POST', '/api/auth/login/', 'public', 'self'),
  R('POST', '/api/auth/token-login/', 'public', 'self'),

  // Any user.
  R('POST', '/api/auth/logout/', 'viewer', 'self'),
  R('GET', '/api/auth/me/', 'viewer'),
  R('POST', '/api/auth/password/', 'viewer', 'self'),
  R('GET', '/api/tokens/', 'viewer'),
  R('POST', '/api/tokens/', 'viewer', 'self'),
  R('DELETE', '/api/tokens/{id}/', 'viewer', 'self'),

  // Viewers read everything but users, others' tokens and the audit log.
  R('GET', '/api/openapi.json', 'viewer'),
  R('GET', '/api/docs/', 'viewer'),
  R('GET', '/api/docs/assets/{file}', 'viewer'),
  R('GET', '/api/agent/asyncapi/', 'viewer'),
  R('GET', '/api/metrics/', 'viewer'),
  R('GET', '/api/invocations/', 'viewer'),
  R('GET', '/api/invocations/{id}/', 'viewer'),
  R('GET', '/api/invocations/{id}/files/{kind}/', 'viewer'),
  R('GET', '/api/invocations/{id}/video/', 'viewer'),
  R('GET', '/api/invocations/{id}/metrics/', 'viewer'),
  R('GET', '/api/invocations/{id}/results/', 'viewer'),
  R('GET', '/api/invocations/{id}/download/', 'viewer'),
  R('GET', '/api/videos/', 'viewer'),
  R('GET', '/api/videos/results/{path}', 'viewer'),
  R('GET', '/api/boards/', 'viewer'),
  R('GET', '/api/boards/{id}/', 'viewer'),
  R('GET', '/api/boards/{id}/telemetry/', 'viewer'),
  R('GET', '/api/boards/{id}/incidents/', 'viewer'),
  R('GET', '/api/boards/{id}/pacs/', 'viewer'),
  R('GET', '/api/operations/', 'viewer'),
  R('GET', '/api/operations/{id}/', 'viewer'),
  R('GET', '/api/operations/{id}/log/', 'viewer'),
  R('GET', '/api/operations/{id}/events/', 'viewer'),
  R('GET', '/api/device-scripts/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/stream/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/camera/', 'viewer'),
  R('GET', '/api/baselines/', 'viewer'),
  R('GET', '/api/baselines/{id}/', 'viewer'),
  R('POST', '/api/comparisons/', 'viewer'),
  R('GET', '/api/rollouts/', 'viewer'),
  R('GET', '/api/rollouts/{id}/', 'viewer'),
  R('GET', '/api/rollouts/{id}/events/', 'viewer'),
  R('GET', '/api/rollouts/{id}/boards/{board_id}/output/', 'viewer'),
  R('GET', '/api/reservations/', 'viewer'),
  R('GET', '/api/reservations/{id}/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/file/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/programs/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/logs/', 'viewer'),
  R('GET', '/api/boards/{id}/scripts/', 'viewer'),
  R('GET', '/api/boards/{id}/apps/', 'viewer'),

  // Operators: invocations and their files, transfers and runs, PAC queries, driving scripts.
  R('POST', '/api/invocations/create/', 'operator', 'invocation.create'),
  R('DELETE', '/api/invocations/{id}/', 'operator', 'invocation.delete'),
  R('POST', '/api/invocations/{id}/upload/', 'operator', 'invocation.file.upload'),
  R('PUT', '/api/invocations/{id}/files/{kind}/', 'operator', 'invocation.file.attach'),
  R('DELETE', '/api/invocations/{id}/files/{kind}/', 'operator', 'invocation.file.delete'),
  R('POST', '/api/invocations/{id}/transfer/', 'operator', 'invocation.transfer'),
  R('POST', '/api/invocations/{id}/execute/', 'operator', 'invocation.execute'),
  R('POST', '/api/operations/{id}/cancel/', 'operator', 'operation.cancel'),
  R('POST', '/api/boards/{id}/health-check/', 'operator', 'board.health_check'),
  // A terminal: operators holding the board's reservation, or admins (checked by the terminal service); audited by it.
  R('GET', '/api/boards/{id}/terminal/', 'operator'),
  // Operators holding the board's reservation, or admins (power/power.ts requireControl).
  R('POST', '/api/boards/{id}/power/', 'operator', 'board.power'),
  R('POST', '/api/pacs/query/', 'operator', 'pac.query'),
  // Accelerated applications (docs/accelerators.md): loading and unloading change no files; installing does (admin).
  R('PATCH', '/api/invocations/{id}/', 'operator', 'invocation.update'),
  R('POST', '/api/apps/load/', 'operator', 'app.load'),
  R('POST', '/api/apps/unload/', 'operator', 'app.unload'),
  // Rollouts: execute ones need an operator; the other kinds admin (checked by the service, it depends on the body).
  R('POST', '/api/baselines/', 'operator', 'baseline.create'),
  R('DELETE', '/api/baselines/{id}/', 'operator', 'baseline.delete'),
  R('POST', '/api/rollouts/', 'operator', 'rollout.create'),
  R('POST', '/api/rollouts/{id}/pause/', 'operator', 'rollout.pause'),
  R('POST', '/api/rollouts/{id}/resume/', 'operator', 'rollout.resume'),
  R('POST', '/api/rollouts/{id}/cancel/', 'operator', 'rollout.cancel'),
  // Reservations: the holder (or an admin) renews and releases (reservations/reservations.ts checks who).
  R('POST', '/api/reservations/', 'operator', 'reservation.create'),
  R('POST', '/api/reservations/{id}/renew/', 'operator', 'reservation.renew'),
  R('DELETE', '/api/reservations/{id}/', 'operator', 'reservation.release'),
  R(PROXY_METHODS, '/api/device-scripts/{id}/proxy/{path}', 'operator', 'device_script.proxy'),
  R('POST', '/api/device-scripts/{id}/start/', 'operator', 'device_script.start'),
  R('POST', '/api/device-scripts/{id}/stop/', 'operator', 'device_script.stop'),
  R('POST', '/api/device-scripts/{id}/restart/', 'operator', 'device_script.restart'),
  R(TUS_COLLECTION_METHODS, '/api/uploads/', 'operator'),
  R(TUS_UPLOAD_METHODS, '/api/uploads/{id}/', 'operator'),
  R('DELETE', '/api/uploads/{id}/', 'operator', 'upload.terminate'),

  // Admins: boards, PAC changes, the device-script catalogue, users, the audit log.
  R('POST', '/api/boards/', 'admin', 'board.create'),
  R('POST', '/api/apps/install/', 'admin', 'app.install'),
  R('DELETE', '/api/boards/{id}/', 'admin', 'board.delete'),
  R('PATCH', '/api/boards/{id}/', 'admin', 'board.update'),
  R('POST', '/api/boards/labels/', 'admin', 'board.labels'),
  R('GET', '/api/health-checks/', 'admin'),
  R('POST', '/api/health-checks/', 'admin', 'health_check.create'),
  R('GET', '/api/health-checks/{id}/', 'admin'),
  R('PATCH', '/api/health-checks/{id}/', 'admin', 'health_check.update'),
  R('DELETE', '/api/health-checks/{id}/', 'admin', 'health_check.delete'),
  R('POST', '/api/health-checks/{id}/run/', 'admin', 'health_check.run'),
  R('POST', '/api/boards/{id}/approve/', 'admin', 'board.approve'),
  R('POST', '/api/boards/{id}/agent-update/', 'admin', 'board.agent_update'),
  R('GET', '/api/terminal-sessions/', 'admin'),
  R('GET', '/api/terminal-sessions/{id}/recording/', 'admin'),
  R('GET', '/api/provisioning-keys/', 'admin'),
  R('POST', '/api/provisioning-keys/', 'admin', 'provisioning_key.create'),
  R('DELETE', '/api/provisioning-keys/{id}/', 'admin', 'provisioning_key.delete'),
  R('POST', '/api/pacs/activate/', 'admin', 'pac.activate'),
  R('POST', '/api/pacs/install/', 'admin', 'pac.install'),
  R('POST', '/api/device-scripts/', 'admin', 'device_script.create'),
  R(['PUT', 'PATCH'], '/api/device-scripts/{id}/', 'admin', 'device_script.update'),
  R('DELETE', '/api/device-scripts/{id}/', 'admin', 'device_script.delete'),
  R('PUT', '/api/device-scripts/{id}/file/', 'admin', 'device_script.file.upload'),
  R('POST', '/api/device-scripts/{id}/deploy/', 'admin', 'device_script.deploy'),
  R('GET', '/api/users/', 'admin'),
  R('POST', '/api/users/', 'admin', 'self'),
  R('GET', '/api/users/{id}/', 'admin'),
  R('PATCH', '/api/users/{id}/', 'admin', 'self'),
  R('DELETE', '/api/users/{id}/', 'admin', 'self'),
  R('GET', '/api/audit/', 'admin'),
  R('GET', '/api/audit/actions/', 'admin'),
  // Webhooks (docs/webhooks.md): where events go, and their secrets.
  R('GET', '/api/webhooks/', 'admin'),
  R('POST', '/api/webhooks/', 'admin', 'webhook.create'),
  R('GET', '/api/webhooks/{id}/', 'admin'),
  R('PATCH', '/api/webhooks/{id}/', 'admin', 'webhook.update'),
  R('DELETE', '/api/webhooks/{id}/', 'admin', 'webhook.delete'),
  R('GET', '/api/webhooks/{id}/deliveries/', 'admin'),
  R('POST', '/api/webhooks/{id}/deliveries/{delivery_id}/redeliver/', 'admin', 'webhook.redeliver'),
];

/** `{param}` → `:param`; `{path}` is the rest of the path (proxy and results-folder routes), possibly empty. */
const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'path' ? ':path{.*}' : `:${name}`));

/**
 * The table in Hono's own router (the one the app routes with), so a request matches an entry
 * exactly as it matches its route. Literal paths are added first and win over templated ones
 * (`/api/invocations/create/` before `/api/invocations/{id}/`); GET also answers HEAD.
 */
const ROUTER = new TrieRouter<RouteRole>();
for (const r of [...ROUTE_ROLES].sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')))) {
  for (const m of r.methods) ROUTER.add(m, honoPath(r.path), r);
}

export interface RouteMatch {
  route: RouteRole;
  params: Record<string, string>;
}

/** The map entry for a request (method, normalised path), or undefined. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const m = method.toUpperCase();
  for (const want of m === 'HEAD' ? ['HEAD', 'GET'] : [m]) {
    const [hit] = ROUTER.match(want, path)[0];
    if (hit) return { route: hit[0], params: { ...(hit[1] as Record<string, string>) } };
  }
  return undefined;
}

export const isStateChanging = (method: string) => !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());

/**
 * What a request with no map entry needs: it is no documented route (it will be a 404),
 * so reads need a viewer and anything else an admin (closed by default).
 */
export function accessForUnmapped(method: string): Access {
  return isStateChanging(method) ? 'admin' : 'viewer';
}
