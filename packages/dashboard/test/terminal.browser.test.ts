import { existsSync } from 'node:fs';
import os from 'node:os';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, screenshot, signIn, skipWithoutChromium, startHarness, type Harness, screenshotEveryWay } from './browser-support.ts';

/**
 * A terminal on the board in Chromium (docs/terminal.md), through the real server and a real
 * agent whose simulated board runs `/bin/sh` in a pseudo-terminal: an operator without the
 * board's reservation is refused, reserves it, opens the terminal from the board page, runs a
 * command and reads its output on the xterm.js screen, resizes the window (the shell sees the
 * new size), interrupts `sleep 100` with Ctrl-C and leaves with `exit 3`; a PAC activation's
 * reboot ends a session with the reason said; a viewer gets no terminal; an admin plays a
 * recording back; an offline board is refused. No page reports a Content-Security-Policy
 * violation (xterm.js writes styles at run time: lib/xterm-styles.ts). Screens at 1280 and
 * 390 px, light and dark.
 */
const TERMINAL_ENV = {
  MM_TERMINAL_USER: os.userInfo().username,
  MM_TERMINAL_SHELL: '/bin/sh',
  ...(existsSync('/usr/bin/python3') ? { MM_PYTHON: '/usr/bin/python3' } : {}),
};
const SAMPLE_PAC = 'zcu104-sim-sample-cfg1';

