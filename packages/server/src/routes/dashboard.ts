import { createReadStream, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.ts';

/**
 * The web dashboard: the static files `packages/dashboard` builds (`vite build`) served at `/`.
 * Hashed files under `/assets/` are cached for a year; `index.html` is revalidated every time,
 * so a new build is picked up at once. Any other GET outside `/api/` that asks for HTML gets
 * `index.html` (the app routes on the client); nothing under `/api/` ever falls back to it.
 */
const WORKSPACE_DIST = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));
/** Beside the production bundle (scripts/bundle.mjs copies it there); built with path.join so the bundler leaves it alone. */
const BUNDLED_DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dashboard');

function defaultDist(): string {
  return existsSync(path.join(BUNDLED_DIST, 'index.html')) ? BUNDLED_DIST : WORKSPACE_DIST;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Model Manager</title>
<body style="font-family:sans-serif;max-width:40rem;margin:3rem auto">
<h1>The dashboard is not built</h1>
<p>The API is running (see <a href="/api/docs/">/api/docs/</a>), but the dashboard's files are missing.
Build them with <code>npx -y pnpm@10 --filter @mm/dashboard build</code> (the workspace's install does it too) and reload.</p>
</body></html>`;

export function dashboardRoutes(distDir: string = defaultDist()) {
  const app = new Hono<AppEnv>();
  const root = path.resolve(distDir);

  /** The file (or its gzip twin, `<file>.gz`, written by the build, when the client accepts gzip). */
  async function sendFile(file: string, cache: string, method: string, gzipOk: boolean): Promise<Response | undefined> {
    const stat = await fs.stat(file).catch(() => undefined);
    if (!stat?.isFile()) return undefined;
    const gz = gzipOk ? await fs.stat(`${file}.gz`).catch(() => undefined) : undefined;
    const headers: Record<string, string> = {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-length': String(gz ? gz.size : stat.size),
      'cache-control': cache,
      'x-content-type-options': 'nosniff',
      vary: 'accept-encoding',
    };
    if (gz) headers['content-encoding'] = 'gzip';
    if (method === 'HEAD') return new Response(null, { status: 200, headers });
    // Readable.toWeb: a Node stream as the response body (files stream, never buffered whole).
    const body = Readable.toWeb(createReadStream(gz ? `${file}.gz` : file)) as ReadableStream<Uint8Array>;
    return new Response(body, { status: 200, headers });
  }

  async function sendIndex(method: string, gzipOk: boolean): Promise<Response> {
    const res = await sendFile(path.join(root, 'index.html'), 'no-cache', method, gzipOk);
    return (
      res ??
      new Response(NOT_BUILT, { status: 503, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } })
    );
  }

  app.on(['GET', 'HEAD'], '*', async (c, next) => {
    const urlPath = c.req.path;
    if (urlPath === '/api' || urlPath.startsWith('/api/')) return next();
    const gzipOk = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    if (urlPath === '/' || urlPath === '/index.html') return sendIndex(c.req.method, gzipOk);

    let decoded: string;
    try {
      decoded = decodeURIComponent(urlPath);
    } catch {
      return c.notFound();
    }
    const file = path.resolve(root, '.' + decoded);
    if (file.startsWith(root + path.sep) && !decoded.includes('\0') && !decoded.endsWith('.gz')) {
      const immutable = decoded.startsWith('/assets/');
      const res = await sendFile(file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache', c.req.method, gzipOk);
      if (res) return res;
      // A missing hashed file is a stale page asking for an old build: a plain 404, not the app.
      if (immutable || path.extname(decoded) !== '') return c.notFound();
    }
    // A client-side route (e.g. /invocations/12): the app's page.
    return sendIndex(c.req.method, gzipOk);
  });

  return app;
}
