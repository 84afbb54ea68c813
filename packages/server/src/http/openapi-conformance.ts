/**
 * What the generated OpenAPI document leaves out, filled in once for every route (issue 27):
 * a problem+json schema on every error answer, 401 (and 403) on every authenticated route
 * (`security: []` on public ones), an operationId on every operation, the response headers
 * clients rely on (Location, Upload-Offset, Upload-Expires, Content-Range, ETag, Tus-Resumable)
 * and a body for 206. Route modules keep describing what is particular to them.
 */

type Json = Record<string, unknown>;

/** Who may call a route (auth/route-roles.ts hands its table in: `public`, or the least role). */
export interface RouteAccess {
  path: string;
  methods: readonly string[];
  access: string;
}

type Operation = { operationId?: string; security?: unknown[]; responses?: Record<string, Json>; parameters?: Json[] };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

export const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', description: 'Stable snake_case code (`validation_failed`, `invocation_not_found`, …)' },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
} as const;

const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const DOWNLOAD_HEADERS = {
  ETag: header('Strong entity tag of the file (its sha256, quoted)'),
  'Last-Modified': header('When the file was stored'),
  'Accept-Ranges': header('`bytes`'),
};
const TUS_RESUMABLE = { 'Tus-Resumable': header('`1.0.0`') };
const UPLOAD_STATE = {
  ...TUS_RESUMABLE,
  'Upload-Offset': header('Bytes received so far', { type: 'string', pattern: '^[0-9]+$' }),
  'Upload-Expires': header('When the upload is removed if untouched (HTTP date)'),
};

const normalise = (p: string) => p.replace(/\{[^}]*\}/g, '{}');

/** `get /api/invocations/{id}/files/{kind}/` → `getInvocationsIdFilesKind` (made unique with a number if need be). */
function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\//, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

function accessOf(routes: readonly RouteAccess[], method: string, path: string): string | undefined {
  const m = method.toUpperCase();
  const wanted = normalise(path);
  return routes.find((r) => normalise(r.path) === wanted && (r.methods.includes(m) || (m === 'HEAD' && r.methods.includes('GET'))))?.access;
}

export function conformOpenApiDocument<T extends object>(input: T, routes: readonly RouteAccess[]): T {
  const doc = input as Json & { paths?: Record<string, Record<string, Operation>>; components?: Json };
  doc.servers ??= [{ url: '/' }];
  const components = (doc.components ??= {}) as Json;
  const schemas = (components.schemas ??= {}) as Json;
  schemas.Problem = PROBLEM_SCHEMA;
  const used = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      let id = op.operationId ?? operationIdOf(method, path);
      for (let n = 2; used.has(id); n++) id = `${operationIdOf(method, path)}${n}`;
      used.add(id);
      op.operationId = id;
      const responses = (op.responses ??= {});
      const access = accessOf(routes, method, path);
      if (access === 'public' && path !== '/api/agent/connect/') op.security = [];
      else {
        responses['401'] ??= { description: 'Missing or wrong credentials (`unauthorized`)' };
        if (access !== 'viewer' || !['get', 'head', 'options'].includes(method)) {
          responses['403'] ??= { description: 'Role too low (`forbidden`) or a cross-site request (`cross_origin`)' };
        }
      }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400 && !response.content) response.content = problemContent;
        if (status === '206') {
          response.headers = { ...DOWNLOAD_HEADERS, 'Content-Range': header('`bytes <first>-<last>/<size>`'), ...(response.headers as Json) };
          response.content ??= (responses['200']?.content as Json | undefined) ?? { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };
        }
        if (status === '200' && responses['206']) response.headers = { ...DOWNLOAD_HEADERS, ...(response.headers as Json) };
        if (status === '202') response.headers = { Location: header('The operation (`/api/operations/<id>/`)'), ...(response.headers as Json) };
        if (status === '416') response.headers = { 'Content-Range': header('`bytes */<size>`'), ...(response.headers as Json) };
        if (path.startsWith('/api/uploads/') && method !== 'get') response.headers = { ...TUS_RESUMABLE, ...(response.headers as Json) };
      }
      if (path === '/api/uploads/' && method === 'post' && responses['201']) {
        responses['201'].headers = { ...UPLOAD_STATE, Location: header('The upload URL (`/api/uploads/<id>/`)'), ...(responses['201'].headers as Json) };
      }
      if (path === '/api/uploads/{id}/' && responses[method === 'head' ? '200' : '204'] && ['head', 'patch', 'post'].includes(method)) {
        const ok = responses[method === 'head' ? '200' : '204']!;
        ok.headers = { ...UPLOAD_STATE, ...(method === 'head' ? { 'Upload-Length': header('The file size') } : {}), ...(ok.headers as Json) };
      }
    }
  }
  return input;
}
