import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startAgent, type AgentProcess } from '../../../test/support/processes.ts';
import { createInvocation, expectAccessible, screenshot, signIn, startHarness, type Harness, SHOTS_DIR, skipWithoutChromium } from './browser-support.ts';

/**
 * Rollouts in Chromium (docs/rollouts.md): "Run on boards…" on an invocation's page starts
 * an execute rollout over three simulated boards; the rollout page follows it live to the
 * end (its event stream), with the table of boards and a bar chart per measure.
 */
const SHOTS = process.env.MM_ROLLOUT_SHOTS ?? path.join(SHOTS_DIR, 'rollouts');

describe.skipIf(skipWithoutChromium('rollouts in Chromium'))('the dashboard in Chromium: rollouts', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let tmp: string;
  const agents: AgentProcess[] = [];

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-rollouts-'));
    // Two more boards beside the harness's own.
    for (const name of ['sim-board-2', 'sim-board-3']) {
      const board = (await (await h.api('/api/boards/', { method: 'POST', json: { name } })).json()) as { token: string };
      agents.push(await startAgent({ serverUrl: base, token: board.token, agentDir: path.join(tmp, name), env: { LOG_LEVEL: 'warn' } }));
    }
    await eventually(async () => {
      const { boards } = (await (await h.api('/api/boards/')).json()) as { boards: Array<{ status: string }> };
      expect(boards.filter((b) => b.status === 'online')).toHaveLength(3);
    }, 60_000);
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('runs an invocation on every board from its page and shows the rollout live: table, chart, outputs', async () => {
    const id = await createInvocation(h, 'fleet-speed', { duration_s: 1.5 });
    await page.goto(`${base}/invocations/${id}`);
    await page.getByRole('button', { name: 'Run on boards…' }).click();
    await page.getByLabel('Boards per phase').fill('2');
    await fs.mkdir(SHOTS, { recursive: true });
    await page.getByTestId('run-on-boards-form').screenshot({ path: path.join(SHOTS, 'run-on-boards-dialog.png') });
    await page.getByRole('button', { name: 'Start' }).click();
    await page.getByRole('heading', { name: /Rollout #\d+/ }).waitFor();
    expect(page.url()).toMatch(/\/rollouts\/\d+$/);
    // Live: the page moves on by itself while the phases run.
    await expect.poll(() => page.getByTestId('rollout-progress').textContent(), { timeout: 60_000 }).toMatch(/^[1-3]\/3 ended/);
    await fs.mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'rollout-running.png'), fullPage: true });
    await expect.poll(() => page.getByTestId('rollout-progress').textContent(), { timeout: 90_000 }).toBe('3/3 ended · 3 succeeded · 0 failed');
    await expect.poll(() => page.locator('h1 .badge').textContent()).toBe('succeeded');

    const rows = page.getByTestId('rollout-board');
    expect(await rows.count()).toBe(3);
    for (let i = 0; i < 3; i++) {
      const text = (await rows.nth(i).textContent()) ?? '';
      expect(text).toMatch(/succeeded\d+\.\d\d s/);
    }
    // A bar chart of the run time across the boards, drawn by uPlot.
    await page.getByTestId('chart-run_ms').locator('canvas').waitFor({ timeout: 20_000 });
    // Each board's output is there to download.
    const link = page.getByTestId('board-output').first();
    const href = await link.getAttribute('href');
    expect(href).toMatch(/^\/api\/rollouts\/\d+\/boards\/[0-9a-f-]+\/output\/$/);
    const video = await page.request.get(`${base}${href}`);
    expect(video.status()).toBe(200);
    expect((await video.body()).length).toBeGreaterThan(100);

    await page.screenshot({ path: path.join(SHOTS, 'rollout-done.png'), fullPage: true });
    await screenshot(page, 'rollout-done');
    await expectAccessible(page, 'rollout page');

    await page.getByRole('link', { name: '← Rollouts' }).click();
    await page.getByRole('heading', { name: 'Rollouts', level: 1 }).waitFor();
    await expect.poll(() => page.getByRole('region', { name: 'Rollouts list' }).textContent()).toContain('3/3 ended');
    await page.screenshot({ path: path.join(SHOTS, 'rollouts-list.png'), fullPage: true });
    await expectAccessible(page, 'rollouts list');
  });
});
