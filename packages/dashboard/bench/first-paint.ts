/**
 * The dashboard's first useful paint on loopback in headless Chromium (run by hand, prints
 * figures; not a test):
 *
 *   npx tsx packages/dashboard/bench/first-paint.ts [--runs 9]
 *
 * The production build (packages/dashboard/dist, built first if stale) served by the real
 * control plane in this process (embedded database unless DATABASE_URL is set; auth on, one
 * admin signed in, 20 invocations). Each run opens a fresh page in a context holding the
 * session cookie and times `goto('/invocations')` until the list's rows are drawn (first
 * useful paint), with Chromium's first-contentful-paint. A first run warms the server and is
 * not counted. Also: the gzipped size of the JavaScript and CSS the first page loads.
 * Timings on a loaded machine are upper bounds: the load average is printed before and after.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { loadConfig, startServer } from '@mm/server';
import { existsSync } from 'node:fs';

// The browser tests' launch settings (packages/dashboard/test/browser-support.ts, which needs vitest).
const CHROMIUM = process.env.MM_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dashboardDir = path.join(repoRoot, 'packages/dashboard');
const runsArg = process.argv.indexOf('--runs');
const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 9;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (!hasChromium) {
  console.error(`no Chromium at ${CHROMIUM}`);
  process.exit(2);
}
spawnSync(process.execPath, [path.join(dashboardDir, 'scripts/build-if-needed.mjs')], { cwd: dashboardDir, stdio: 'inherit' });

// What the first page loads: index.html's script and stylesheet, and their module preloads.
const html = await fs.readFile(path.join(dashboardDir, 'dist/index.html'), 'utf8');
const assets = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
let gz = 0;
for (const a of assets) gz += (await fs.stat(path.join(dashboardDir, 'dist', `${a}.gz`))).size;
console.log(`first page assets (${assets.join(', ')}): ${(gz / 1024).toFixed(1)} KB gzipped (budget 150 KB)`);

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-bench-paint-'));
const token = 'bench-first-paint-token';
const server = await startServer({ config: loadConfig({ PORT: '0', MM_DATA_DIR: dataDir, LOG_LEVEL: 'silent', MM_API_TOKEN: token }) });
const base = server.url.replace(/\/$/, '');
const api = (p: string, body: unknown) =>
  fetch(base + p, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
try {
  await api('/api/users/', { username: 'bench', password: 'bench-password-123456', role: 'admin' });
  for (let i = 0; i < 20; i++) await api('/api/invocations/create/', { name: `paint-${i}`, description: 'for the first-paint bench' });
  const login = await fetch(base + '/api/auth/login/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ username: 'bench', password: 'bench-password-123456' }),
  });
  const cookie = /mm_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1];
  if (!cookie) throw new Error(`sign-in failed: ${login.status}`);
  const context = await browser.newContext({ baseURL: base });
  await context.addCookies([{ name: 'mm_session', value: cookie, url: base }]);

  console.log(`load before: ${load()}`);
  const useful: number[] = [];
  const fcp: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto('/invocations');
    await page.getByRole('link', { name: 'paint-19', exact: true }).waitFor();
    const t = performance.now() - t0;
    const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1);
    await page.close();
    if (i === 0) continue; // the warm-up
    useful.push(t);
    fcp.push(paint);
  }
  console.log(`first useful paint (list drawn), ${runs} runs: median ${median(useful).toFixed(0)} ms, min ${Math.min(...useful).toFixed(0)}, max ${Math.max(...useful).toFixed(0)}`);
  console.log(`first contentful paint: median ${median(fcp).toFixed(0)} ms`);
  console.log(`load after: ${load()}`);
} finally {
  await browser.close();
  await server.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}
