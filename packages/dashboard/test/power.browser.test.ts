import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePdudaemon, plugIn, POWER_SWITCH, startPdudaemon, type Pdudaemon } from '../../../test/support/pdudaemon.ts';
import { eventually, repoRoot } from '../../../test/support/processes.ts';
import { createInvocation, expectAccessible, screenshot, SHOTS_DIR, signIn, skipWithoutChromium, startHarness, type Harness } from './browser-support.ts';

/**
 * Power and incidents on the board page in Chromium (docs/power.md), with Debian's real
 * pdudaemon: its `localcmdline` PDU starts and cuts a simulated board's agent
 * (test/support/power-switch.mjs); the harness's own board is the lab host relaying to it.
 *
 * - An operator without the board's reservation sees no power buttons; holding it, they appear.
 * - A board without power settings says how to set them up; the admin sets lab host, PDU, outlet.
 * - On and Cycle, each confirmed first, are followed to pdudaemon's answer, which the switch saw.
 * - A hung board shows `unresponsive` and why, then its incident recovered with its MTTR; hung
 *   again with no cycle left in the window, the page says recovery gave up and the board is bad.
 *
 * Screenshots at 1280 and 390 px, light and dark: power-*.png in the screenshots folder (the whole
 * page, and the power and incidents sections alone).
 */
const HEARTBEAT = { MM_HEARTBEAT_INTERVAL_MS: '500', MM_HEARTBEAT_TIMEOUT_MS: '3000' };
const PDU = 'lab-pdu';
const OUTLET = 1;
const pdudaemonMissing = !(await havePdudaemon());
if (pdudaemonMissing) console.warn('power browser test skipped: no /usr/sbin/pdudaemon (apt-get install pdudaemon)');

