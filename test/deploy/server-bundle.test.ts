import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { serverCluster, type ServerCluster } from '../support/processes.ts';
import { buildBundle, repoRoot } from './bundles.ts';

/**
 * The control plane as the production image runs it: `packages/server/scripts/bundle.mjs`
 * makes one JavaScript file (our workspace packages inlined, dependencies from node_modules),
 * started with plain `node`, no tsx. Built into a folder of its own inside the package (its
 * dependencies resolve from the package's node_modules, as in the image's /app), at another
 * depth than dist/, so a path the bundler failed to rewrite would show.
 */
const serverPkg = path.join(repoRoot, 'packages/server');
const version = (JSON.parse(fs.readFileSync(path.join(serverPkg, 'package.json'), 'utf8')) as { version: string }).version;
const outDir = path.join(serverPkg, '.tmp', `bundle-test-${process.pid}`, 'deeper');
const entry = path.join(outDir, 'mm-server.mjs');

beforeAll(() => {
  buildBundle('server', outDir);
});
afterAll(() => {
  fs.rmSync(path.dirname(outDir), { recursive: true, force: true });
});

describe('the server bundle', () => {
  it('is one JavaScript file that loads no TypeScript (beside it only the dashboard\'s static files)', () => {
    const dashboardBuilt = fs.existsSync(path.join(repoRoot, 'packages/dashboard/dist/index.html'));
    expect(fs.readdirSync(outDir).sort()).toEqual(dashboardBuilt ? ['dashboard', 'mm-server.mjs'] : ['mm-server.mjs']);
    if (dashboardBuilt) {
      const files = fs.readdirSync(path.join(outDir, 'dashboard'), { recursive: true, encoding: 'utf8' });
      expect(files).toContain('index.html');
      expect(files.filter((f) => /\.(ts|tsx)$/.test(f))).toEqual([]);
    }
    const text = fs.readFileSync(entry, 'utf8');
    expect(text).not.toMatch(/from ["']@mm\//); // workspace packages are inlined
    expect(text).not.toMatch(/(?:from|import\()\s*["'][^"']*\.ts["']/);
    expect(text).not.toMatch(/(?:from|import\()\s*["']tsx/);
  });
});

describe.each(dbKinds)('the server bundle on the %s database', (kind) => {
  let cluster: ServerCluster;
  beforeAll(async () => {
    cluster = await serverCluster(kind, {}, [], entry);
  });
  afterAll(async () => {
    await cluster?.cleanup();
  });

  it('migrates, serves the API and its documents, and stops cleanly on SIGTERM', async () => {
    const server = await cluster.start();
    const health = await json(await server.api('/api/health/'));
    expect(health).toMatchObject({ status: 'ok', version, database: 'ok' });

    const created = await server.api('/api/invocations/create/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bundled', description: '' }),
    });
    expect(created.status).toBe(201);
    // The seeded catalogue entry: migrations and seeding ran.
    const scripts = await json(await server.api('/api/device-scripts/'));
    expect(JSON.stringify(scripts)).toContain('gpio');

    expect((await server.api('/api/openapi.json')).status).toBe(200);
    const docs = await server.api('/api/docs/');
    expect(docs.status).toBe(200);
    const page = await docs.text();
    const asset = /src="([^"]*swagger-ui-bundle\.js)"/.exec(page)?.[1];
    expect(asset, page).toBeDefined();
    expect((await server.api(new URL(asset!, server.url + '/api/docs/').pathname)).status).toBe(200);

    expect(await server.stop()).toEqual({ code: 0, signal: null });
  });
});
