import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardRoutes } from '../src/routes/dashboard.ts';

/** The static dashboard at `/`: caching, gzip twins, client-route fallback, never for /api/. */
describe('the dashboard route', () => {
  let dist: string;
  let app: Hono;

  beforeAll(async () => {
    dist = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-dist-'));
    await fs.mkdir(path.join(dist, 'assets'));
    await fs.writeFile(path.join(dist, 'index.html'), '<!doctype html><title>x</title><script src="/assets/app-abc123.js"></script>');
    await fs.writeFile(path.join(dist, 'assets', 'app-abc123.js'), 'console.log("app")');
    await fs.writeFile(path.join(dist, 'assets', 'app-abc123.js.gz'), gzipSync('console.log("app")'));
    await fs.writeFile(path.join(os.tmpdir(), 'mm-dist-secret.txt'), 'secret');
    app = new Hono();
    app.route('/', dashboardRoutes(dist));
    app.notFound((c) => c.json({ code: 'route_not_found' }, 404));
  });
  afterAll(async () => {
    await fs.rm(dist, { recursive: true, force: true });
  });

  it('serves index.html at / without long caching', async () => {
    const res = await app.request('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toContain('/assets/app-abc123.js');
  });

  it('serves hashed assets for a year, gzipped to clients that accept it', async () => {
    const plain = await app.request('/assets/app-abc123.js');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toContain('text/javascript');
    expect(await plain.text()).toBe('console.log("app")');
    const gz = await app.request('/assets/app-abc123.js', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString()).toBe('console.log("app")');
  });

  it('answers client routes with the app, but a missing asset or any /api/ path with 404', async () => {
    const route = await app.request('/invocations/12');
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<!doctype html>');
    expect((await app.request('/assets/app-old999.js')).status).toBe(404);
    expect((await app.request('/favicon.png')).status).toBe(404);
    const api = await app.request('/api/nothing/');
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ code: 'route_not_found' });
    expect((await app.request('/api')).status).toBe(404);
  });

  it('never serves a file outside the build folder', async () => {
    for (const p of ['/../mm-dist-secret.txt', '/%2e%2e/mm-dist-secret.txt', '/assets/..%2f..%2fmm-dist-secret.txt']) {
      const res = await app.request(p);
      expect(await res.text()).not.toContain('secret');
    }
  });

  it('says clearly how to build it when the files are missing', async () => {
    const missing = new Hono();
    missing.route('/', dashboardRoutes(path.join(dist, 'nope')));
    const res = await missing.request('/');
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).toContain('The dashboard is not built');
    expect(text).toContain('--filter @mm/dashboard build');
  });
});
