import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedDpuPath } from '../../runner/src/runner-home.ts';
import { pythonRuntime } from '../../runner/test/support/python-runtime.ts';
import { CHROMIUM, createInvocation, expectAccessible, hasChromium, screenshot, signIn, startHarness, type Harness } from './browser-support.ts';

/**
 * The invocation page's mm-runner parameter form in Chromium (docs/runner.md): written with a
 * few fields, uploaded as the parameter file (valid for the server), a bad file chosen by hand
 * refused with the field named, and — where this machine can run mm-runner — a run of it on
 * the simulated board with its results.jsonl linked beside the output video. Screenshots at
 * 1280 and 390 px, light and dark.
 */
if (!hasChromium) console.warn(`runner parameters browser test skipped: no Chromium at ${CHROMIUM}`);
const runtime = pythonRuntime();

describe.skipIf(!hasChromium)('the dashboard in Chromium: mm-runner parameters', () => {
  let h: Harness;
  let page: Page;
  let base: string;
  let tmp: string;

  beforeAll(async () => {
    h = await startHarness({ agentEnv: { MM_PYTHON: runtime.python, MM_RUNNER_IDLE_S: '0.2' } });
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-runner-'));
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 180_000);

  afterAll(async () => {
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('writes a valid parameter file from the form and uploads it; a bad file is refused with its field', async () => {
    const id = await createInvocation(h, 'colour classifier');
    await page.goto(`/invocations/${id}`);
    await page.getByRole('heading', { name: /colour classifier/ }).waitFor();
    await page.getByRole('button', { name: 'Write mm-runner parameters…' }).click();
    const form = page.getByTestId('runner-parameters');
    await form.getByLabel('Task', { exact: true }).selectOption('detection');
    await form.getByLabel('YOLO family', { exact: true }).selectOption('yolov3');
    await form.getByLabel('Resize', { exact: true }).selectOption('letterbox');
    await form.getByLabel('Channel order', { exact: true }).selectOption('rgb');
    await form.getByLabel('Pixel values', { exact: true }).selectOption('unit');
    await form.getByLabel(/^Class names/).fill('black\nwhite\nred\ngreen\nblue\nyellow\ncyan\nmagenta');
    await form.getByLabel('Confidence', { exact: true }).fill('0.5');
    await form.getByLabel('DPU threads', { exact: true }).fill('3');
    await form.getByText(/^The file/).click();
    const shown = JSON.parse((await form.getByTestId('runner-parameters-json').textContent()) ?? '');
    expect(shown).toMatchObject({ schema: 'mm-runner/1', task: 'detection', preprocess: { resize: 'letterbox', channels: 'rgb' }, detection: { family: 'yolov3', conf: 0.5 }, run: { threads: 3 } });
    await screenshot(page, 'runner-parameters-form');
    await expectAccessible(page, 'runner parameter form');
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, `runner-parameters-form-390-${scheme}`);
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= 390)).toBe(true);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 1280, height: 900 });
    await screenshot(page, 'runner-parameters-form-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await form.getByRole('button', { name: 'Upload as the parameter file' }).click();
    await page.getByTestId('slot-parameter').getByRole('link', { name: 'mm-runner.json' }).waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('runner-parameters').count()).toBe(0);
    const stored = await (await h.api(`/api/invocations/${id}/files/parameter/`)).json();
    expect(stored).toEqual(shown);

    // Opened again, the form starts from the file the invocation has.
    await page.getByRole('button', { name: 'Write mm-runner parameters…' }).click();
    await expect.poll(() => form.getByLabel('Task', { exact: true }).inputValue()).toBe('detection');
    expect(await form.getByLabel('DPU threads', { exact: true }).inputValue()).toBe('3');
    await form.getByRole('button', { name: 'Close' }).click();

    // A file of one's own that claims the schema and breaks it: refused, the field named.
    await page.locator('#slot-parameter-input').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"schema":"mm-runner/1","task":"passthrough","run":{"threads":0}}') });
    const alert = page.getByTestId('slot-parameter').getByRole('alert');
    await alert.waitFor({ timeout: 60_000 });
    expect(await alert.textContent()).toMatch(/\$\.run\.threads:? must be at least 1/);
    await screenshot(page, 'runner-parameters-refused');
    expect(await page.getByTestId('slot-parameter').getByRole('link', { name: 'mm-runner.json' }).count()).toBe(1);
  });

  it.skipIf(!runtime.ok)('runs it on the simulated board: the annotated video plays and results.jsonl is linked', async () => {
    const id = await createInvocation(h, 'runner in the browser');
    const model = path.join(tmp, 'classifier.xmodel');
    const video = path.join(tmp, 'red.mp4');
    spawnSync(runtime.python, ['-m', 'mm_dpu_sim.build', 'classifier', model, '--input', '224x224', '--dpu-ms', '3'], { env: { ...process.env, PYTHONPATH: simulatedDpuPath() } });
    spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=320x240:d=1:r=10', '-pix_fmt', 'yuv420p', video]);
    for (const [kind, file] of [['weights', model], ['input_video', video]] as const) {
      const form = new FormData();
      form.set('file_type', kind);
      form.set('file', new Blob([new Uint8Array(await fs.readFile(file))]), path.basename(file));
      expect((await h.api(`/api/invocations/${id}/upload/`, { method: 'POST', body: form })).status).toBe(201);
    }
    await page.goto(`/invocations/${id}`);
    await page.getByRole('button', { name: 'Write mm-runner parameters…' }).click();
    const form = page.getByTestId('runner-parameters');
    await form.getByLabel('Channel order', { exact: true }).selectOption('rgb');
    await form.getByLabel('Pixel values', { exact: true }).selectOption('unit');
    await form.getByLabel(/^Labels/).fill('black\nwhite\nred\ngreen\nblue\nyellow\ncyan\nmagenta');
    await form.getByRole('button', { name: 'Upload as the parameter file' }).click();
    await page.getByTestId('slot-parameter').getByRole('link', { name: 'mm-runner.json' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Execute' }).click();
    const link = page.getByTestId('results-link');
    await link.waitFor({ timeout: 120_000 });
    const href = await link.getAttribute('href');
    const lines = (await (await h.api(href!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(10);
    expect(lines.every((l) => l.classes[0].label === 'red')).toBe(true);
    const playable = await page.getByTestId('output-video').evaluate(async (v: any) => {
      if (v.readyState < 1) await new Promise((r) => v.addEventListener('loadedmetadata', r, { once: true }));
      return { width: v.videoWidth, duration: v.duration, canPlay: v.canPlayType('video/mp4; codecs="avc1.64001E"') };
    });
    expect(playable.width).toBe(320);
    expect(playable.duration).toBeGreaterThan(0.5);
    await screenshot(page, 'runner-run-with-results');
  });
});
