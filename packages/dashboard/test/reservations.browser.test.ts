import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, expectAccessible, hasChromium, signIn, startHarness, type Harness, screenshotEveryWay } from './browser-support.ts';

/**
 * Reservations in Chromium (docs/reservations.md): an operator reserves the board from its
 * page, sees who holds it on the boards list, the board page and the reservations page with
 * the queue (someone else waiting), renews and releases it, and the next in line gets it.
 * Looked at 1280 and 390 px wide, light and dark.
 */
if (!hasChromium) console.warn(`reservations browser test skipped: no Chromium at ${CHROMIUM}`);

describe.skipIf(!hasChromium)('the dashboard in Chromium: reservations', () => {
  let h: Harness;
  let page: Page;

  const look = (name: string) => screenshotEveryWay(page, name);

  beforeAll(async () => {
    h = await startHarness();
    const base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 600_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('reserves from the board page, shows holder and queue, renews, releases to the next in line', async () => {
    await page.goto(`/boards/${h.board.id}`);
    await page.getByTestId('board-reservation').getByText('nobody holds it').waitFor();
    await page.getByRole('button', { name: 'Reserve for 1 h' }).click();
    await page.getByTestId('board-reservation').getByText(/held by otto until/).waitFor();

    // Someone else (the admin token) asks for it too: queued behind otto.
    const queued = await h.api('/api/reservations/', { method: 'POST', json: { board_id: h.board.id, duration_s: 600, note: 'nightly CI' } });
    expect(queued.status).toBe(202);
    const waitingId = ((await queued.json()) as { id: number }).id;

    await page.getByRole('link', { name: 'Boards', exact: true }).first().click();
    await page.getByTestId('reservation-sim-board').getByText(/reserved by otto until/).waitFor();
    await look('reservations-boards-list');

    await page.getByRole('link', { name: 'Reservations' }).first().click();
    await page.getByRole('heading', { name: 'Reservations', level: 1 }).waitFor();
    const waitingRow = page.getByTestId(`waiting-${waitingId}`);
    await waitingRow.waitFor();
    expect(await waitingRow.textContent()).toMatch(/sim-board.*1.*MM_API_TOKEN/);
    await expectAccessible(page, 'reservations page');
    await look('reservations-page');

    // Renew, then release: the queued request gets the board.
    const held = page.locator('[data-testid^="held-"]').first();
    await held.getByRole('button', { name: /Renew 1 h/ }).click();
    await held.getByRole('button', { name: /Release/ }).click();
    await page.getByTestId('empty-queue').waitFor();
    await page.getByTestId(`held-${waitingId}`).getByText('MM_API_TOKEN').waitFor();

    // The operator may not end the admin's lease: no button for it.
    expect(await page.getByTestId(`held-${waitingId}`).getByRole('button').count()).toBe(0);

    await page.goto(`/boards/${h.board.id}`);
    await page.getByTestId('board-reservation').getByText(/held by MM_API_TOKEN until/).waitFor();
    await look('reservations-board-page');

    // A reservation from the form: the board is held, so the request waits with its position.
    await page.goto('/reservations');
    const form = page.getByRole('form', { name: 'Reserve a board' });
    await form.getByLabel('Board').selectOption(h.board.id);
    await form.getByLabel('Note').fill('after CI');
    await form.getByRole('button', { name: 'Reserve' }).click();
    await page.getByTestId('reservation-made').getByText(/waits: position 1/).waitFor();
  }, 240_000);
});
