import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvocation, SHOTS_DIR, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

/**
 * Daily use of a fleet in Chromium (issue 39): queued selector work says why it waits, and
 * a rollout's Cancel asks first. Screenshots at 1280 and 390 px, light and dark.
 */
describe.skipIf(skipWithoutChromium('fleet operations in Chromium'))('the dashboard in Chromium: why work waits, rollout cancel', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let ghost: string;

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    // A board that never comes online, labelled for the work below.
    const board = (await (await h.api('/api/boards/', { method: 'POST', json: { name: 'ghost-board' } })).json()) as { id: string };
    ghost = board.id;
    expect((await h.api(`/api/boards/${ghost}/`, { method: 'PATCH', json: { labels: { site: 'lab-ghost' } } })).status).toBe(200);
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  const shots = async (name: string) => {
    for (const [w, scheme] of [[1280, 'light'], [390, 'light'], [1280, 'dark']] as const) {
      await page.setViewportSize({ width: w, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: path.join(SHOTS_DIR, `${name}-${w}-${scheme}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
  };

  it('the operation page of queued selector work says why it waits and when it gives up', async () => {
    const inv = await createInvocation(h, 'waits');
    const res = await h.api(`/api/invocations/${inv}/execute/`, { method: 'POST', headers: { prefer: 'respond-async' }, json: { board_selector: { site: 'lab-ghost' } } });
    expect(res.status).toBe(202);
    const op = (await res.json()) as { id: number };
    await page.goto(`${base}/operations/${op.id}`);
    const note = page.getByTestId('operation-waiting');
    await note.waitFor({ timeout: 20_000 });
    expect(await note.textContent()).toMatch(/Waiting for a board: 1 board matches: 1 offline\. Gives up at .+\./);
    await shots('operation-waiting');
    await h.api(`/api/operations/${op.id}/cancel/`, { method: 'POST' });
  });

  it("a rollout's Cancel asks first, and cancels only on yes", async () => {
    const inv = await createInvocation(h, 'rollout-cancel');
    const res = await h.api('/api/rollouts/', { method: 'POST', json: { kind: 'execute', board_selector: { site: 'lab-ghost' }, invocation_id: inv } });
    expect(res.status).toBe(201);
    const r = (await res.json()) as { id: number };
    await page.goto(`${base}/rollouts/${r.id}`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(`Cancel rollout #${r.id} (execute)?`);
    await shots('rollout-cancel-confirm');
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(((await (await h.api(`/api/rollouts/${r.id}/`)).json()) as { status: string }).status).toBe('running');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();
    await expect.poll(async () => ((await (await h.api(`/api/rollouts/${r.id}/`)).json()) as { status: string }).status, { timeout: 20_000 }).toBe('cancelled');
    await expect.poll(() => page.locator('h1 .badge').textContent(), { timeout: 20_000 }).toBe('cancelled');
  });
});
