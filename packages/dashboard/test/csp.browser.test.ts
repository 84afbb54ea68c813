/**
 * The dashboard and the API docs page under the server's Content-Security-Policy, in
 * Chromium: every page renders, signing in and a state change work (Referrer-Policy must
 * not turn the dashboard's own Origin into `null`), and the browser reports no violation.
 * And another site cannot frame it.
 */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { CHROMIUM, CHROMIUM_ARGS, screenshot, signIn, skipWithoutChromium } from './browser-support.ts';

const ADMIN_TOKEN = 'csp-test-admin-token';
const dashboardDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAGES = ['/invocations', '/boards', '/operations', '/videos', '/device-scripts', '/tokens', '/admin/users', '/admin/audit'];

/** Collects what the page reports: CSP violations (the DOM event) and console errors. */
async function watch(page: Page): Promise<string[]> {
  const problems: string[] = [];
  // Page code as a string: the test project has Node's types only, not the DOM's.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && /CSP violation|Content Security Policy|Refused to/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

describe.skipIf(skipWithoutChromium('the dashboard under its Content-Security-Policy in Chromium'))('the dashboard under the Content-Security-Policy, in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let base: string;
  const admin = { username: 'cspadmin', password: 'csp-admin-password-1' };

  beforeAll(async () => {
    const built = spawnSync(process.execPath, [path.join(dashboardDir, 'scripts', 'build-if-needed.mjs')], { cwd: dashboardDir, stdio: 'inherit' });
    expect(built.status).toBe(0);
    server = await startTestServer(dbKinds[0]!, { MM_API_TOKEN: ADMIN_TOKEN });
    base = server.url.replace(/\/$/, '');
    const made = await server.api('/api/users/', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...admin, role: 'admin' }),
    });
    expect(made.status).toBe(201);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  }, 180_000);
  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await server?.stop();
  });

  it('renders every page and makes a change with no violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = await watch(page);
    await signIn(page, base, admin.username, admin.password);
    for (const p of PAGES) {
      await page.goto(base + p);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForLoadState('networkidle');
    }
    await screenshot(page, 'csp-audit');
    // A state change from the dashboard: its Origin must reach the server as its own (not `null`).
    await page.goto(base + '/tokens');
    await page.getByLabel('Name', { exact: true }).fill('under-csp');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('cell', { name: 'under-csp', exact: true }).waitFor();
    await screenshot(page, 'csp-tokens');
    // An upload: the page hashes the file with WebAssembly (hash-wasm), then sends it.
    const inv = await server.api('/api/invocations/create/', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'under csp', description: '' }),
    });
    const { id } = (await inv.json()) as { id: number };
    await page.goto(`${base}/invocations/${id}`);
    await page.locator('#slot-parameter-input').setInputFiles({ name: 'params.json', mimeType: 'application/json', buffer: Buffer.from('{"duration_s":1}') });
    await page.getByTestId('slot-parameter').getByRole('link', { name: 'params.json' }).waitFor({ timeout: 60_000 });
    await screenshot(page, 'csp-upload');
    expect(problems).toEqual([]);
    // And the watch does see a violation: an inline script is blocked and reported.
    await page.evaluate("const s = document.createElement('script'); s.textContent = 'window.inlineRan = true'; document.body.append(s);");
    await expect.poll(() => problems.join('\n')).toMatch(/script-src/);
    expect(await page.evaluate("'inlineRan' in window")).toBe(false);
    await page.close();
  }, 120_000);

  it('renders the API docs page (swagger-ui) with no violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = await watch(page);
    await signIn(page, base, admin.username, admin.password);
    await page.goto(base + '/api/docs/');
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 30_000 });
    await page.locator('.opblock').first().waitFor();
    await screenshot(page, 'csp-api-docs');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('cannot be framed by another site', async () => {
    // Another origin (another port) that frames the dashboard.
    const framer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>evil</title><iframe id="f" src="${base}/invocations" width="800" height="600"></iframe>`);
    });
    await new Promise<void>((r) => framer.listen(0, '127.0.0.1', r));
    try {
      const page = await browser.newPage();
      const blocked: string[] = [];
      page.on('console', (m) => blocked.push(m.text()));
      const { port } = framer.address() as { port: number };
      await page.goto(`http://127.0.0.1:${port}/`);
      await expect.poll(() => blocked.join('\n'), { timeout: 15_000 }).toMatch(/frame-ancestors|X-Frame-Options|Refused to (display|frame)/);
      // The frame holds no dashboard.
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const inside = await frame?.evaluate<string>("document.body ? document.body.innerText : ''").catch(() => '');
      expect(inside ?? '').not.toContain('Model Manager');
      await page.close();
    } finally {
      framer.close();
    }
  }, 60_000);
});
