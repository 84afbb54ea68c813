import os from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzip, realPacEntries, tarArchive } from '../../agent/test/pac-test-support.ts';
import { createInvocation, expectAccessible, signIn, startHarness, type Harness, SHOTS_DIR, skipWithoutChromium } from './browser-support.ts';

/**
 * "Roll out a PAC archive…" in Chromium (docs/rollouts.md): an admin picks an archive file on
 * the rollouts page; the page hashes it, uploads it on its own (tus, no invocation) because the
 * server lacks it, and starts the pac_install rollout; the rollout page follows it to the end.
 * The dialogs and the rollout page are looked at 1280 and 390 px wide.
 */
const SHOTS = process.env.MM_ROLLOUT_SHOTS ?? path.join(SHOTS_DIR, 'rollouts2');

describe.skipIf(skipWithoutChromium('a PAC archive rolled out, in Chromium'))('the dashboard in Chromium: a PAC archive rolled out', () => {
  let h: Harness;
  let base: string;
  let tmp: string;

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-archive-'));
    await fs.mkdir(SHOTS, { recursive: true });
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  async function pageAt(width: number): Promise<Page> {
    const context = await h.browser.newContext({ baseURL: base, viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
    return page;
  }

  it('picks the archive, uploads it once and rolls it out; the rollout page follows it', async () => {
    const archive = gzip(await tarArchive(realPacEntries('ui_pac', 'zcu104-ui-cfg1')));
    const file = path.join(tmp, 'ui_pac.tar.gz');
    await fs.writeFile(file, archive);
    const page = await pageAt(1280);
    await page.goto(`${base}/rollouts`);
    await page.getByRole('button', { name: 'Roll out a PAC archive…' }).click();
    const form = page.getByTestId('run-on-boards-form');
    await expect.poll(() => form.getByRole('button', { name: 'Start' }).isDisabled()).toBe(true);
    await form.getByLabel(/PAC archive/).setInputFiles(file);
    await page.screenshot({ path: path.join(SHOTS, 'pac-archive-dialog-1280.png'), fullPage: true });
    await form.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('heading', { name: /Rollout #\d+/ }).waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByTestId('rollout-progress').textContent(), { timeout: 90_000 }).toBe('1/1 ended · 1 succeeded · 0 failed');
    // An install's step time is in its row; a run-time chart is a model run's figure (execute rollouts only).
    await expect.poll(() => page.getByTestId('rollout-board').first().textContent()).toMatch(/\d+\.\d\d s/);
    expect(await page.getByTestId('chart-run_ms').count()).toBe(0);
    expect(await page.getByTestId('rollout-params').textContent()).toMatch(/filename ui_pac\.tar\.gz/);
    await page.screenshot({ path: path.join(SHOTS, 'pac-rollout-1280.png'), fullPage: true });
    await expectAccessible(page, 'pac rollout page');
    const id = Number(/\/rollouts\/(\d+)$/.exec(page.url())![1]);
    const rollout = (await (await h.api(`/api/rollouts/${id}/`)).json()) as { kind: string; params: Record<string, unknown> };
    expect(rollout).toMatchObject({ kind: 'pac_install', params: { filename: 'ui_pac.tar.gz', size: archive.length } });
    const pacs = (await (await h.api('/api/pacs/query/', { method: 'POST', json: { board_id: h.board.id } })).json()) as { pacs: Array<{ name: string }> };
    expect(pacs.pacs.map((p) => p.name)).toContain('zcu104-ui-cfg1');

    // 390 px: the rollout page and both dialogs.
    const narrow = await pageAt(390);
    await narrow.goto(`${base}/rollouts/${id}`);
    await narrow.getByRole('heading', { name: /Rollout #\d+/ }).waitFor();
    await narrow.getByTestId('rollout-board').first().waitFor({ timeout: 20_000 });
    await narrow.screenshot({ path: path.join(SHOTS, 'pac-rollout-390.png'), fullPage: true });
    await narrow.goto(`${base}/rollouts`);
    await narrow.getByRole('button', { name: 'Roll out a PAC archive…' }).click();
    await narrow.screenshot({ path: path.join(SHOTS, 'pac-archive-dialog-390.png'), fullPage: true });
    const inv = await createInvocation(h, 'narrow', { duration_s: 0.2 });
    await narrow.goto(`${base}/invocations/${inv}`);
    await narrow.getByRole('button', { name: 'Run on boards…' }).click();
    await narrow.getByTestId('run-on-boards-form').waitFor();
    await narrow.screenshot({ path: path.join(SHOTS, 'run-on-boards-390.png'), fullPage: true });
    await page.goto(`${base}/invocations/${inv}`);
    await page.getByRole('button', { name: 'Run on boards…' }).click();
    await page.screenshot({ path: path.join(SHOTS, 'run-on-boards-1280.png'), fullPage: true });
    // Nothing wider than the screen at 390 px.
    const overflow = await narrow.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
  });
});
