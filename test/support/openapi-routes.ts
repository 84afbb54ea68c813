/**
 * Route keys shared by the tests that hold the OpenAPI document against something else
 * (the app's routes, docs/api.md): a route is `METHOD path` with every path parameter
 * (`:id`, `:id{[0-9]+}`, `{id}`, `<id>`, a trailing `*`) reduced to `{}`.
 */

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function normalisePath(p: string): string {
  return p
    .replace(/:[A-Za-z_][\w]*(\{[^}]*\})?\??/g, '{}') // Hono params, with an optional regex
    .replace(/\{[^}]*\}/g, '{}') // OpenAPI params
    .replace(/<[^>]*>/g, '{}') // the docs' <name> params
    .replace(/\/\*$/, '/{}'); // a trailing wildcard is one (rest-of-path) parameter
}

/** The documented methods (upper case) of each normalised path of an OpenAPI document. */
export function documentedRoutes(doc: { paths?: Record<string, Record<string, unknown>> }): Map<string, Set<string>> {
  const documented = new Map<string, Set<string>>();
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    const methods = documented.get(normalisePath(p)) ?? new Set<string>();
    for (const m of HTTP_METHODS) if (item[m]) methods.add(m.toUpperCase());
    documented.set(normalisePath(p), methods);
  }
  return documented;
}
