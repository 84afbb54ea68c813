import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { realPacEntries, tarArchive } from '../../agent/test/pac-test-support.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { takeSseBlocks, type SseBlock } from '../../../test/support/sse.ts';
import { ADMIN_TOKEN, expectAccessible, screenshot, personalToken, signIn, signInWithToken, startHarness, type Harness, createInvocation, skipWithoutChromium } from './browser-support.ts';

interface VideoElement {
  muted: boolean;
  currentTime: number;
  play(): Promise<void>;
}

/**
 * The dashboard's other flows in Chromium against the real control plane and a simulated
 * board: the device-script catalogue edited by an admin, a PAC archive installed with upload
 * progress, an operation cancelled from its page, a board registered (token and install
 * command shown once, and the token works), the motor stopped by the script's dead-man hold
 * when the browser loses its connection, and a viewer signed in with a password (the session
 * cookie only, auth on) playing the video and downloading the ZIP and the log.
 */
describe.skipIf(skipWithoutChromium('the dashboard’s other flows in Chromium'))('the dashboard in Chromium: catalogue, PAC install, cancel, board registration, motor dead-man, cookie downloads', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let tmp: string;
  const report: Record<string, unknown> = {};

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-flows-'));
    context = await h.browser.newContext({ baseURL: base, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 180_000);

  afterAll(async () => {
    console.log('dashboard flows measurements:', JSON.stringify(report));
    await context?.close().catch(() => undefined);
    await h?.stop();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  /** An invocation with a parameter file, made through the API. */
  const invocationWith = (name: string, params: Record<string, unknown>) => createInvocation(h, name, params);

  it('an admin adds, edits and deletes a device-script catalogue entry', async () => {
    await page.goto('/device-scripts');
    await page.getByRole('button', { name: 'Add a script' }).click();
    const form = page.getByRole('form', { name: 'Add a script' });
    await form.getByLabel('Name', { exact: true }).fill('webcam-streamer');
    await form.getByLabel(/Device type/).fill('webcam');
    await form.getByLabel('Script file name').fill('webcam.py');
    await form.getByLabel(/Folder on the board/).fill('/opt/scripts/webcam');
    await form.getByLabel('Port', { exact: true }).fill('8080');
    await form.getByLabel(/Version/).fill('1.0.0');
    await form.getByLabel('Description', { exact: true }).fill('streams the USB camera');
    await screenshot(page, 'flows-01-script-add');
    await expectAccessible(page, 'device script form');
    await form.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('row').filter({ hasText: 'webcam-streamer' });
    await row.waitFor();
    // The catalogue's own webcam entry is listed too: only the ones this test made count.
    const listed = async () =>
      ((await (await h.api('/api/device-scripts/?device_type=webcam')).json()) as { scripts: Array<Record<string, unknown>> }).scripts.filter(
        (s) => s.name === 'webcam-streamer',
      );
    const [added] = await listed();
    expect(added).toMatchObject({ name: 'webcam-streamer', script_filename: 'webcam.py', remote_dir: '/opt/scripts/webcam', port: 8080, version: '1.0.0', description: 'streams the USB camera' });

    // Edit: the form comes filled with the entry; the change is saved with PUT.
    await row.getByRole('button', { name: /Edit/ }).click();
    const edit = page.getByRole('form', { name: 'Edit webcam-streamer' });
    expect(await edit.getByLabel('Port', { exact: true }).inputValue()).toBe('8080');
    await edit.getByLabel('Port', { exact: true }).fill('8081');
    await edit.getByLabel(/Version/).fill('1.1.0');
    await screenshot(page, 'flows-02-script-edit');
    await edit.getByRole('button', { name: 'Save' }).click();
    await row.getByRole('cell', { name: '1.1.0', exact: true }).waitFor();
    const [edited] = await listed();
    expect(edited).toMatchObject({ id: added!.id, port: 8081, version: '1.1.0', name: 'webcam-streamer' });

    // The server's refusal reaches the person in words: a version the catalogue refuses.
    await row.getByRole('button', { name: /Edit/ }).click();
    const again = page.getByRole('form', { name: 'Edit webcam-streamer' });
    await again.getByLabel(/Version/).evaluate((el) => el.removeAttribute('pattern'));
    await again.getByLabel(/Version/).fill('1.2');
    await again.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => again.getByRole('alert').textContent()).toMatch(/version/i);
    await screenshot(page, 'flows-03-script-edit-refused');
    await again.getByRole('button', { name: 'Cancel' }).click();
    expect((await listed())[0]).toMatchObject({ version: '1.1.0' });

    await row.getByRole('button', { name: /Delete/ }).click();
    await row.getByRole('alertdialog').getByRole('button', { name: 'Yes, delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await listed()).toEqual([]);
  });

  it('installs a PAC archive on the board with upload progress, and the board then lists it', async () => {
    // 12 MiB of bitstream, uploaded at 4 MiB/s (Chromium's network emulation), so the
    // progress is there to see for a few seconds.
    const archive = await tarArchive(realPacEntries('lab_pac', 'zcu104-lab-cfg1', { bitstream: randomBytes(12 * 1024 * 1024).toString('base64').slice(0, 12 * 1024 * 1024) }));
    const file = path.join(tmp, 'lab_pac.tar');
    await fs.writeFile(file, archive);
    await page.goto(`/boards/${h.board.id}`);
    await page.getByRole('button', { name: /^Activate / }).first().waitFor({ timeout: 30_000 });
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4 * 1024 * 1024 });
    try {
      const install = page.getByRole('form', { name: 'Install a PAC' });
      await install.getByLabel(/Archive/).setInputFiles(file);
      await install.getByRole('button', { name: 'Install' }).click();
      const bar = install.getByRole('progressbar', { name: 'PAC upload progress' });
      await bar.waitFor();
      await expect.poll(async () => Number(await bar.getAttribute('value'))).toBeGreaterThan(0);
      const midway = Number(await bar.getAttribute('value'));
      expect(midway).toBeLessThan(archive.length);
      expect(await install.textContent()).toMatch(/\d+(\.\d)? [KM]B of 12 MB/);
      await screenshot(page, 'flows-04-pac-installing');
      await install.getByText('Installed lab_pac.').waitFor({ timeout: 60_000 });
    } finally {
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await cdp.detach();
    }
    await page.getByRole('button', { name: 'Activate zcu104-lab-cfg1' }).waitFor();
    await screenshot(page, 'flows-05-pac-installed');
    await expectAccessible(page, 'board after PAC install');
    const q = (await (await h.api('/api/pacs/query/', { method: 'POST', json: { board_id: h.board.id } })).json()) as { pacs: Array<{ name: string }> };
    expect(q.pacs.map((p) => p.name)).toContain('zcu104-lab-cfg1');
  }, 120_000);

  it('cancels a running operation: found through the list filters, cancelled from its page', async () => {
    const id = await invocationWith('long-run', { duration_s: 300 });
    const started = await h.api(`/api/invocations/${id}/execute/`, { method: 'POST', headers: { prefer: 'respond-async' } });
    expect(started.status).toBe(202);
    const op = (await started.json()) as { id: number };
    await eventually(async () => expect(((await (await h.api(`/api/operations/${op.id}/`)).json()) as { status: string }).status).toBe('running'), 60_000);

    await page.goto('/operations');
    await page.getByLabel('Status').selectOption('running');
    await page.waitForURL(/status=running/);
    const link = page.getByRole('link', { name: `#${op.id}`, exact: true });
    await link.waitFor();
    expect(await page.getByRole('link', { name: /^#\d+$/ }).count()).toBeGreaterThanOrEqual(1);
    await screenshot(page, 'flows-06-operations-running');
    await expectAccessible(page, 'operations filtered');
    await link.click();
    await page.getByRole('heading', { name: `Operation #${op.id} execute` }).waitFor();
    await page.getByTestId('live-log').getByText(/simulated runner/).waitFor({ timeout: 30_000 });
    await screenshot(page, 'flows-07-operation-running');
    await page.getByRole('button', { name: 'Cancel operation' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, cancel it' }).click();
    await page.getByText('cancelled', { exact: true }).first().waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Cancel operation' }).waitFor({ state: 'detached' });
    await screenshot(page, 'flows-08-operation-cancelled');
    await expectAccessible(page, 'operation cancelled');
    await eventually(async () => expect(((await (await h.api(`/api/operations/${op.id}/`)).json()) as { status: string }).status).toBe('cancelled'), 60_000);
  }, 120_000);

  it('a lost connection stops the motor: the pad renews its hold while held, and the script stops it when nothing more arrives', async () => {
    const events: SseBlock[] = [];
    const abort = new AbortController();
    // The relayed stream, read from here (the browser's own feed goes offline with it).
    const res = await fetch(`${base}/api/device-scripts/${h.gpioScriptId}/stream/`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    void (async () => {
      let buf = '';
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body!) {
          const taken = takeSseBlocks(buf + decoder.decode(chunk as Uint8Array, { stream: true }));
          buf = taken.rest;
          events.push(...taken.blocks.filter((b) => b.event === 'state'));
        }
      } catch {
        /* aborted at the end */
      }
    })();
    const state = async () => ((await (await h.api(`/api/device-scripts/${h.gpioScriptId}/proxy/state`)).json()) as { motion: string });
    const causes = () => events.map((e) => (JSON.parse(e.data!) as { cause: string; motion: string })).map((d) => `${d.cause}:${d.motion}`);
    try {
      await page.goto(`/device-scripts/${h.gpioScriptId}`);
      await page.getByText('Live feed: connected').waitFor({ timeout: 30_000 });
      await page.getByTestId('drive-forward').hover();
      await page.mouse.down();
      await expect.poll(state).toMatchObject({ motion: 'forward' });
      // Held for well over two holds (HOLD_MS = 1000): the renewals keep it driving.
      await page.waitForTimeout(2500);
      expect(await state()).toMatchObject({ motion: 'forward' });
      expect(causes().filter((c) => c.startsWith('timeout'))).toEqual([]);

      // The connection goes (the pad's own stop cannot get out): the script's hold stops the motor.
      const lostAt = Date.now();
      await context.setOffline(true);
      await expect.poll(() => causes(), { timeout: 10_000 }).toContain('timeout:stop');
      report.motor_stopped_after_connection_lost_ms = Date.now() - lostAt;
      expect(await state()).toMatchObject({ motion: 'stop' });
      await page.getByText('The browser went offline: the motor was stopped.').waitFor();
      await screenshot(page, 'flows-09-motor-connection-lost');
      await expectAccessible(page, 'motor stopped after the connection went');
    } finally {
      await context.setOffline(false);
      await page.mouse.up();
      abort.abort();
    }
  }, 60_000);

  // Videos, ZIPs and logs are plain GETs (a <video> source, links): they carry the session
  // cookie only, never an Authorization header, so a token sign-in must yield a session too.
  it.each(['a password', 'a personal token'] as const)('a viewer signed in with %s (cookie only, auth on) plays the video and downloads the ZIP and the log', async (how) => {
    const id = await invocationWith(`for-the-viewer-${how === 'a password' ? 'pw' : 'token'}`, { duration_s: 0 });
    const ran = await h.api(`/api/invocations/${id}/execute/`, { method: 'POST' });
    expect(ran.status, await ran.clone().text()).toBe(200);
    const op = (await ran.json()) as { id: number };

    const ctx = await h.browser.newContext({ baseURL: base, acceptDownloads: true });
    const p = await ctx.newPage();
    const media: Array<{ url: string; authorization: string | undefined; cookie: string | undefined; status: number | undefined }> = [];
    const seen = async (answer: Response) => {
      const r = answer.request();
      if (!/\/(video|download|log)\/$/.test(new URL(r.url()).pathname)) return;
      const headers = await r.allHeaders();
      media.push({ url: new URL(r.url()).pathname, authorization: headers.authorization, cookie: headers.cookie, status: answer.status() });
    };
    p.on('response', (r) => void seen(r));
    try {
      if (how === 'a password') await signIn(p, base, h.users.viewer.username, h.users.viewer.password);
      else await signInWithToken(p, base, await personalToken(base, h.users.viewer));
      await p.goto(`/invocations/${id}`);
      const video = p.getByTestId('output-video');
      await video.waitFor({ timeout: 30_000 });
      const played = await video.evaluate(async (el) => {
        const v = el as unknown as VideoElement;
        v.muted = true;
        await v.play();
        const start = v.currentTime;
        await new Promise((r) => setTimeout(r, 1500));
        return { start, after: v.currentTime };
      });
      expect(played.after).toBeGreaterThan(0.3);
      await screenshot(p, how === 'a password' ? 'flows-10-viewer-video' : 'flows-10-viewer-video-token');
      await expectAccessible(p, 'invocation seen by a viewer');

      const [zip] = await Promise.all([p.waitForEvent('download'), p.getByRole('link', { name: 'Download ZIP' }).click()]);
      const zipFile = path.join(tmp, 'viewer.zip');
      await zip.saveAs(zipFile);
      expect((await fs.readFile(zipFile)).subarray(0, 2).toString('latin1')).toBe('PK');

      await p.goto(`/operations/${op.id}`);
      const [log] = await Promise.all([p.waitForEvent('download'), p.getByRole('link', { name: 'Download the whole log' }).click()]);
      const logFile = path.join(tmp, 'viewer.log');
      await log.saveAs(logFile);
      expect(await fs.readFile(logFile, 'utf8')).toContain('simulated runner: invocation');

      // The downloads above could only be saved if they were answered (a refusal is a problem
      // page, not a download); what the page fetched went with the session cookie and no
      // Authorization header.
      await expect.poll(() => media.map((m) => m.url.split('/').at(-2))).toContain('video');
      // The token never stays in the page: nothing in its storage holds it.
      if (how === 'a personal token') expect(await p.evaluate(() => JSON.stringify({ ...(globalThis as unknown as { sessionStorage: object }).sessionStorage }))).not.toContain('mmu_');
      for (const m of media) {
        expect(m.authorization, m.url).toBeUndefined();
        expect(m.cookie, m.url).toMatch(/mm_session=/);
        expect([200, 206], `${m.url} answered ${m.status}`).toContain(m.status);
      }
    } finally {
      await ctx.close();
    }
  }, 120_000);

  it('registers a board: the token and the exact install command are shown once, and the token connects', async () => {
    await page.goto('/boards');
    await page.getByRole('button', { name: 'Register a board' }).click();
    await page.getByLabel('Board name').fill('bench-board');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByText('Copy the token now: it is shown this once.').waitFor();
    const token = await page.getByTestId('board-token').inputValue();
    const command = await page.getByTestId('install-command').inputValue();
    expect(command).toBe(`curl -fsSL ${base}/api/downloads/install-agent.sh | sudo sh -s -- --server-url ${base} --token ${token}`);
    await screenshot(page, 'flows-11-board-registered');
    await expectAccessible(page, 'board registered');
    const { boards } = (await (await h.api('/api/boards/')).json()) as { boards: Array<{ id: string; name: string; token?: string }> };
    const board = boards.find((b) => b.name === 'bench-board');
    expect(board).toBeDefined();
    expect(board).not.toHaveProperty('token');

    // The token is a working board token: the agent link accepts it (and refuses a wrong one).
    const upgrade = (t: string) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/api/agent/connect/`, { headers: { authorization: `Bearer ${t}` } });
        ws.once('upgrade', (r) => {
          resolve(r.statusCode ?? 0);
          ws.terminate();
        });
        ws.once('unexpected-response', (_req, r) => {
          resolve(r.statusCode ?? 0);
          ws.terminate();
        });
        ws.once('error', reject);
      });
    expect(await upgrade(token)).toBe(101);
    expect(await upgrade(`${token}x`)).toBe(401);

    // Done: the token leaves the page, and nothing shows it again.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('board-token').waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(token);
    await page.goto(`/boards/${board!.id}`);
    await page.getByRole('heading', { name: 'bench-board' }).waitFor();
    expect(await page.content()).not.toContain(token);
    await screenshot(page, 'flows-12-board-page');
    await expectAccessible(page, 'registered board page');
    expect((await h.api(`/api/boards/${board!.id}/`, { method: 'DELETE' })).status).toBe(204);
  });

});
