import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.ts';
import { freePort } from '../../../test/e2e/device-scripts-support.ts';
import { expectAccessible, screenshot, SHOTS_DIR, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WEBCAM_BIN = path.join(repoRoot, 'packages/webcam/bin/mm-webcam.mjs');
/** A second folder to copy the screenshots to (MM_SHOTS_DIR), besides test-output/. */
const SHARED_SHOTS = process.env.MM_SHOTS_DIR;

function startWebcam(port: number): ChildProcess {
  return spawn(process.execPath, [WEBCAM_BIN, '--simulate', '--port', String(port)], { cwd: repoRoot, stdio: 'ignore' });
}

/**
 * The drive view (/drive) in Chromium against a real server, a simulated board and the webcam
 * script with its simulated camera: frames arrive through the camera relay, the pad waits for
 * a board, W/Space drive and stop, and a lost camera feed stops the motor.
 */
describe.skipIf(skipWithoutChromium('the drive view in Chromium'))('the drive view in Chromium', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let webcamPort: number;
  let webcam: ChildProcess;
  let camId: string;

  const motion = async () => ((await (await h.api(`/api/device-scripts/${h.gpioScriptId}/proxy/state?board_id=${h.board.id}`)).json()) as { motion: string }).motion;
  const frames = async () => Number(await page.getByTestId('camera-frames').textContent());

  beforeAll(async () => {
    webcamPort = await freePort();
    webcam = startWebcam(webcamPort);
    h = await startHarness({ agentEnv: { MM_SCRIPT_PORTS: String(webcamPort) } });
    base = h.server.url.replace(/\/$/, '');
    const { scripts } = (await (await h.api('/api/device-scripts/?device_type=webcam')).json()) as { scripts: Array<{ id: string }> };
    camId = scripts[0]!.id;
    expect((await h.api(`/api/device-scripts/${camId}/`, { method: 'PATCH', json: { port: webcamPort } })).status).toBe(200);
    // A second board (never connected): the page cannot pick for the person.
    expect((await h.api('/api/boards/', { method: 'POST', json: { name: 'spare-board' } })).status).toBe(201);
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 180_000);

  afterAll(async () => {
    webcam?.kill('SIGTERM');
    await h?.stop();
  });

  it('shows the live camera beside the pad; the pad waits for a board and names it; W drives, Space stops', async () => {
    await page.goto('/drive');
    await page.getByRole('heading', { name: 'Drive', level: 1 }).waitFor();
    await page.getByText('No board chosen: choose the board to drive.').waitFor();
    expect(await page.getByTestId('drive-forward').isDisabled()).toBe(true);

    await page.getByLabel('Board').selectOption({ label: 'sim-board (online)' });
    await expect.poll(() => page.getByTestId('driving-board').textContent()).toContain('Driving sim-board');
    // Frames arrive, one after the other.
    await page.getByTestId('camera-frame').waitFor({ timeout: 30_000 });
    await expect.poll(frames, { timeout: 30_000 }).toBeGreaterThan(5);
    const seen = await frames();
    await expect.poll(frames, { timeout: 30_000 }).toBeGreaterThan(seen + 10);
    // The image is replaced 15 times a second: one caught between its src and its decode reads 0 × 0.
    const naturalSize = () =>
      page.getByTestId('camera-frame').evaluate((el) => {
        const i = el as unknown as { naturalWidth: number; naturalHeight: number };
        return [i.naturalWidth, i.naturalHeight];
      });
    await expect.poll(naturalSize).toEqual([640, 480]);
    expect(await page.getByTestId('drive-forward').isDisabled()).toBe(false);
    await page.getByText('Motor feed: connected').waitFor({ timeout: 30_000 });

    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.down('w');
    await expect.poll(motion).toBe('forward');
    await screenshot(page, 'drive-01-live');
    if (SHARED_SHOTS) await fs.copyFile(path.join(SHOTS_DIR, 'drive-01-live.png'), path.join(SHARED_SHOTS, 'drive-01-live.png')).catch(() => {});
    await page.keyboard.press(' ');
    await expect.poll(motion).toBe('stop');
    await page.keyboard.up('w');
    await page.keyboard.down('d');
    await expect.poll(motion).toBe('right');
    await page.keyboard.up('d');
    await expect.poll(motion).toBe('stop');
    await expectAccessible(page, 'drive view');
  }, 120_000);

  it('stops the motor when the camera feed is lost', async () => {
    await page.keyboard.down('ArrowUp');
    await expect.poll(motion).toBe('forward');
    webcam.kill('SIGKILL');
    await page.getByText('Camera feed lost: the motor was stopped.').waitFor({ timeout: 20_000 });
    await expect.poll(motion).toBe('stop');
    await screenshot(page, 'drive-02-feed-lost');
    if (SHARED_SHOTS) await fs.copyFile(path.join(SHOTS_DIR, 'drive-02-feed-lost.png'), path.join(SHARED_SHOTS, 'drive-02-feed-lost.png')).catch(() => {});
    await page.keyboard.up('ArrowUp');
    // The script comes back: so do the frames.
    webcam = startWebcam(webcamPort);
    const before = await frames();
    await eventually(async () => expect(await frames()).toBeGreaterThan(before + 3), 30_000);
  }, 120_000);
});
