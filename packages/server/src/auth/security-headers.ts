import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.ts';

/**
 * What the dashboard and the API docs page load: their own scripts (and WebAssembly), styles,
 * images, media and API calls, nothing inline and nothing from elsewhere (they work offline). `data:` and
 * `blob:` images and media: the empty favicon, swagger-ui's icons, local video previews.
 * Nobody may frame them (clickjacking): `frame-ancestors 'none'`, and X-Frame-Options for
 * browsers that predate it.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // wasm-unsafe-eval: the dashboard hashes files with WebAssembly (hash-wasm); it allows
  // compiling WebAssembly only, not eval() of JavaScript.
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `same-origin`, not `no-referrer`: with no-referrer a browser sends `Origin: null` on the
 * dashboard's own POSTs, which the cross-site check (auth/origin.ts) must refuse.
 */
const HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

/**
 * Sets the security headers on every response that has not set its own (a device script's
 * proxied page keeps its `sandbox` policy).
 */
export function securityHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.res.status === 101) return;
    for (const [name, value] of Object.entries(HEADERS)) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  };
}