describe.skipIf(skipWithoutChromium('the terminal and its recordings in Chromium'))('the dashboard in Chromium: a terminal on the board', () => {
  let h: Harness;
  let base: string;
  const contexts: BrowserContext[] = [];

  /** What the pages reported against the Content-Security-Policy (none is allowed: the terminal's styles included). */
  const violations: string[] = [];

  async function signedIn(who: 'admin' | 'operator' | 'viewer'): Promise<Page> {
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));" });
    page.on('console', (m) => {
      if (m.type() === 'error' && /CSP violation|Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
    });
    await signIn(page, base, h.users[who].username, h.users[who].password);
    return page;
  }


  /** The xterm.js screen, one string per row as drawn (its spaces made plain). */
  const screenRows = async (page: Page) => (await page.locator('.xterm-rows > div').allTextContents()).map((r) => r.replace(/\u00a0/g, ' ').trimEnd());
  const prompt = async (page: Page) => {
    await expect.poll(async () => (await screenRows(page)).some((r) => /[#$]$/.test(r)), { timeout: 60_000 }).toBe(true);
  };
  const run = async (page: Page, line: string) => {
    await page.keyboard.type(line);
    await page.keyboard.press('Enter');
  };

  beforeAll(async () => {
    h = await startHarness({ agentEnv: TERMINAL_ENV });
    base = h.server.url.replace(/\/$/, '');
  }, 600_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await h?.stop();
  }, 60_000);

  it('an operator without the reservation is refused; with it, runs a command, resizes, interrupts, and sees the exit status', async () => {
    const page = await signedIn('operator');
    await page.goto(`/boards/${h.board.id}`);
    await page.getByTestId('board-terminal').getByText('Reserve the board to open a terminal on it.').waitFor();
    expect(await page.getByRole('link', { name: 'Terminal', exact: true }).count()).toBe(0);

    // The terminal's own address, without the reservation: the server's refusal, in words.
    await page.goto(`/boards/${h.board.id}/terminal`);
    const refused = page.getByTestId('terminal-refused');
    await refused.getByText('A terminal needs the board’s reservation.').waitFor();
    expect(await refused.getAttribute('data-code')).toBe('reservation_required');
    await screenshot(page, 'terminal-refused-reservation');

    await page.goto(`/boards/${h.board.id}`);
    await page.getByRole('button', { name: 'Reserve for 1 h' }).click();
    await page.getByTestId('board-reservation').getByText(/held by otto until/).waitFor();
    await page.getByTestId('board-terminal').getByRole('link', { name: 'Terminal', exact: true }).waitFor();
    await screenshotEveryWay(page, 'terminal-board-page');
    await page.getByTestId('board-terminal').getByRole('link', { name: 'Terminal', exact: true }).click();
    await page.getByRole('heading', { name: 'Terminal on sim-board', level: 1 }).waitFor();
    const box = page.getByTestId('terminal');
    await expect.poll(() => box.getAttribute('data-state'), { timeout: 60_000 }).toBe('open');
    await prompt(page);

    await run(page, 'echo hello-$((6*7))');
    await expect.poll(async () => (await screenRows(page)).includes('hello-42')).toBe(true);
    await expectAccessible(page, 'terminal page');

    // The shell sees the box's size, and a new one when the window changes.
    const size = async () => `${await box.getAttribute('data-rows')} ${await box.getAttribute('data-cols')}`;
    const wide = await size();
    await run(page, 'clear; stty size');
    await expect.poll(async () => (await screenRows(page)).includes(wide)).toBe(true);
    await page.setViewportSize({ width: 700, height: 600 });
    await expect.poll(size).not.toBe(wide);
    const narrow = await size();
    expect(Number(narrow.split(' ')[1])).toBeLessThan(Number(wide.split(' ')[1]));
    await run(page, 'clear; stty size');
    await expect.poll(async () => (await screenRows(page)).includes(narrow)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect.poll(size).toBe(wide);

    // Ctrl-C reaches the foreground job: the sleep ends and the next command runs at once
    // (after the sleep it would take 100 s, past any wait here).
    await run(page, 'clear; echo sleeping-$((2*3)); sleep 100; echo not-interrupted');
    await expect.poll(async () => (await screenRows(page)).includes('sleeping-6')).toBe(true);
    await page.keyboard.press('Control+C');
    await run(page, 'echo after-$((1+1))');
    await expect.poll(async () => (await screenRows(page)).includes('after-2')).toBe(true);
    expect(await screenRows(page)).not.toContain('not-interrupted');

    // Colours: xterm.js draws them with style rules it writes at run time, which the CSP
    // blocks as inline styles; the view applies them another way (lib/xterm-styles.ts).
    await run(page, "clear; echo hello-$((6*7)); ls /; printf '\\033[32mgreen-text\\033[0m \\033[1;31mred-bold\\033[0m\\n'");
    await expect.poll(async () => (await screenRows(page)).some((r) => r.startsWith('green-text red-bold'))).toBe(true);
    const color = (text: string) => page.locator('.xterm-rows span', { hasText: text }).last().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);
    const plain = await page.locator('.xterm-rows > div', { hasText: 'hello-42' }).last().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);
    expect(plain).toBe('rgb(230, 237, 243)');
    expect(await color('green-text')).not.toBe(plain);
    expect(await color('red-bold')).not.toBe(plain);
    expect(await color('red-bold')).not.toBe(await color('green-text'));
    await screenshotEveryWay(page, 'terminal-open');

    await run(page, 'exit 3');
    const ended = page.getByTestId('terminal-ended');
    await ended.getByText('The shell exited with status 3.').waitFor();
    expect(await box.getAttribute('data-state')).toBe('ended');
    await screenshotEveryWay(page, 'terminal-exited');

    // A new session opens from there.
    await ended.getByRole('button', { name: 'Open a new session' }).click();
    await expect.poll(() => page.getByTestId('terminal').getAttribute('data-state'), { timeout: 60_000 }).toBe('open');
    await prompt(page);
    await run(page, 'exit 0');
    await page.getByTestId('terminal-ended').getByText('The shell exited with status 0.').waitFor();
    expect(violations).toEqual([]);
  }, 300_000);

  it('a PAC activation’s reboot ends the session with the reason said', async () => {
    // The operator's lease ends first: a reserved board's work from others (this activation) would wait for it.
    const held = (await (await h.api(`/api/reservations/?board_id=${h.board.id}&status=active`)).json()) as { reservations: Array<{ id: number }> };
    for (const r of held.reservations) expect((await h.api(`/api/reservations/${r.id}/`, { method: 'DELETE' })).status).toBe(204);
    const page = await signedIn('admin');
    await page.goto(`/boards/${h.board.id}/terminal`);
    await expect.poll(() => page.getByTestId('terminal').getAttribute('data-state'), { timeout: 60_000 }).toBe('open');
    await prompt(page);
    const activated = await h.api('/api/pacs/activate/', { method: 'POST', json: { board_id: h.board.id, pac: SAMPLE_PAC } });
    expect([200, 202], await activated.clone().text()).toContain(activated.status);
    await page.getByTestId('terminal-ended').getByText(/The board is rebooting \(a PAC activation\)/).waitFor();
    await screenshot(page, 'terminal-board-rebooting');
    // Once the board is back with the PAC active, a new session opens.
    await expect
      .poll(async () => (await (await h.api(`/api/boards/${h.board.id}/`)).json()) as { status: string; active_pac: string | null }, { timeout: 90_000 })
      .toMatchObject({ status: 'online', active_pac: SAMPLE_PAC });
    await page.getByRole('button', { name: 'Open a new session' }).click();
    await expect.poll(() => page.getByTestId('terminal').getAttribute('data-state'), { timeout: 60_000 }).toBe('open');
    await prompt(page);
    await run(page, 'exit');
    await page.getByTestId('terminal-ended').waitFor();
  }, 300_000);

  it('a viewer has no terminal: no button on the board page, and the page refuses', async () => {
    const page = await signedIn('viewer');
    await page.goto(`/boards/${h.board.id}`);
    await page.getByTestId('board-terminal').getByText(/needs the operator role/).waitFor();
    expect(await page.getByRole('link', { name: 'Terminal', exact: true }).count()).toBe(0);
    await page.goto(`/boards/${h.board.id}/terminal`);
    await page.getByText('This needs the operator role.').waitFor();
    expect(await page.getByTestId('terminal').count()).toBe(0);
  }, 120_000);

  it('an admin lists the sessions and plays a recording back', async () => {
    const page = await signedIn('admin');
    await page.getByRole('link', { name: 'Terminal sessions' }).first().click();
    await page.getByRole('heading', { name: 'Terminal sessions', level: 1 }).waitFor();
    const sessions = (await (await h.api('/api/terminal-sessions/')).json()) as { sessions: Array<{ id: string; username: string | null; exit_code: number | null; end_reason: string | null }> };
    const mine = sessions.sessions.find((s) => s.username === 'otto' && s.exit_code === 3)!;
    expect(mine).toBeDefined();
    expect(sessions.sessions.some((s) => s.end_reason === 'board_rebooting')).toBe(true);
    const row = page.getByTestId(`session-${mine.id}`);
    await row.waitFor();
    expect(await row.textContent()).toMatch(/otto.*sim-board.*exit 3/);
    await expectAccessible(page, 'terminal sessions page');
    await screenshotEveryWay(page, 'terminal-sessions');

    await row.getByRole('button', { name: /Play/ }).click();
    const player = page.getByTestId('recording-player');
    await player.getByText('The shell exited with status 3.').waitFor();
    // The recording plays: what the shell printed shows on the player's screen.
    await expect.poll(async () => (await player.locator('.ap-term').textContent()) ?? '', { timeout: 60_000 }).toContain('hello-42');
    await screenshotEveryWay(page, 'terminal-recording');
    expect(violations).toEqual([]);
  }, 240_000);

  it('an offline board: no button, and the page says the board is offline', async () => {
    const page = await signedIn('admin');
    await h.agent.stop();
    await expect.poll(async () => ((await (await h.api(`/api/boards/${h.board.id}/`)).json()) as { status: string }).status, { timeout: 60_000 }).not.toBe('online');
    await page.goto(`/boards/${h.board.id}`);
    await page.getByTestId('board-terminal').getByText(/not online/).waitFor();
    await page.goto(`/boards/${h.board.id}/terminal`);
    const refused = page.getByTestId('terminal-refused');
    await refused.getByText('The board is offline.').waitFor();
    expect(await refused.getAttribute('data-code')).toBe('board_offline');
    await screenshotEveryWay(page, 'terminal-offline');
  }, 120_000);
});
