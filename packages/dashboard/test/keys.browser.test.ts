import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startAgent, type AgentProcess } from '../../../test/support/processes.ts';
import { expectAccessible, screenshot, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

/**
 * The provisioning-keys page in Chromium (docs/enrollment.md): an admin makes a manual key
 * with labels, a real agent enrolls with the key shown once, its board waits on the page
 * until the admin approves it, then comes online with the key's labels.
 */
describe.skipIf(skipWithoutChromium('provisioning keys and board approval in Chromium'))('the dashboard in Chromium: provisioning keys and approving boards', () => {
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
    // No MM_PUBLIC_URL here: the install command names the loopback address, and the page says so.
    expect(await page.getByTestId('key-install-warning').textContent()).toMatch(/MM_PUBLIC_URL is not set/);
    await screenshot(page, 'keys-created');
    await expectAccessible(page, 'keys page');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);

    const agentDir = path.join(tmp, 'agent');
    agent = await startAgent({ serverUrl: base, agentDir, env: { MM_PROVISIONING_KEY: key, MM_BOARD_TOKEN_FILE: path.join(agentDir, 'token') } });
    const pendingRow = page.locator('[data-testid^="pending-"]');
    await pendingRow.first().waitFor({ timeout: 60_000 });
    expect(await pendingRow.first().textContent()).toContain('rack=c, site=lab-7');
    // Issue 39: the approval list tells enrolled boards apart (host, machine id, address, when),
    // and the board is named <hostname>-<first 6 of its machine id>.
    const machine = await page.locator('[data-testid^="pending-machine-"]').first().textContent();
    expect(machine).toMatch(new RegExp(`host ${os.hostname()}`));
    expect(machine).toMatch(/machine id [0-9a-f]{12}/);
    expect(machine).toMatch(/from (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)/);
    const machineId = (await fs.readFile(path.join(agentDir, 'machine-id'), 'utf8').catch(() => '')).trim();
    const pendingId = (await pendingRow.first().getAttribute('data-testid'))!.replace('pending-', '');
    expect(pendingId).toMatch(new RegExp(`^${os.hostname()}-[0-9a-f]{6}$`));
    if (machineId) expect(pendingId).toBe(`${os.hostname()}-${machineId.slice(0, 6)}`);
    await screenshot(page, 'keys-pending-board');
    for (const [name, opts] of [['keys-pending-board-390', { width: 390, height: 844 }], ['keys-pending-board-dark', null]] as const) {
      if (opts) await page.setViewportSize(opts);
      else {
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.emulateMedia({ colorScheme: 'dark' });
      }
      await screenshot(page, name);
      // At 390 px the approval list and the keys scroll inside their boxes, not the page.
      if (opts) expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 'the keys page at 390 px scrolls sideways').toBe(0);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // The boards list reads "pending" for it, not "idle".
    await page.getByRole('link', { name: 'Boards' }).first().click();
    await expect.poll(() => page.getByTestId(`board-${pendingId}`).textContent(), { timeout: 30_000 }).toContain('pending');
    expect(await page.getByTestId(`board-${pendingId}`).textContent()).not.toContain('idle');
    await page.getByRole('link', { name: 'Keys' }).click();
    await pendingRow.first().waitFor({ timeout: 30_000 });
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