describe.skipIf(skipWithoutChromium('the power browser test') || pdudaemonMissing)('the dashboard in Chromium: power and incidents on the board page', () => {
  let h: Harness;
  let pdu: Pdudaemon;
  let workDir: string;
  let base: string;
  let admin: Page;
  let operatorContext: BrowserContext;
  let boardId: string;

  const board = async () => (await (await h.api(`/api/boards/${boardId}/`)).json()) as Record<string, any>;

  /** The page at 1280 and 390 px, light and dark; the page never scrolls sideways. */
  async function look(page: Page, name: string): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        const suffix = `${width}${scheme === 'dark' ? '-dark' : ''}`;
        await screenshot(page, `${name}-${suffix}`);
        // The two sections alone, at a size one can look at.
        for (const part of ['board-power', 'board-incidents']) {
          await page.getByTestId(part).screenshot({ path: path.join(SHOTS_DIR, `${name}-${suffix}-${part.replace('board-', '')}.png`) });
        }
        const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
        expect(overflow, `sideways scrolling of ${name} at ${width} px (${scheme})`).toBeLessThanOrEqual(0);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  beforeAll(async () => {
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-power-browser-'));
    pdu = await startPdudaemon(path.join(workDir, 'pdu'), PDU);
    // One cycle in the window: the first hang is recovered, the second finds none left.
    const settings = { ...HEARTBEAT, MM_HANG_DETECT_S: '10', MM_POWER_CYCLE_OFF_S: '1', MM_RECOVER_MAX: '1', MM_RECOVER_WINDOW_S: '3600' };
    h = await startHarness({ serverEnv: settings, agentEnv: { ...HEARTBEAT, MM_PDUDAEMON_URL: pdu.url } });
    base = h.server.url.replace(/\/$/, '');

    // The board on the PDU's outlet: its agent runs only while the outlet is on.
    const created = await h.api('/api/boards/', { method: 'POST', json: { name: 'rack-2-kv260' } });
    expect(created.status).toBe(201);
    const { id, token } = (await created.json()) as { id: string; token: string };
    boardId = id;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('MM_') && k !== 'DATABASE_URL' && k !== 'PORT') env[k] = v;
    Object.assign(env, {
      MM_SERVER_URL: h.server.url,
      MM_BOARD_TOKEN: token,
      MM_AGENT_DIR: path.join(workDir, 'board'),
      MM_SIM_GPIO_PORT: '0',
      MM_RECONNECT_MAX_DELAY_MS: '300',
      LOG_LEVEL: 'warn',
      ...HEARTBEAT,
    });
    await plugIn(pdu, OUTLET, {
      argv: [process.execPath, path.join(repoRoot, 'packages/agent/bin/mm-agent.mjs'), '--simulate'],
      env,
      cwd: repoRoot,
      marker: `mm-power-browser-${process.pid}`,
      log: path.join(workDir, 'board.log'),
    });

    admin = await (await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(admin, base, h.users.admin.username, h.users.admin.password);
    operatorContext = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
  }, 600_000);

  afterAll(async () => {
    if (pdu) spawnSync(process.execPath, [POWER_SWITCH, 'off', String(OUTLET), pdu.dir]); // the board's agent (hung or not) is cut
    await h?.stop();
    await pdu?.stop();
    if (workDir) await fs.rm(workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }, 60_000);

  it('a board without power says how to set it up; the admin names lab host, PDU and outlet', async () => {
    await admin.goto(`/boards/${boardId}`);
    const section = admin.getByTestId('board-power');
    await section.getByTestId('power-not-configured').getByText('No power controller.').waitFor();
    expect(await section.textContent()).toContain('MM_PDUDAEMON_URL');
    expect(await section.getByRole('button', { name: 'Power on' }).count()).toBe(0);
    await section.scrollIntoViewIfNeeded();
    await look(admin, 'power-not-configured');

    await section.getByRole('button', { name: 'Set up power' }).click();
    const form = section.getByRole('form', { name: 'Power settings' });
    await form.getByLabel('Lab host').selectOption({ label: 'sim-board (online)' });
    await form.getByLabel('PDU (its name in pdudaemon)').fill(PDU);
    await form.getByLabel('Outlet').fill(String(OUTLET));
    await expectAccessible(admin, 'the power settings form');
    await form.getByRole('button', { name: 'Save power settings' }).click();
    await section.getByTestId('power-controller').getByText(/lab host sim-board relays to pdudaemon: PDU lab-pdu, outlet 1/).waitFor();
    expect((await board()).power).toEqual({ controller_board_id: h.board.id, pdu_hostname: PDU, pdu_port: OUTLET });
  }, 120_000);

  it('an operator switches power only while holding the board', async () => {
    const page = await operatorContext.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
    await page.goto(`/boards/${boardId}`);
    const section = page.getByTestId('board-power');
    await section.getByText('Switching its power needs the admin role, or holding its reservation.').waitFor();
    expect(await section.getByRole('button').count()).toBe(0);
    await page.getByRole('button', { name: 'Reserve for 1 h' }).click();
    await section.getByRole('button', { name: 'Power on' }).waitFor();
    expect(await section.getByRole('button', { name: /^Power (on|off|cycle)$/ }).count()).toBe(3);
    // Released again: the admin goes on alone.
    await page.getByTestId('board-fleet-panel').getByRole('button', { name: /Release/ }).click();
    await section.getByText('Switching its power needs the admin role, or holding its reservation.').waitFor();
    await page.close();
  }, 120_000);

  it('on and cycle, each confirmed, are followed to pdudaemon’s answer; the board comes and goes', async () => {
    await admin.goto(`/boards/${boardId}`);
    const section = admin.getByTestId('board-power');
    await section.getByRole('button', { name: 'Power on' }).click();
    const confirm = section.getByRole('alertdialog');
    expect(await confirm.textContent()).toContain('Switch rack-2-kv260 on?');
    await confirm.getByRole('button', { name: 'Yes, switch it on' }).click();
    const result = section.getByTestId('power-result');
    await result.getByText(/power on #\d+/).waitFor();
    await result.getByText(/succeeded.*pdudaemon answered “OK - accepted request”/).waitFor({ timeout: 60_000 });
    await admin.locator('dl.facts .badge-online').first().waitFor({ timeout: 60_000 });
    const before = (await board()).connected_at as string;

    await section.getByRole('button', { name: 'Power cycle' }).click();
    expect(await section.getByRole('alertdialog').textContent()).toMatch(/Power-cycle rack-2-kv260\? .*stops without a clean shutdown/);
    await section.getByRole('button', { name: 'Yes, cut and restore its power' }).click();
    await result.getByText(/power cycle #\d+/).waitFor();
    await result.getByText(/succeeded/).waitFor({ timeout: 60_000 });
    expect(await pdu.switched()).toEqual(['1 on', '1 off', '1 on']);
    // A new agent process: linked again, later than before.
    await eventually(async () => {
      const b = await board();
      expect(b.status).toBe('online');
      expect(new Date(b.connected_at).getTime()).toBeGreaterThan(new Date(before).getTime());
    }, 60_000);
    await admin.getByTestId('no-incidents').waitFor();
    await section.scrollIntoViewIfNeeded();
    await look(admin, 'power-switched');
  }, 180_000);

  it('a hung board shows unresponsive, then its incident recovered with the time it took; hung again with no cycle left, bad', async () => {
    const hang = await createInvocation(h, 'hang', { hang: 'board', hang_after_s: 0.3 });
    const run = async () => {
      const res = await h.api(`/api/invocations/${hang}/execute/`, { method: 'POST', json: { board_id: boardId }, headers: { prefer: 'respond-async' } });
      expect(res.status, await res.clone().text()).toBe(202);
    };
    await run();
    await admin.goto(`/boards/${boardId}`);
    const open = admin.getByTestId('incident-open');
    await open.getByText(/rack-2-kv260 stopped answering at .*no heartbeat since/).waitFor({ timeout: 60_000 });
    expect(await admin.locator('dl.facts .badge-unresponsive').count()).toBe(1); // the status line
    await open.scrollIntoViewIfNeeded();
    await look(admin, 'power-unresponsive');

    // Recovered without a person: the incident row says what was done and how long it took.
    const row = admin.getByTestId('board-incidents').locator('tbody tr').first();
    await row.locator('.badge-recovered').waitFor({ timeout: 120_000 });
    expect(await open.count()).toBe(0);
    const text = (await row.textContent()) ?? '';
    expect(text).toMatch(/power cycle #\d+: succeeded/);
    expect(text).toMatch(/health check: no health check matches the board/);
    const [incident] = ((await (await h.api(`/api/boards/${boardId}/incidents/`)).json()) as { incidents: Array<{ recovery_seconds: number }> }).incidents;
    expect(text).toContain(`${incident!.recovery_seconds.toFixed(1)} s`);
    await admin.getByTestId('incident-summary').getByText(/1 incident; 1 recovered without a person, mean time to recover \d+\.\d s/).waitFor();
    await admin.getByTestId('board-incidents').scrollIntoViewIfNeeded();
    await look(admin, 'power-incidents');

    // Hung again: the window's one cycle is spent, so recovery gives up at once and says why.
    await eventually(async () => expect((await board()).status).toBe('online'), 60_000);
    await run();
    const gaveUp = admin.getByTestId('incident-gave-up');
    await gaveUp.getByText(/Recovery gave up/).waitFor({ timeout: 120_000 });
    expect(await gaveUp.textContent()).toMatch(/1 power cycle in 3600 s did not bring it back/);
    await admin.getByTestId('board-health').locator('.health-bad').waitFor(); // the fleet panel's health badge
    await admin.getByTestId('board-incidents').locator('tbody tr').first().locator('.badge-bad').waitFor();
    await expectAccessible(admin, 'the board page with incidents');
    await gaveUp.scrollIntoViewIfNeeded();
    await look(admin, 'power-gave-up');
  }, 300_000);
});
