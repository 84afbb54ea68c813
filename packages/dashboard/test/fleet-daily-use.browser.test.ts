/**
 * Issue 39 in Chromium, findings 8, 16 and 17, on the real control plane and a simulated board:
 * the board page shows the last known PACs and asks the board only when they are stale or on
 * request; a device script that fails shows on the boards list; a script rollout whose script
 * does not stay up fails its step, and the rollout names the script and draws no run-time
 * chart; the drive view on a board without the webcam says to deploy it (and leads there),
 * keeps the board in the URL, and the chooser marks a board with a camera.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/e2e/device-scripts-support.ts';
import { expectAccessible, screenshot, signIn, skipWithoutChromium, startHarness, type Harness } from './browser-support.ts';

const WEBCAM_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../webcam');
const WEBCAM_BUNDLE = path.join(WEBCAM_DIR, 'dist/mm-webcam.mjs');

/** Answers on its port; `/break` leaves a mark and exits, and with the mark it exits at once: a restart loop from then on. */
const flakyScript = `import fs from 'node:fs';
import http from 'node:http';
if (fs.existsSync('broken')) {
  console.error('flaky cam: the camera is gone');
  process.exit(1);
}
http
  .createServer((req, res) => {
    if (req.url === '/break') {
      fs.writeFileSync('broken', '');
      res.end('bye');
      setTimeout(() => process.exit(1), 20);
      return;
    }
    res.end('ok');
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('flaky cam listening'));
`;

