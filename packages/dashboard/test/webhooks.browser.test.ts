import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../../server/test/support/webhook-receiver.ts';
import { CHROMIUM, expectAccessible, hasChromium, signIn, startHarness, type Harness, screenshotEveryWay } from './browser-support.ts';

/**
 * The Webhooks pages in Chromium (docs/webhooks.md): an admin subscribes two URLs of a real
 * receiver (one that answers, one that fails), sees the secret once, edits the events, turns
 * one off and on, reads each delivery log (delivered; retried with the receiver's answer),
 * redelivers, and deletes. Looked at 1280 and 390 px wide, light and dark.
 */
if (!hasChromium) console.warn(`webhooks browser test skipped: no Chromium at ${CHROMIUM}`);

describe.skipIf(!hasChromium)('the dashboard in Chromium: webhooks and their delivery logs', () => {
  let h: Harness;
  let page: Page;
  let rx: WebhookReceiver;

  /** The page at both widths and in both schemes, saved as `<name>-<width>[-dark].png`. */
  const look = (name: string) => screenshotEveryWay(page, name);

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    h = await startHarness({ serverEnv: { MM_WEBHOOK_ALLOW_PRIVATE: '1', MM_WEBHOOK_TIMEOUT_S: '2', MM_WEBHOOK_RETRY_BASE_S: '20' } });
    const base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 180_000);

  afterAll(async () => {
    await h?.stop();
    await rx?.close();
  }, 60_000);

  it('subscribes, shows the secret once, edits, turns off and on, shows the logs, redelivers and deletes', async () => {
    rx.plan('/broken', ...Array.from({ length: 20 }, () => ({ status: 500, body: 'receiver down for maintenance' })));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByTestId('no-webhooks').waitFor();

    // None ticked: said at once, nothing sent.
    const form = page.getByRole('form', { name: 'New webhook' });
    await form.getByLabel('URL').fill(rx.url('/ok'));
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('alert').getByText('Choose at least one event.').waitFor();
    await page.getByRole('button', { name: 'Dismiss' }).click();

    await form.getByLabel('board.enrolled').check();
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByTestId('new-webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    await page.getByTestId(`webhook-${rx.url('/ok')}`).waitFor();
    await expectAccessible(page, 'webhooks page with a new secret');
    await look('webhooks-created');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-webhook-secret').count()).toBe(0);

    await form.getByLabel('URL').fill(rx.url('/broken'));
    await form.getByLabel('Format').selectOption('slack');
    await form.getByLabel('board.enrolled').check();
    await form.getByLabel('board.offline').check();
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    const broken = page.getByTestId(`webhook-${rx.url('/broken')}`);
    await broken.waitFor();
    expect(await broken.textContent()).toContain('Slack');

    // Edit the first one's events.
    const ok = page.getByTestId(`webhook-${rx.url('/ok')}`);
    await ok.getByRole('button', { name: /Edit events/ }).click();
    await ok.getByLabel('operation.finished').check();
    await look('webhooks-editing');
    await ok.getByRole('button', { name: 'Save events' }).click();
    await expect.poll(() => ok.textContent()).toContain('operation.finished');

    // Off and on again.
    await broken.getByRole('button', { name: /^Turn off/ }).click();
    await expect.poll(() => broken.locator('.badge').textContent()).toBe('off');
    await broken.getByRole('button', { name: /^Turn on/ }).click();
    await expect.poll(() => broken.locator('.badge').textContent()).toBe('on');

    // A board joins: both get board.enrolled; /ok answers, /broken fails and is retried.
    expect((await h.api('/api/boards/', { method: 'POST', json: { name: 'kria-joins' } })).status).toBe(201);
    await rx.waitFor('/ok', 1, 60_000);
    await rx.waitFor('/broken', 1, 60_000);
    await look('webhooks-list');

    await ok.getByRole('link', { name: rx.url('/ok') }).click();
    await page.getByRole('heading', { name: rx.url('/ok'), level: 1 }).waitFor();
    const delivered = page.locator('[data-testid^="delivery-"]').first();
    await expect.poll(() => delivered.textContent(), { timeout: 30_000 }).toContain('delivered');
    expect(await delivered.textContent()).toContain('HTTP 200');
    await expectAccessible(page, 'a delivery log');
    await delivered.getByRole('button', { name: /^Redeliver/ }).click();
    await page.getByText(/will be sent again now/).waitFor();
    await rx.waitFor('/ok', 2, 30_000);
    expect(rx.on('/ok')[1]!.headers['webhook-id']).toBe(rx.on('/ok')[0]!.headers['webhook-id']);
    await expect.poll(() => delivered.textContent(), { timeout: 30_000 }).toMatch(/delivered.*2/);
    await look('webhook-log-delivered');

    await page.getByRole('link', { name: '← Webhooks' }).click();
    await broken.getByRole('link', { name: rx.url('/broken') }).click();
    await page.getByRole('heading', { name: rx.url('/broken'), level: 1 }).waitFor();
    const retrying = page.locator('[data-testid^="delivery-"]').first();
    await expect.poll(() => retrying.textContent(), { timeout: 30_000 }).toContain('HTTP 500');
    expect(await retrying.textContent()).toContain('pending');
    expect(await retrying.textContent()).toContain('receiver down for maintenance');
    await expectAccessible(page, 'a delivery log with a failing receiver');
    await look('webhook-log-retrying');

    await page.getByRole('link', { name: '← Webhooks' }).click();
    page.once('dialog', (d) => void d.accept());
    await broken.getByRole('button', { name: /^Delete/ }).click();
    await expect.poll(() => broken.count()).toBe(0);
    await expect.poll(async () => ((await (await h.api('/api/webhooks/')).json()) as { webhooks: unknown[] }).webhooks.length).toBe(1);
  });
});
