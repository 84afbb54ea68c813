import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startAgent, type AgentProcess } from '../../../test/support/processes.ts';
import { CHROMIUM, expectAccessible, hasChromium, screenshot, signIn, startHarness, type Harness } from './browser-support.ts';

/**
 * The provisioning-keys page in Chromium (docs/enrollment.md): an admin makes a manual key
 * with labels, a real agent enrolls with the key shown once, its board waits on the page
 * until the admin approves it, then comes online with the key's labels.
 */
if (!hasChromium) console.warn(`keys browser test skipped: no Chromium at ${CHROMIUM}`);

describe.skipIf(!hasChromium)('the dashboard in Chromium: provisioning keys and approving boards', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let tmp: string;
  let agent: AgentProcess | undefined;

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-keys-'));
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('makes a manual key, shows it once, and approves the board that enrolls with it', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Provisioning keys', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('lab-7 boards');
    await page.getByLabel('Labels (key=value, comma-separated)').fill('site=lab-7, rack=c');
    await page.getByLabel('Approve each board by hand').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('new-key').inputValue();
    expect(key).toMatch(/^mmk_/);
    await expect.poll(() => page.getByTestId('key-lab-7 boards').textContent()).toContain('rack=c, site=lab-7');
    await screenshot(page, 'keys-created');
    await expectAccessible(page, 'keys page');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);

    const agentDir = path.join(tmp, 'agent');
    agent = await startAgent({ serverUrl: base, agentDir, env: { MM_PROVISIONING_KEY: key, MM_BOARD_TOKEN_FILE: path.join(agentDir, 'token') } });
    const pendingRow = page.locator('[data-testid^="pending-"]');
    await pendingRow.first().waitFor({ timeout: 60_000 });
    expect(await pendingRow.first().textContent()).toContain('rack=c, site=lab-7');
    await screenshot(page, 'keys-pending-board');
    await page.getByRole('button', { name: /^Approve/ }).click();
    await page.getByTestId('no-pending').waitFor({ timeout: 30_000 });

    const board = await eventually(async () => {
      const { boards } = (await (await h.api('/api/boards/')).json()) as { boards: Array<{ status: string; labels: Record<string, string> }> };
      const b = boards.find((x) => x.labels.site === 'lab-7');
      expect(b?.status).toBe('online');
      return b!;
    }, 60_000);
    // The key's labels, beside the agent's own read-only `mm/` ones.
    const peoples = Object.fromEntries(Object.entries(board.labels).filter(([k]) => !k.startsWith('mm/')));
    expect(peoples).toEqual({ site: 'lab-7', rack: 'c' });
    expect(board.labels['mm/agent-version']).toBeTruthy();
  });
});