/** Answers its port, then exits after a connection (the deploy's own check): it never stays up. */
const crashyScript = `import http from 'node:http';
const server = http.createServer((req, res) => res.end('crashy'));
server.on('connection', () => {
  console.error('crashy cam: no camera, giving up');
  setTimeout(() => process.exit(2), 50);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
`;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe.skipIf(skipWithoutChromium('the fleet’s daily use (PACs, device-script failures, the drive view) in Chromium'))('the dashboard in Chromium: a fleet’s daily use (issue 39)', () => {
  let h: Harness;
  let base: string;
  let page: Page;
  let camId: string;

  const api = async (p: string, init?: RequestInit & { json?: unknown }): Promise<Json> => {
    const res = await h.api(p, init);
    expect(res.status, `${init?.method ?? 'GET'} ${p}`).toBeLessThan(300);
    return (await res.json()) as Json;
  };
  const pacQueries = async () => (await api('/api/operations/?kind=pac_query&limit=1')).total as number;

  /** A device-script entry with its program uploaded. */
  const scriptWith = async (name: string, program: string): Promise<string> => {
    const slug = name.toLowerCase().replace(/\W+/g, '-');
    const created = await api('/api/device-scripts/', {
      method: 'POST',
      json: { name, device_type: 'test', description: '', script_filename: `${slug}.mjs`, remote_dir: `/opt/model-manager/device-scripts/${slug}`, port: await freePort(), version: '1.0.0' },
    });
    const form = new FormData();
    form.append('file', new Blob([program]), `${slug}.mjs`);
    expect((await h.api(`/api/device-scripts/${created.id}/file/`, { method: 'PUT', body: form })).status).toBe(200);
    return created.id as string;
  };

  /** Desktop (1280 px, light), phone (390 px) and dark: the same page, looked at three ways. */
  const threeShots = async (browser: Browser, pathname: string, name: string, ready: (p: Page) => Promise<unknown>) => {
    await screenshot(page, `${name}-desktop`);
    for (const [suffix, viewport, colorScheme] of [
      ['390', { width: 390, height: 844 }, 'light'],
      ['dark', { width: 1280, height: 900 }, 'dark'],
    ] as const) {
      const context = await browser.newContext({ baseURL: base, viewport, colorScheme });
      const p = await context.newPage();
      await signIn(p, base, h.users.admin.username, h.users.admin.password);
      await p.goto(pathname);
      await ready(p);
      await screenshot(p, `${name}-${suffix}`);
      await context.close();
    }
  };

  beforeAll(async () => {
    // The webcam bundle a user deploys (pnpm --filter @mm/webcam bundle); the server seeds it as the webcam's program.
    execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: WEBCAM_DIR, stdio: 'ignore' });
    h = await startHarness({ serverEnv: { MM_WEBCAM_PROGRAM: WEBCAM_BUNDLE, MM_SCRIPT_HEALTH_TIMEOUT_S: '15' } });
    base = h.server.url.replace(/\/$/, '');
    const { scripts } = await api('/api/device-scripts/?device_type=webcam');
    camId = scripts[0].id;
    // Its own port: 8766 may be taken on a shared machine.
    await api(`/api/device-scripts/${camId}/`, { method: 'PATCH', json: { port: await freePort() } });
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('the board page shows the last known PACs with their age and queues one pac_query, not one per visit; Refresh asks again', async () => {
    await page.goto(`/boards/${h.board.id}`);
    await page.getByRole('region', { name: 'PACs' }).waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await page.getByTestId('pacs-age').textContent()) ?? '').toMatch(/^Listed (just now|\d+ s ago)/);
    expect(await pacQueries()).toBe(1);
    const stored = await api(`/api/boards/${h.board.id}/pacs/`);
    expect(stored).toMatchObject({ board_id: h.board.id, stale: false, stale_reason: null, query_operation_id: null });
    expect(stored.active).toBe((await api(`/api/boards/${h.board.id}/`)).active_pac);
    expect(stored.pacs.length).toBeGreaterThan(0);
    expect(stored.age_s).toBeGreaterThanOrEqual(0);

    // Three more visits: the stored list, no query.
    for (let i = 0; i < 3; i++) {
      await page.reload();
      await page.getByRole('region', { name: 'PACs' }).waitFor();
      await page.getByTestId('pacs-age').waitFor();
      await page.waitForLoadState('networkidle');
    }
    expect(await pacQueries()).toBe(1);
    await threeShots(h.browser, `/boards/${h.board.id}`, 'h39-board-pacs', (p) => p.getByTestId('pacs-age').waitFor());

    // On request: one more query, and the list is as new as it.
    const before = stored.listed_at as string;
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    await expect.poll(pacQueries).toBe(2);
    await expect.poll(async () => (await api(`/api/boards/${h.board.id}/pacs/`)).listed_at).not.toBe(before);
    await expectAccessible(page, 'board page with stored PACs');
  }, 180_000);

  it('a device script in a restart loop shows on its board’s row in the boards list', async () => {
    const flaky = await scriptWith('Flaky cam', flakyScript);
    const deployed = await api(`/api/device-scripts/${flaky}/deploy/`, { method: 'POST', json: { board_id: h.board.id } });
    expect(deployed.status).toBe('succeeded');
    await page.goto('/boards');
    await page.getByTestId('board-sim-board').waitFor();
    expect(await page.getByTestId('script-failed-sim-board').count()).toBe(0);
    // Its camera goes: it exits, and every restart exits again.
    expect((await h.api(`/api/device-scripts/${flaky}/proxy/break?board_id=${h.board.id}`)).status).toBe(200);
    const marker = page.getByTestId('script-failed-sim-board');
    await expect.poll(async () => ((await marker.count()) > 0 ? await marker.first().textContent() : ''), { timeout: 30_000 }).toMatch(/^Flaky cam failed/);
    expect(await marker.first().getAttribute('href')).toBe(`/boards/${h.board.id}`);
    await screenshot(page, 'h39-boards-script-failed-desktop');
    await expectAccessible(page, 'boards list with a failed script');
    await threeShots(h.browser, '/boards', 'h39-boards-script-failed', (p) => p.getByTestId('board-sim-board').waitFor());
  }, 180_000);

  it('a script rollout fails the step of a script that does not stay up, names the script and draws no run-time chart', async () => {
    const crashy = await scriptWith('Crashy cam', crashyScript);
    const created = await api('/api/rollouts/', { method: 'POST', json: { kind: 'script_deploy', board_selector: {}, params: { script_id: crashy } } });
    await expect.poll(async () => (await api(`/api/rollouts/${created.id}/`)).finished_at, { timeout: 90_000 }).not.toBeNull();
    const rollout = await api(`/api/rollouts/${created.id}/`);
    expect(rollout.boards).toHaveLength(1);
    expect(rollout.boards[0].status).toBe('failed');
    const step = await api(`/api/operations/${rollout.boards[0].operation_id}/`);
    expect(step.error.code).toBe('script_unstable');
    expect(step.error.message).toContain('did not stay up');

    await page.goto(`/rollouts/${created.id}`);
    await expect.poll(async () => (await page.getByTestId('rollout-script').textContent()) ?? '').toBe('Crashy cam version 1.0.0');
    await page.getByTestId('rollout-board').first().waitFor();
    expect(await page.locator('main').textContent()).not.toContain(crashy);
    expect(await page.getByRole('heading', { name: 'By board' }).count()).toBe(0);
    await expectAccessible(page, 'script rollout');
    await threeShots(h.browser, `/rollouts/${created.id}`, 'h39-script-rollout', (p) => p.getByTestId('rollout-script').getByRole('link').waitFor());
  }, 180_000);

  it('the drive view on a board without the webcam says to deploy it and leads there; the board stays in the URL; the chooser marks the camera', async () => {
    await page.goto('/drive');
    // The only board is chosen, and the URL says so.
    await expect.poll(() => page.url()).toContain(`/drive?board=${h.board.id}`);
    const missing = page.getByTestId('camera-not-deployed');
    await missing.waitFor({ timeout: 30_000 });
    const webcam = await api(`/api/device-scripts/${camId}/`);
    expect(await missing.textContent()).toContain(`${webcam.name} is not deployed on sim-board`);
    const status = (await page.getByTestId('camera-status').textContent()) ?? '';
    expect(status).toContain('is not deployed on this board');
    expect(status).not.toContain('MM_SCRIPT_PORTS');
    // The API says the same to programs.
    const refused = await h.api(`/api/device-scripts/${camId}/camera/?board_id=${h.board.id}`);
    expect(refused.status).toBe(403);
    const problem = (await refused.json()) as Json;
    expect(problem).toMatchObject({ code: 'script_port_not_allowed', deployed: false, script_id: camId, board_id: h.board.id });
    expect(problem.detail).toMatch(/^.+ is not deployed on sim-board: deploy it there/);
    await expectAccessible(page, 'drive view without the webcam');
    await threeShots(h.browser, `/drive?board=${h.board.id}`, 'h39-drive-no-webcam', (p) => p.getByTestId('camera-not-deployed').waitFor({ timeout: 30_000 }));
    expect(await page.getByLabel('Board').locator('option:checked').textContent()).not.toContain('camera');

    // A reload keeps the board.
    await page.reload();
    await expect.poll(async () => page.getByLabel('Board').inputValue()).toBe(h.board.id);

    // The link: the webcam's page with the board chosen; deploy it there.
    await missing.getByRole('link', { name: `Deploy ${webcam.name} on sim-board…` }).click();
    await expect.poll(() => page.url()).toContain(`/device-scripts/${camId}?board=${h.board.id}`);
    await page.getByRole('button', { name: /^Deploy .* to sim-board$/ }).click();
    await expect.poll(async () => (await page.getByTestId('script-programs').textContent()) ?? '', { timeout: 60_000 }).toMatch(/sim-board\s*running/);

    // Back on the drive view: frames, and the chooser says this board has a camera.
    await page.goto(`/drive?board=${h.board.id}`);
    await page.getByTestId('camera-frame').waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await page.getByLabel('Board').locator('option:checked').textContent()) ?? '', { timeout: 30_000 }).toMatch(/sim-board \(online.*\) · camera$/);
    await screenshot(page, 'h39-drive-webcam-deployed-desktop');
  }, 240_000);
});
