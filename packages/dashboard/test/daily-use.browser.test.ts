import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.ts';
import { createInvocation as createInvocationVia, expectAccessible, personalToken, screenshot, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

/**
 * What a new user tripped over (issue 32's dashboard items), in a real Chromium against the
 * real control plane and a simulated board: confirms, Cancel beside the live log, Resume,
 * the upload limit, role pages, recovery after a restart, empty states, copy buttons, a
 * never-connected board, valid `pattern`s, and every page of the route table at desktop and
 * phone width, light and dark.
 */
const MAX_UPLOAD = 4 * 1024 * 1024;
const routesSource = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/routes.tsx');

/** How far the page scrolls sideways (0: not at all). */
function sideScroll(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;
}

/** The elements that reach past the window's right edge with nothing clipping them (for the failure message). */
function pastTheEdge(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const edge = document.documentElement.clientWidth;
    const found = [];
    for (const el of document.querySelectorAll('main *')) {
      if (el.getBoundingClientRect().right <= edge + 0.5) continue;
      let up = el.parentElement;
      while (up && up !== document.body && getComputedStyle(up).overflowX === 'visible') up = up.parentElement;
      if (up && up !== document.body) continue;
      found.push(el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"');
    }
    return found.slice(-5).join('; ');
  })()`) as Promise<string>;
}

/** The page's sideways overflow once any is still there after 2 s (a lasting one is what a person meets). */
async function settledSideScroll(page: Page): Promise<number> {
  let over = await sideScroll(page);
  for (let waited = 0; over > 0 && waited < 2000; waited += 100) {
    await page.waitForTimeout(100);
    over = await sideScroll(page);
  }
  return over;
}

/** The page is drawn: its heading is there and nothing says it is still loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
}

describe.skipIf(skipWithoutChromium('the dashboard’s daily use in Chromium'))('the dashboard in Chromium: daily use', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let tmp: string;

  beforeAll(async () => {
    h = await startHarness({ serverEnv: { MM_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) } });
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-daily-'));
    context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 180_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  const createInvocation = (name: string, params?: Record<string, unknown>) => createInvocationVia(h, name, params);

  it('a first visit with no invocations says what to do first', async () => {
    await page.goto('/invocations');
    const empty = page.getByTestId('empty-invocations');
    await empty.getByRole('heading', { name: 'No invocations yet' }).waitFor();
    expect(await empty.textContent()).toMatch(/New invocation/);
    expect(await empty.textContent()).toMatch(/Execute/);
    await screenshot(page, 'daily-01-invocations-empty');
    await expectAccessible(page, 'invocations empty');
  });

  it('a board that never connected is a step to do, not a red alarm with a PAC error; deleting it is confirmed', async () => {
    const res = await h.api('/api/boards/', { method: 'POST', json: { name: 'spare-board' } });
    expect(res.status).toBe(201);
    await page.goto('/boards');
    const row = page.getByTestId('board-spare-board');
    await row.getByText('not connected yet').waitFor();
    expect(await row.locator('.badge-offline').count()).toBe(0);
    expect(await row.textContent()).toContain('never');
    await screenshot(page, 'daily-02-boards-never-connected');
    await row.getByRole('link', { name: 'spare-board' }).click();
    await page.getByTestId('pacs-offline').waitFor();
    expect(await page.getByTestId('pacs-offline').textContent()).toMatch(/has not connected yet/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await screenshot(page, 'daily-03-board-never-connected');
    await expectAccessible(page, 'board never connected');

    await page.getByRole('button', { name: 'Delete board' }).click();
    const ask = page.getByRole('alertdialog');
    expect(await ask.textContent()).toMatch(/Delete the board “spare-board”\?/);
    await screenshot(page, 'daily-04-board-delete-asked');
    await ask.getByRole('button', { name: 'Keep it' }).click();
    expect((await h.api('/api/boards/')).status).toBe(200);
    await page.getByRole('button', { name: 'Delete board' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL(/\/boards$/);
    await page.getByTestId('board-sim-board').waitFor();
    expect(await page.getByTestId('board-spare-board').count()).toBe(0);
  });

  it('a wrong password is refused in words and cleared; the username stays', async () => {
    const ctx = await h.browser.newContext({ baseURL: base });
    try {
      const p = await ctx.newPage();
      await p.goto('/');
      await p.getByLabel('Username').fill(h.users.operator.username);
      await p.getByLabel('Password').fill('not-the-password');
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('alert').getByText(/were not accepted/).waitFor();
      expect(await p.getByLabel('Password').inputValue()).toBe('');
      expect(await p.getByLabel('Username').inputValue()).toBe(h.users.operator.username);
      await screenshot(p, 'daily-05-sign-in-refused');
    } finally {
      await ctx.close();
    }
  });

  it('the token page: a Copy button for the new token, and no literal backticks', async () => {
    await page.goto('/tokens');
    await page.getByRole('heading', { name: 'My tokens', level: 1 }).waitFor();
    expect(await page.locator('main').textContent()).not.toContain('`');
    await page.getByText(/You have no tokens yet/).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByTestId('new-token').inputValue();
    expect(token.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy New token' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    await screenshot(page, 'daily-06-token-created');
    await expectAccessible(page, 'token created');

    // Revoking asks first.
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText(/You have no tokens yet/).waitFor();

    // An admin sees everyone's tokens, with their owner, and may revoke them.
    const veras = await personalToken(base, h.users.viewer);
    const bearerMe = () => fetch(`${base}/api/auth/me/`, { headers: { authorization: `Bearer ${veras}` } });
    expect((await bearerMe()).status).toBe(200);
    await page.getByLabel("Show everyone's tokens (an admin may revoke any)").check();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: h.users.viewer.username, exact: true }) });
    await row.first().waitFor();
    await screenshot(page, 'daily-06b-everyones-tokens');
    await row.first().getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, revoke' }).click();
    await expect.poll(async () => (await bearerMe()).status).toBe(401);
  });

  it('users: a generated password shown once with Copy; a role change is confirmed and then said; declining keeps the role', async () => {
    await page.goto('/admin/users');
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Username').fill('gen');
    await form.getByLabel('Role').selectOption('viewer');
    await form.getByRole('button', { name: 'Add user' }).click();
    const password = await page.getByTestId('new-password').inputValue();
    expect(password.length).toBeGreaterThanOrEqual(8);
    await screenshot(page, 'daily-07-user-generated-password');
    // The generated password signs in.
    const login = await fetch(`${base}/api/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'gen', password }) });
    expect(login.status).toBe(200);

    const role = page.getByLabel('Role of gen');
    await role.selectOption('operator');
    const ask = page.getByRole('alertdialog');
    expect(await ask.textContent()).toMatch(/Make gen an? operator\?/);
    await ask.getByRole('button', { name: 'Keep it' }).click();
    await expect.poll(() => role.inputValue()).toBe('viewer');
    const listed = async () => ((await (await h.api('/api/users/')).json()) as { users: Array<{ username: string; role: string }> }).users.find((u) => u.username === 'gen')?.role;
    expect(await listed()).toBe('viewer');

    await role.selectOption('operator');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, change the role' }).click();
    await page.getByTestId('users-notice').getByText('gen is now an operator.').waitFor();
    expect(await listed()).toBe('operator');
    await screenshot(page, 'daily-08-role-changed');
    await expectAccessible(page, 'role changed');

    // A reset: a new password made and shown once; with "also revoke", gen's tokens stop working.
    const gens = await personalToken(base, { username: 'gen', password });
    await page.getByRole('button', { name: 'Reset password of gen' }).click();
    const reset = page.getByRole('alertdialog');
    await reset.getByLabel('Also revoke their personal tokens').check();
    await screenshot(page, 'daily-08b-reset-asked');
    await reset.getByRole('button', { name: 'Yes, reset it' }).click();
    await expect.poll(() => page.getByTestId('new-password').inputValue()).not.toBe(password);
    const fresh = await page.getByTestId('new-password').inputValue();
    const signInAsGen = (pw: string) => fetch(`${base}/api/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'gen', password: pw }) });
    expect((await signInAsGen(fresh)).status).toBe(200);
    expect((await signInAsGen(password)).status).toBe(401);
    expect((await fetch(`${base}/api/auth/me/`, { headers: { authorization: `Bearer ${gens}` } })).status).toBe(401);
  });

  it('a page a role may not see says which role it needs, not "Page not found"', async () => {
    const ctx = await h.browser.newContext({ baseURL: base });
    try {
      const p = await ctx.newPage();
      await signIn(p, base, h.users.viewer.username, h.users.viewer.password);
      for (const [url, title] of [
        ['/admin/audit', 'Audit log'],
        ['/admin/users', 'Users'],
      ] as const) {
        await p.goto(url);
        await p.getByRole('heading', { name: title, level: 1 }).waitFor();
        await p.getByText('This needs the admin role.').waitFor();
        expect(await p.getByText('Page not found').count()).toBe(0);
      }
      await screenshot(p, 'daily-09-viewer-needs-admin');
    } finally {
      await ctx.close();
    }
  });

  it('uploads: a file over the limit is refused before hashing, with the limit; Pause then Resume; Execute waits for the upload', async () => {
    const id = await createInvocation('uploads');
    const big = path.join(tmp, 'too-big.bin');
    await fs.writeFile(big, randomBytes(MAX_UPLOAD + 1024));
    const file = path.join(tmp, 'weights.bin');
    await fs.writeFile(file, randomBytes(3 * 1024 * 1024));
    await page.goto(`/invocations/${id}`);
    const slot = page.getByTestId('slot-weights');
    await slot.getByLabel('Model weights: file to upload').setInputFiles(big);
    await slot.getByRole('alert').getByText(/too-big\.bin is 4,195,328 bytes: the server accepts files up to 4,194,304 bytes \(4\.0 MB\)/).waitFor();
    expect(await slot.getByText(/Computing the checksum/).count()).toBe(0);
    expect(await slot.getByRole('progressbar').count()).toBe(0);
    await screenshot(page, 'daily-10-upload-over-limit');

    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
    try {
      await slot.getByLabel('Model weights: file to upload').setInputFiles(file);
      await slot.getByTestId('slot-weights-progress').waitFor({ timeout: 30_000 });
      // While it runs, Execute and Transfer wait for it, and say why.
      await expect.poll(() => page.getByRole('button', { name: 'Execute' }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Transfer files' }).isDisabled()).toBe(true);
      expect(await page.getByTestId('run-blocked').textContent()).toBe('Wait for the upload to finish.');
      await screenshot(page, 'daily-11-uploading-execute-waits');
      await slot.getByRole('button', { name: 'Pause upload' }).click();
      await slot.getByText(/paused at/).waitFor();
      await slot.getByRole('button', { name: 'Resume upload' }).waitFor();
      await expect.poll(() => page.getByRole('button', { name: 'Execute' }).isDisabled()).toBe(false);
      await screenshot(page, 'daily-12-upload-paused');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await slot.getByRole('button', { name: 'Resume upload' }).click();
      await slot.getByText(/^Uploaded/).waitFor({ timeout: 60_000 });
    } finally {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await cdp.detach();
    }
    await slot.getByRole('link', { name: 'weights.bin' }).waitFor();
    await expectAccessible(page, 'upload resumed');

    // Removing the file asks first.
    await slot.getByRole('button', { name: 'Remove Model weights' }).click();
    await slot.getByRole('alertdialog').getByRole('button', { name: 'Yes, remove' }).click();
    await slot.getByText('No file').waitFor();
  }, 120_000);

  it('the invocation page: Cancel beside the live log, confirmed; deleting the invocation is confirmed', async () => {
    const id = await createInvocation('cancel-here', { duration_s: 300 });
    // A board that is not online: Execute waits, and says why.
    expect((await h.api('/api/boards/', { method: 'POST', json: { name: 'idle-board' } })).status).toBe(201);
    await page.goto(`/invocations/${id}`);
    const picker = page.getByLabel('Board');
    await picker.selectOption({ label: 'idle-board (offline)' });
    await expect.poll(() => page.getByRole('button', { name: 'Execute' }).isDisabled()).toBe(true);
    expect(await page.getByTestId('run-blocked').textContent()).toMatch(/The board idle-board is offline/);
    await screenshot(page, 'daily-12b-board-offline-execute-waits');
    await picker.selectOption({ label: 'sim-board (online)' });
    await expect.poll(() => page.getByRole('button', { name: 'Execute' }).isDisabled()).toBe(false);
    await page.getByRole('button', { name: 'Execute' }).click();
    const live = page.locator('.op-live');
    await live.getByTestId('live-log').getByText(/simulated runner/).waitFor({ timeout: 60_000 });
    // In the log's own row, next to it.
    const cancel = live.locator('.row', { has: page.getByRole('heading', { name: 'Log' }) }).getByRole('button', { name: 'Cancel operation' });
    await cancel.click();
    const ask = live.getByRole('alertdialog');
    expect(await ask.textContent()).toMatch(/Cancel operation #\d+ \(execute\)\?/);
    await screenshot(page, 'daily-13-cancel-beside-log');
    await ask.getByRole('button', { name: 'Yes, cancel it' }).click();
    await live.getByText('cancelled', { exact: true }).first().waitFor({ timeout: 60_000 });
    await live.getByRole('button', { name: 'Cancel operation' }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Keep it' }).click();
    expect((await h.api(`/api/invocations/${id}/`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL(/\/invocations$/);
    expect((await h.api(`/api/invocations/${id}/`)).status).toBe(404);
  }, 120_000);

  it("the script form's pattern attributes are valid v-flag expressions, so the browser checks them", async () => {
    await page.goto('/device-scripts');
    await page.getByRole('button', { name: 'Add a script' }).click();
    const form = page.getByRole('form', { name: 'Add a script' });
    const patterns = await Promise.all((await form.locator('input[pattern]').all()).map(async (l) => (await l.getAttribute('pattern')) ?? ''));
    expect(patterns.length).toBeGreaterThanOrEqual(3);
    for (const p of patterns) expect(() => new RegExp(`^(?:${p})$`, 'v'), p).not.toThrow();
    const type = form.getByLabel(/Device type/);
    await type.fill('Bad Type');
    const mismatch = () => type.evaluate((e) => (e as unknown as { validity: { patternMismatch: boolean } }).validity.patternMismatch);
    expect(await mismatch()).toBe(true);
    await type.fill('gpio-2_b');
    expect(await mismatch()).toBe(false);
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('My account: a person changes their own password (the wrong current one refused and cleared)', async () => {
    const ctx = await h.browser.newContext({ baseURL: base });
    try {
      const p = await ctx.newPage();
      const otto = h.users.operator;
      await signIn(p, base, otto.username, otto.password);
      await p.locator('header .who').getByRole('link', { name: new RegExp(otto.username) }).click();
      await p.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
      const form = p.getByRole('form', { name: 'Change my password' });
      await form.getByLabel('Current password').fill('not-my-password');
      await form.getByLabel('New password (at least 8 characters)').fill('otto-new-password-1');
      await form.getByLabel('New password again').fill('otto-new-password-1');
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByRole('alert').waitFor();
      expect(await form.getByLabel('Current password').inputValue()).toBe('');
      await screenshot(p, 'daily-17-password-refused');

      await form.getByLabel('Current password').fill(otto.password);
      await form.getByLabel('New password again').fill('something-else-1');
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('The two new passwords differ.').waitFor();
      await form.getByLabel('New password again').fill('otto-new-password-1');
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByRole('status').getByText(/Your password is changed/).waitFor();
      await screenshot(p, 'daily-18-password-changed');
      await expectAccessible(p, 'password changed');
      const login = (password: string) =>
        fetch(`${base}/api/auth/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: otto.username, password }) });
      expect((await login('otto-new-password-1')).status).toBe(200);
      expect((await login(otto.password)).status).toBe(401);
      // Still signed in here.
      await p.goto('/invocations');
      await p.getByRole('heading', { name: 'Invocations', level: 1 }).waitFor();
    } finally {
      await ctx.close();
    }
  });

  it('the audit log: one entry per upload (paused and resumed), names beside ids, an action filter of the actions that exist', async () => {
    await page.goto('/admin/audit');
    const filters = page.getByRole('form', { name: 'Filters' });
    const action = filters.getByLabel('Action');
    await expect.poll(() => action.locator('option').allTextContents()).toEqual(expect.arrayContaining(['any', 'upload.attach', 'invocation.create', 'auth.login']));
    expect(await action.locator('option', { hasText: 'pac.install' }).count()).toBe(0);
    await action.selectOption('upload.attach');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 event', { exact: true }).waitFor();
    const row = page.locator('tbody tr');
    expect(await row.count()).toBe(1);
    // Who by name, what by name, beside the id; the file's name.
    expect(await row.locator('td').nth(1).textContent()).toBe(h.users.admin.username);
    expect(await row.locator('td').nth(3).textContent()).toMatch(/^uploads\s*invocation \d+\s*weights\.bin$/);
    await screenshot(page, 'daily-19-audit-one-upload');
  });

  it('the audit log pages through its events', async () => {
    // Enough events for two pages: each invocation made and deleted is audited.
    for (let i = 0; i < 30; i++) {
      const id = await createInvocation(`audited-${i}`);
      expect((await h.api(`/api/invocations/${id}/`, { method: 'DELETE' })).status).toBe(204);
    }
    const total = ((await (await h.api('/api/audit/?limit=1')).json()) as { total: number }).total;
    expect(total).toBeGreaterThan(50);
    await page.goto('/admin/audit');
    await page.getByText(`${total} events`).waitFor();
    expect(await page.locator('main').textContent()).not.toContain('Page not found');
    const pager = page.getByRole('navigation', { name: 'Pages' });
    await pager.getByText(`Page 1 of ${Math.ceil(total / 50)}`).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(50);
    await pager.getByRole('button', { name: 'Next' }).click();
    await pager.getByText(`Page 2 of ${Math.ceil(total / 50)}`).waitFor();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(Math.min(50, total - 50));
    await screenshot(page, 'daily-14-audit-page-2');
    await expectAccessible(page, 'audit page 2');
  }, 120_000);

  it('every page of the route table at 1280 and 390 px, light and dark: no sideways scrolling', async () => {
    const invocationId = await createInvocation('every-page', { duration_s: 1 });
    const queried = await h.api('/api/pacs/query/', { method: 'POST', headers: { prefer: 'respond-async' }, json: { board_id: h.board.id } });
    const operationId = ((await queried.json()) as { id: number }).id;
    const params: Record<string, string> = {
      '/invocations/:id': String(invocationId),
      '/boards/:id': h.board.id,
      '/boards/:id/terminal': h.board.id,
      '/operations/:id': String(operationId),
      '/device-scripts/:id': h.gpioScriptId,
    };
    const paths = [...(await fs.readFile(routesSource, 'utf8')).matchAll(/\{ path: '([^']+)'/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThanOrEqual(10);
    const wide: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        for (const route of paths) {
          const url = route.includes(':id') ? route.replace(':id', params[route] ?? '') : route;
          await page.goto(url);
          await settled(page);
          const name = `daily-page-${route.replace(/[/:]+/g, '-').replace(/^-/, '')}-${width}-${scheme}`;
          await screenshot(page, name);
          // Measured once the page has had the time of a full-page screenshot to draw its lists,
          // and again for a moment: the screenshot resizes the window to the page's height and
          // back, and a plot may take a frame or two to follow its box back.
          const over = await settledSideScroll(page);
          if (over > 0) wide.push(`${url} at ${width} px (${scheme}): ${over} px, past the edge: ${await pastTheEdge(page)}`);
        }
      }
      if (scheme === 'dark') {
        const bg = await page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
        expect(bg).toBe('rgb(13, 17, 23)');
        await expectAccessible(page, 'a page in dark mode');
      }
    }
    expect(wide).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 300_000);

  it('after the server restarts, a page recovers by itself, still signed in', async () => {
    await createInvocation('survives-restart');
    await page.goto('/invocations');
    await page.getByRole('link', { name: 'survives-restart' }).waitFor();
    await h.server.stop();
    // Moving about while it is down (in the app: no reload) meets "could not be reached".
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operations' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invocations' }).click();
    await page.getByRole('alert').getByText('The control plane could not be reached.').waitFor({ timeout: 30_000 });
    await screenshot(page, 'daily-15-server-gone');
    h.server = await h.cluster.start();
    await page.getByRole('link', { name: 'survives-restart' }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByRole('alert').count(), { timeout: 30_000 }).toBe(0);
    expect(await page.locator('header .who').textContent()).toContain(h.users.admin.username);
    await screenshot(page, 'daily-16-server-back');

    // Opened while the API does not answer (the page itself loads): the app says so and keeps trying by itself.
    await page.route('**/api/**', (route) => route.abort('connectionrefused'));
    await page.reload();
    await page.getByText('Trying again every few seconds…').waitFor({ timeout: 30_000 });
    await screenshot(page, 'daily-16b-app-unreachable');
    await page.unroute('**/api/**');
    await page.getByRole('link', { name: 'survives-restart' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('header .who').textContent()).toContain(h.users.admin.username);
    await eventually(async () => expect(((await (await h.api(`/api/boards/${h.board.id}/`)).json()) as { status: string }).status).toBe('online'), 60_000);
  }, 180_000);
});
