import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/e2e/device-scripts-support.ts';
import { expectAccessible, screenshot, signIn, startHarness, type Harness, SHOTS_DIR, skipWithoutChromium } from './browser-support.ts';

/** Where these screenshots go (the harness's folder unless MM_SCRIPTS_SHOTS says otherwise). */
const SHOTS = process.env.MM_SCRIPTS_SHOTS ?? path.join(SHOTS_DIR, 'scripts');

const httpScript = `import http from 'node:http';
http.createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('browser script listening on ' + process.env.PORT));
`;

/**
 * Device scripts on the board in Chromium (docs/device-scripts.md): an admin uploads a
 * program on the script's page and deploys it to the simulated board; the board page shows
 * it running with its output, and stop/start change its state.
 */
describe.skipIf(skipWithoutChromium('the board page’s device scripts in Chromium'))('the dashboard in Chromium: device scripts on the board', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let tmp: string;
  let scriptId: string;

  const shot = async (name: string) => {
    await screenshot(page, name);
    await fs.mkdir(SHOTS, { recursive: true }).catch(() => undefined);
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true }).catch(() => undefined);
  };

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-scripts-'));
    const created = await h.api('/api/device-scripts/', {
      method: 'POST',
      json: { name: 'Hello script', device_type: 'test', description: 'answers ok', script_filename: 'hello.mjs', remote_dir: '/opt/model-manager/device-scripts/hello', port: await freePort(), version: '1.0.0' },
    });
    expect(created.status).toBe(201);
    scriptId = ((await created.json()) as { id: string }).id;
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 1000 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('uploads and deploys a program from the script page, then shows it on the board page with its output, and stops and starts it', async () => {
    await page.goto(`${base}/device-scripts/${scriptId}`);
    await page.getByRole('heading', { name: 'Programs and boards' }).waitFor();
    const file = path.join(tmp, 'hello.mjs');
    await fs.writeFile(file, httpScript);
    await page.getByLabel(/Program of version 1\.0\.0/).setInputFiles(file);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page
      .getByTestId('script-programs')
      .getByText('(current)')
      .waitFor({ timeout: 15_000 })
      .catch(async (err: unknown) => {
        await shot('script-page-upload-failed');
        throw err;
      });
    await page.getByRole('button', { name: 'Deploy 1.0.0 to sim-board' }).click();
    await expect.poll(async () => (await page.getByTestId('script-programs').textContent()) ?? '', { timeout: 30_000 }).toMatch(/sim-board\s*running/);
    await shot('script-page-deployed');
    await expectAccessible(page, 'script page');

    await page.goto(`${base}/device-scripts`);
    await expect.poll(async () => (await page.getByTestId(`runs-on-${scriptId}`).textContent()) ?? '', { timeout: 15_000 }).toContain('sim-board: 1.0.0');

    await page.goto(`${base}/boards/${h.board.id}`);
    const section = page.getByTestId('board-scripts');
    await section.getByRole('heading', { name: 'Device scripts' }).waitFor();
    const state = page.getByTestId(`script-state-${scriptId}`);
    await expect.poll(() => state.textContent(), { timeout: 15_000 }).toBe('running');
    await expect.poll(async () => (await page.getByTestId('script-output').textContent()) ?? '', { timeout: 15_000 }).toContain('browser script listening on');
    await shot('board-scripts-running');
    await expectAccessible(page, 'board page with scripts');

    await section.getByRole('button', { name: 'Stop Hello script', exact: true }).click();
    await expect.poll(() => state.textContent(), { timeout: 20_000 }).toBe('stopped');
    await shot('board-scripts-stopped');
    await section.getByRole('button', { name: 'Start Hello script', exact: true }).click();
    await expect.poll(() => state.textContent(), { timeout: 20_000 }).toBe('running');
  });
});
