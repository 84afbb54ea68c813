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
/** tus 1.0: creation and discovery on the collection, offset, append and termination on one upload. */
const TUS_COLLECTION_METHODS = ['POST', 'OPTIONS'] as const;
/** POST: a PATCH or DELETE sent as POST with X-HTTP-Method-Override (tus 1.0); OPTIONS: discovery on the upload URL. */
const TUS_UPLOAD_METHODS = ['GET', 'HEAD', 'PATCH', 'DELETE', 'POST', 'OPTIONS'] as const;

/**
 * THE one place that says which role each route needs (docs/api.md, "People and access").
 * A test walks the OpenAPI document: every documented route must be here, and a user
 * one role lower gets 403 on it. Entries for routes other branches are adding (tus
 * uploads, attaching known content, metrics) are here ahead of them; that test lists
 * them as expected-pending until they are served.
 */
export const ROUTE_ROLES: readonly RouteRole[] = [
  // Outside user auth: health for probes, the agent link (board tokens), signing in.
  R('GET', '/api/health/', 'public'),
  R('GET', '/api/agent/connect/', 'public'),
  R('POST', '/api/auth/login/', 'public', 'self'),
  R('POST', '/api/auth/token-login/', 'public', 'self'),

  // Any user.
  R('POST', '/api/auth/logout/', 'viewer', 'self'),
  R('GET', '/api/auth/me/', 'viewer'),
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
  R('GET', '/api/invocations/{id}/download/', 'viewer'),
  R('GET', '/api/videos/', 'viewer'),
  R('GET', '/api/videos/results/{path}', 'viewer'),
  R('GET', '/api/boards/', 'viewer'),
  R('GET', '/api/boards/{id}/', 'viewer'),
  R('GET', '/api/operations/', 'viewer'),
  R('GET', '/api/operations/{id}/', 'viewer'),
  R('GET', '/api/operations/{id}/log/', 'viewer'),
  R('GET', '/api/operations/{id}/events/', 'viewer'),
  R('GET', '/api/device-scripts/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/', 'viewer'),
  R('GET', '/api/device-scripts/{id}/stream/', 'viewer'),

  // Operators: invocations and their files, transfers and runs, PAC queries, driving scripts.
  R('POST', '/api/invocations/create/', 'operator', 'invocation.create'),
  R('DELETE', '/api/invocations/{id}/', 'operator', 'invocation.delete'),
  R('POST', '/api/invocations/{id}/upload/', 'operator', 'invocation.file.upload'),
  R('PUT', '/api/invocations/{id}/files/{kind}/', 'operator', 'invocation.file.attach'),
  R('DELETE', '/api/invocations/{id}/files/{kind}/', 'operator', 'invocation.file.delete'),
  R('POST', '/api/invocations/{id}/transfer/', 'operator', 'invocation.transfer'),
  R('POST', '/api/invocations/{id}/execute/', 'operator', 'invocation.execute'),
  R('POST', '/api/operations/{id}/cancel/', 'operator', 'operation.cancel'),
  R('POST', '/api/pacs/query/', 'operator', 'pac.query'),
  R(PROXY_METHODS, '/api/device-scripts/{id}/proxy/{path}', 'operator', 'device_script.proxy'),
  R(TUS_COLLECTION_METHODS, '/api/uploads/', 'operator', 'upload'),
  R(TUS_UPLOAD_METHODS, '/api/uploads/{id}/', 'operator', 'upload'),

  // Admins: boards, PAC changes, the device-script catalogue, users, the audit log.
  R('POST', '/api/boards/', 'admin', 'board.create'),
  R('DELETE', '/api/boards/{id}/', 'admin', 'board.delete'),
  R('POST', '/api/pacs/activate/', 'admin', 'pac.activate'),
  R('POST', '/api/pacs/install/', 'admin', 'pac.install'),
  R('POST', '/api/device-scripts/', 'admin', 'device_script.create'),
  R(['PUT', 'PATCH'], '/api/device-scripts/{id}/', 'admin', 'device_script.update'),
  R('DELETE', '/api/device-scripts/{id}/', 'admin', 'device_script.delete'),
  R('GET', '/api/users/', 'admin'),
  R('POST', '/api/users/', 'admin', 'self'),
  R('GET', '/api/users/{id}/', 'admin'),
  R('PATCH', '/api/users/{id}/', 'admin', 'self'),
  R('DELETE', '/api/users/{id}/', 'admin', 'self'),
  R('GET', '/api/audit/', 'admin'),
];

interface CompiledRoute extends RouteRole {
  pattern: RegExp;
  paramNames: string[];
}

function compile(r: RouteRole): CompiledRoute {
  const paramNames: string[] = [];
  const source = r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}/g, (_m, name: string) => {
    paramNames.push(name);
    // `{path}` is the rest of the path (proxy and results-folder routes); others are one segment.
    return name === 'path' ? '(.*)' : '([^/]+)';
  });
  return { ...r, pattern: new RegExp(`^${source}$`), paramNames };
}

// Literal paths win over templated ones (`/api/invocations/create/` before `/api/invocations/{id}/`).
const COMPILED = ROUTE_ROLES.map(compile).sort((a, b) => a.paramNames.length - b.paramNames.length);

export interface RouteMatch {
  route: RouteRole;
  params: Record<string, string>;
}

/** The map entry for a request (method, normalised path), or undefined. */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  const m = method.toUpperCase();
  const lookup = m === 'HEAD' ? ['HEAD', 'GET'] : [m];
  for (const want of lookup) {
    for (const r of COMPILED) {
      if (!r.methods.includes(want)) continue;
      const hit = r.pattern.exec(path);
      if (!hit) continue;
      const params: Record<string, string> = {};
      r.paramNames.forEach((name, i) => (params[name] = hit[i + 1] ?? ''));
      return { route: r, params };
    }
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
