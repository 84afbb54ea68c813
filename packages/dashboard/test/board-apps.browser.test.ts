import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xmodelBytes } from '../../../test/support/xmodel-builder.ts';
import { CHROMIUM, createInvocation, expectAccessible, hasChromium, signIn, startHarness, type Harness, SHOTS_DIR } from './browser-support.ts';

/** Where these screenshots go. */
const SHOTS = process.env.MM_APPS_SHOTS ?? path.join(SHOTS_DIR, 'apps');

/**
 * The board page's accelerated applications in Chromium (docs/accelerators.md): the board's
 * DPU and apps as its simulated tools report them, beside its PACs; an operator loads another
 * app (confirm, the operation followed live) and the DPU fingerprint follows; unload.
 * Screenshots at 1280 and 390 px, light and dark.
 */
if (!hasChromium) console.warn(`board apps browser test skipped: no Chromium at ${CHROMIUM}`);

describe.skipIf(!hasChromium)('the dashboard in Chromium: accelerated applications on the board page', () => {
  let h: Harness;
  let page: Page;
  let base: string;

  /** The whole page, and the apps section alone (what a look at the change needs). */
  const shot = async (name: string) => {
    await fs.mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    await page.getByTestId('board-apps').screenshot({ path: path.join(SHOTS, `${name}-section.png`) });
  };

  beforeAll(async () => {
    h = await startHarness({ agentEnv: { MM_SIM_BOARD_MODEL: 'kv260' } });
    base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 1000 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('shows the DPU and the apps; loads another app, and the fingerprint follows; unloads', async () => {
    await page.goto(`${base}/boards/${h.board.id}`);
    const section = page.getByTestId('board-apps');
    await section.getByRole('heading', { name: 'Accelerated applications' }).waitFor();
    const dpu = page.getByTestId('board-dpu');
    await expect.poll(async () => (await dpu.textContent()) ?? '', { timeout: 30_000 }).toContain('0x101000016010407');
    expect(await dpu.textContent()).toContain('DPUCZDX8G_ISA1_B4096');
    const row = (app: string) => section.locator(`tr[data-app="${app}"]`);
    await expect.poll(async () => (await row('kv260-benchmark-b4096').textContent()) ?? '').toMatch(/active\s*slot 0/);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
        await section.scrollIntoViewIfNeeded();
        await shot(`board-apps-${width}-${scheme}`);
        const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
        expect(overflow, `sideways scrolling at ${width} px (${scheme})`).toBeLessThanOrEqual(0);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 1000 });
    await expectAccessible(page, 'board page with apps');

    await section.getByRole('button', { name: 'Load kv260-benchmark-b3136', exact: true }).click();
    await section.getByRole('button', { name: 'Yes, load it' }).click();
    const live = page.getByTestId('app-operation');
    await expect.poll(async () => (await live.textContent()) ?? '', { timeout: 60_000 }).toContain('succeeded');
    expect(await live.textContent()).toContain('kv260-benchmark-b3136: loaded to slot 0');
    await expect.poll(async () => (await dpu.textContent()) ?? '', { timeout: 30_000 }).toContain('0x101000016010406');
    await expect.poll(async () => (await row('kv260-benchmark-b3136').textContent()) ?? '').toMatch(/active/);
    // The app the board left keeps the fingerprint it showed.
    expect(await row('kv260-benchmark-b4096').textContent()).toContain('0x101000016010407');
    await section.scrollIntoViewIfNeeded();
    await shot('board-apps-loaded');

    await section.getByRole('button', { name: 'Unload kv260-benchmark-b3136', exact: true }).click();
    await section.getByRole('button', { name: 'Yes, unload' }).click();
    await expect.poll(async () => (await section.locator('tr[data-app] .badge-active').count()), { timeout: 60_000 }).toBe(0);
    await shot('board-apps-unloaded');
  });

  it("shows what the server read of an .xmodel on the invocation's weights", async () => {
    const id = await createInvocation(h, 'xmodel-page');
    const form = new FormData();
    form.set('file_type', 'weights');
    form.set('file', new Blob([xmodelBytes({ inputs: [{ name: 'input_0', shape: [1, 224, 224, 3] }], dpuSubgraphs: [{ name: 'subgraph_conv1', fingerprint: '0x101000016010407' }] })]), 'resnet50.xmodel');
    const res = await h.api(`/api/invocations/${id}/upload/`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
    await page.goto(`${base}/invocations/${id}`);
    const summary = page.getByTestId('xmodel-summary');
    await expect.poll(async () => (await summary.textContent()) ?? '', { timeout: 15_000 }).toContain('DPU 0x101000016010407 (1 DPU subgraph)');
    expect(await summary.textContent()).toContain('input input_0 [1×224×224×3] xint8');
    await fs.mkdir(SHOTS, { recursive: true });
    await page.getByTestId('slot-weights').screenshot({ path: path.join(SHOTS, 'invocation-xmodel-weights.png') });
  });
});
