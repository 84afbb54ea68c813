import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { eventually, startAgent, type AgentProcess } from '../../../test/support/processes.ts';
import { ADMIN_TOKEN, createInvocation, expectAccessible, SHOTS_DIR, signIn, skipWithoutChromium, startHarness, type Harness } from './browser-support.ts';

/**
 * Issue 39, findings 6, 14 and 18, in Chromium against the real control plane and two
 * simulated boards (one whose runner fails after a long while) plus one never connected:
 * the rollout page (failed step marked and explained, units, dark mode, the axis title
 * clear of its values) and `mm rollouts show`; the boards list (column names, label chips
 * never cut, the phone layout); a running run, the timeline, "Step times" once; the device
 * scripts (no failing stream request, paths on one line). Screenshots at 1280 px, 390 px
 * and in dark mode go to test-output/screenshots/issue-39/.
 */
const SHOTS = path.join(SHOTS_DIR, 'issue-39');
const failingRunner = fileURLToPath(new URL('./fixtures/failing-runner.mjs', import.meta.url));
/** The failing board's runner gives up after this long: longer than the good board's run, so it would be the tallest bar. */
const FAIL_AFTER_MS = 11_000;

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await fs.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

/** What the run_ms chart's canvas holds, read in the page (the test project has no DOM types: a string). */
interface ChartInk {
  /** Pixels under the plot (the board names) light enough to read on a dark background. */
  lightNames: number;
  /** Pixels under the plot dark enough to read on a light one. */
  darkNames: number;
  /** Left of the plot: the runs of columns with ink (the y axis title, then its values), in CSS px. */
  leftRuns: Array<[number, number]>;
}
const chartInk = (testId: string) => `(() => {
  const fig = document.querySelector('[data-testid="${testId}"]');
  const canvas = fig.querySelector('canvas');
  const over = fig.querySelector('.u-over');
  const ratio = canvas.width / canvas.getBoundingClientRect().width;
  const img = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  const at = (x, y) => { const i = (y * canvas.width + x) * 4; return img.data.slice(i, i + 4); };
  const left = Math.round(over.offsetLeft * ratio), top = Math.round(over.offsetTop * ratio), bottom = Math.round((over.offsetTop + over.offsetHeight) * ratio);
  let lightNames = 0, darkNames = 0;
  for (let y = bottom + Math.round(8 * ratio); y < canvas.height; y++)
    for (let x = left; x < canvas.width; x++) {
      const [r, g, b, a] = at(x, y);
      if (a < 160) continue;
      const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      if (lum > 150) lightNames++;
      else if (lum < 100) darkNames++;
    }
  const inked = [];
  for (let x = 0; x < left - Math.round(8 * ratio); x++) {
    let ink = false;
    for (let y = top; y < bottom && !ink; y++) ink = at(x, y)[3] > 60;
    inked.push(ink);
  }
  const leftRuns = [];
  inked.forEach((ink, x) => {
    if (!ink) return;
    const last = leftRuns[leftRuns.length - 1];
    if (last && last[1] >= x - 1) last[1] = x; else leftRuns.push([x, x]);
  });
  return { lightNames, darkNames, leftRuns: leftRuns.map(([a, b]) => [a / ratio, (b + 1) / ratio]) };
})()`;

/** Each element matching `selector` inside `row`, with its box and whether it is cut (its content wider than its box). */
const boxesIn = (testId: string, selector: string) => `(() => {
  const row = document.querySelector('[data-testid="${testId}"]');
  const r = row.getBoundingClientRect();
  return { row: { top: r.top, bottom: r.bottom, left: r.left, right: r.right }, items: [...row.querySelectorAll('${selector}')].map((el) => {
    const b = el.getBoundingClientRect();
    const clip = el.closest('.fleet-chips, .fleet-state, .fleet-row > div')?.getBoundingClientRect() ?? r;
    return { text: el.textContent, top: b.top, bottom: b.bottom, left: b.left, right: b.right, width: b.width, clipBottom: clip.bottom, clipRight: clip.right,
      shown: getComputedStyle(el).visibility !== 'hidden' && b.width > 0, cut: el.scrollWidth > el.clientWidth + 1 };
  }) };
})()`;
interface Boxes {
  row: { top: number; bottom: number; left: number; right: number };
  items: Array<{ text: string; top: number; bottom: number; left: number; right: number; width: number; clipBottom: number; clipRight: number; shown: boolean; cut: boolean }>;
}

describe.skipIf(skipWithoutChromium('issue 39’s rollout, boards and run pages in Chromium'))('the dashboard in Chromium: issue 39 pages (rollouts, boards list, runs, device scripts)', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let tmp: string;
  let failing: AgentProcess;
  let failingId: string;
  let rolloutId: number;
  let cli: CliHome;

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-39-'));
    // A second board whose runner fails after FAIL_AFTER_MS, and a third never connected.
    const made = (await (await h.api('/api/boards/', { method: 'POST', json: { name: 'sim-fail' } })).json()) as { id: string; token: string };
    failingId = made.id;
    failing = await startAgent({ serverUrl: base, token: made.token, agentDir: path.join(tmp, 'sim-fail'), env: { LOG_LEVEL: 'warn', MM_RUNNER: `${process.execPath} ${failingRunner} ${FAIL_AFTER_MS}` } });
    expect((await h.api('/api/boards/', { method: 'POST', json: { name: 'spare-board' } })).status).toBe(201);
    for (const id of [h.board.id, failingId]) expect((await h.api(`/api/boards/${id}/`, { method: 'PATCH', json: { labels: { group: 'r39' } } })).status).toBe(200);
    await eventually(async () => {
      const { boards } = (await (await h.api('/api/boards/')).json()) as { boards: Array<{ status: string }> };
      expect(boards.filter((b) => b.status === 'online')).toHaveLength(2);
    }, 60_000);
    cli = await cliHome();
    context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 240_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await failing?.stop();
    await h?.stop();
    await cli?.cleanup();
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('6: a rollout with a failed step gives its reason, marks it in the chart (no tallest bar), shows units, reads in dark mode', async () => {
    const inv = await createInvocation(h, 'long-run', { duration_s: 4 });
    const created = await h.api('/api/rollouts/', { method: 'POST', json: { kind: 'execute', invocation_id: inv, board_selector: { group: 'r39' } } });
    expect(created.status, await created.clone().text()).toBe(201);
    rolloutId = ((await created.json()) as { id: number }).id;
    await eventually(async () => {
      const r = (await (await h.api(`/api/rollouts/${rolloutId}/`)).json()) as { finished_at: string | null };
      expect(r.finished_at).not.toBeNull();
    }, 120_000);
    const r = (await (await h.api(`/api/rollouts/${rolloutId}/`)).json()) as { status: string; boards: Array<{ board_name: string; status: string; run_ms: number | null; error: { code: string; message: string } | null }> };
    const bad = r.boards.find((b) => b.board_name === 'sim-fail')!;
    const good = r.boards.find((b) => b.board_name === 'sim-board')!;
    expect(bad.status).toBe('failed');
    expect(good.status).toBe('succeeded');
    // Its time (until it failed) is longer than the good run's: it would be the tallest bar.
    expect(bad.run_ms).toBeGreaterThan(good.run_ms!);
    // The API says why the step failed (soft, as the checks below: each says its own finding).
    expect.soft(bad.error?.message, 'the failed step has its reason').toBeTruthy();
    expect.soft(good.error).toBeNull();

    await page.goto(`/rollouts/${rolloutId}`);
    const chart = page.getByTestId('chart-run_ms');
    await chart.locator('canvas').waitFor({ timeout: 20_000 });
    const rows = page.getByTestId('rollout-board');
    const badRow = rows.filter({ hasText: 'sim-fail' });
    expect.soft(await badRow.getByTestId('step-error').count(), 'the failed row gives its reason').toBe(1);
    if (bad.error) expect.soft(await badRow.textContent()).toContain(bad.error.message);
    expect.soft(await badRow.textContent()).toMatch(/failed after \d+\.\d\d s/);
    // Metric names for people, values with their units.
    const table = page.getByRole('region', { name: 'Boards of the rollout' });
    expect.soft(await table.getByRole('columnheader', { name: 'Frames per second' }).count()).toBe(1);
    expect.soft(await table.getByRole('columnheader', { name: 'Max temperature' }).count()).toBe(1);
    const goodRow = rows.filter({ hasText: 'sim-board' });
    expect.soft(await goodRow.textContent()).toMatch(/\d fps/);
    expect.soft(await goodRow.textContent()).toMatch(/\d °C/);

    // The run time chart: the failed step draws no bar, it is named as failed; the title has the unit.
    const said = (await chart.locator('[role="img"]').getAttribute('aria-label')) ?? '';
    expect.soft(said).toMatch(/^Run time \((s|ms)\) by board: /);
    expect.soft(said, 'the failed step is no bar').toMatch(/sim-fail failed after [\d.]+ s \(not drawn\)/);
    expect.soft(await chart.getByTestId('chart-failed').count(), 'the caption names the failed board').toBe(1);
    const light = (await page.evaluate(chartInk('chart-run_ms'))) as ChartInk;
    expect.soft(light.darkNames, 'board names drawn dark on the light page').toBeGreaterThan(20);
    // Left of the plot: the axis title (a narrow run of columns), a gap, then the values; never one run.
    console.log('run_ms chart, ink left of the plot (CSS px):', JSON.stringify(light.leftRuns));
    expect.soft(light.leftRuns.length, JSON.stringify(light.leftRuns)).toBeGreaterThanOrEqual(2);
    const [title, values] = light.leftRuns as [[number, number], [number, number] | undefined];
    expect.soft(title[1] - title[0], `the axis title alone: ${JSON.stringify(light.leftRuns)}`).toBeLessThan(20);
    // Clear space between them (uPlot's default width left 1 px: "10,000" touched "run_ms").
    expect.soft((values?.[0] ?? 0) - title[1], 'a gap between the axis title and its values').toBeGreaterThanOrEqual(3);
    await shot(page, 'rollout-failed-1280');
    await expectAccessible(page, 'rollout with a failed step');

    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await page.getByTestId('chart-run_ms').locator('canvas').waitFor({ timeout: 20_000 });
    const dark = (await page.evaluate(chartInk('chart-run_ms'))) as ChartInk;
    expect(dark.lightNames, 'board names drawn light on the dark page').toBeGreaterThan(20);
    expect(dark.darkNames, 'no board name drawn dark on the dark page').toBeLessThan(dark.lightNames / 4);
    await shot(page, 'rollout-failed-dark');
    await expectAccessible(page, 'rollout with a failed step, dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('chart-run_ms').locator('canvas').waitFor({ timeout: 20_000 });
    await shot(page, 'rollout-failed-390');
    await page.setViewportSize({ width: 1280, height: 900 });

    // The rollouts list counts in words ("1 rollout").
    await page.goto('/rollouts');
    await page.getByText('1 rollout', { exact: true }).waitFor();
  });

  it('6: mm rollouts show gives the failed row its reason, and the metrics with units', async () => {
    const r = await cli.run(['rollouts', 'show', String(rolloutId)], { MM_SERVER_URL: base, MM_API_TOKEN: ADMIN_TOKEN });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const head = lines.find((l) => l.startsWith('BOARD'))!;
    expect(head).toMatch(/BOARD\s+STATUS\s+TIME\s+.*FRAMES PER SECOND.*REASON/);
    const bad = lines.find((l) => l.startsWith('sim-fail'))!;
    expect(bad).toMatch(/^sim-fail\s+failed\s+failed after \d+\.\d\d s\s/);
    expect(bad).toMatch(/\(\w+\)$/); // the reason, with its code
    const good = lines.find((l) => l.startsWith('sim-board'))!;
    expect(good).toMatch(/^sim-board\s+succeeded\s+\d+\.\d\d s\s+.*\d fps.*\d °C/);
  });

  it('18: a running run reads "running for", run_ms in seconds, the timeline has times, "Step times" once, "1 operation"', async () => {
    const inv = await createInvocation(h, 'watch-it-run', { duration_s: 4 });
    const started = await h.api(`/api/invocations/${inv}/execute/`, { method: 'POST', headers: { prefer: 'respond-async' }, json: { board_id: h.board.id } });
    expect(started.status, await started.clone().text()).toBeLessThan(300);
    const op = (await started.json()) as { id: number };
    await page.goto(`/invocations/${inv}`);
    const latest = page.getByTestId('latest-run');
    await latest.getByText('running', { exact: true }).waitFor({ timeout: 60_000 });
    expect.soft(await latest.textContent(), 'a running run does not say "took"').not.toContain('took');
    expect.soft(await latest.textContent()).toMatch(/running for \d/);
    await shot(page, 'invocation-running-1280');
    // The invocations list says so too (its latest-run cell).
    await page.goto('/invocations');
    const listed = page.getByRole('row', { name: /watch-it-run/ });
    if ((await listed.getByText('running', { exact: true }).count()) === 1) expect.soft(await listed.textContent()).toMatch(/running for \d/);
    await page.goto(`/invocations/${inv}`);
    // Its end: "took", and run_ms as a run time in seconds.
    await latest.getByText('succeeded', { exact: true }).waitFor({ timeout: 60_000 });
    await page.reload();
    await page.getByTestId('latest-run').locator('.metric-list').waitFor();
    expect.soft(await page.getByTestId('latest-run').textContent()).toMatch(/took \d/);
    const runTime = page.getByTestId('latest-run').locator('.metric-list > div', { hasText: 'Run time' });
    expect.soft(await runTime.count(), 'run_ms reads "Run time"').toBe(1);
    if ((await runTime.count()) === 1) expect.soft(await runTime.locator('dd').textContent()).toMatch(/^\d+(\.\d+)? s$/);
    await shot(page, 'invocation-done-1280');

    await page.goto(`/operations/${op.id}`);
    // Every entry of the timeline has its time: the phases ("transfer", "run") too.
    const phases = page.getByRole('list', { name: 'Timeline' }).locator('li');
    await phases.filter({ hasText: /^run\b/ }).first().waitFor();
    for (const p of await phases.all()) expect.soft(await p.locator('time').count(), `the phase "${(await p.textContent()) ?? ''}" has its time`).toBe(1);
    expect.soft(await page.getByText('Step times', { exact: true }).count(), '"Step times" once').toBe(1);
    expect.soft(await page.getByRole('table', { name: 'Step times' }).count()).toBe(1);
    await shot(page, 'operation-1280');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'operation-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'operation-390');
    await page.goto(`/invocations/${inv}`);
    await page.getByTestId('latest-run').locator('.metric-list').waitFor();
    await shot(page, 'invocation-done-390');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/operations?invocation_id=${inv}`);
    await page.getByText(/^1 operations?$/).waitFor();
    expect(await page.getByText('1 operation', { exact: true }).count()).toBe(1);
  });

  it('14: the boards list names its columns, never cuts a label chip or its "+N", and keeps badges and labels at 390 px', async () => {
    // Many labels on the good board: more than its row's lines hold. The other in maintenance: three badges.
    const labels = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`rack-${i}`, `position-${String(i).padStart(4, '0')}`]));
    expect((await h.api(`/api/boards/${h.board.id}/`, { method: 'PATCH', json: { labels: { group: 'r39', ...labels } } })).status).toBe(200);
    expect((await h.api(`/api/boards/${failingId}/`, { method: 'PATCH', json: { maintenance: true } })).status).toBe(200);
    await page.goto('/boards');
    await page.getByTestId('board-sim-board').waitFor();
    await page.getByTestId('fleet-count').getByText('3 boards', { exact: false }).waitFor();
    const head = page.getByTestId('fleet-head');
    for (const name of ['Board', 'Status and health', 'Labels', 'Operation', 'Temperature']) expect.soft(await head.getByText(name, { exact: true }).count(), `the column "${name}" is named`).toBe(1);
    const more = page.getByTestId('board-sim-board').getByTestId('labels-more');
    const desk = (await page.evaluate(boxesIn('board-sim-board', '.chip, [data-testid="labels-more"]'))) as Boxes;
    const shownChips = desk.items.filter((i) => i.shown);
    expect(shownChips.length).toBeGreaterThan(3);
    for (const c of shownChips) {
      expect.soft(c.bottom, `${c.text} is not cut at the bottom`).toBeLessThanOrEqual(Math.min(c.clipBottom, desk.row.bottom) + 0.5);
      expect.soft(c.right, `${c.text} is not cut at the right`).toBeLessThanOrEqual(desk.row.right + 0.5);
    }
    // "+N" is there, and counts what is hidden: the labels not shown.
    expect.soft(await more.count(), '"+N" is shown').toBe(1);
    const hiddenCount = desk.items.filter((i) => !i.shown).length;
    if ((await more.count()) === 1) expect.soft(await more.textContent()).toMatch(new RegExp(`^\\+${hiddenCount}\\b`));
    // A board without health checks says "unknown", in words.
    const unknown = page.getByTestId('board-spare-board').locator('.health-unknown');
    expect(await unknown.textContent()).toBe('unknown');
    await shot(page, 'boards-1280');
    await expectAccessible(page, 'boards list');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'boards-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('board-sim-board').waitFor();
    for (const name of ['sim-board', 'sim-fail', 'spare-board']) {
      const row = page.getByTestId(`board-${name}`);
      // Labels are shown on a phone too.
      expect.soft(await row.locator('.fleet-labels').isVisible(), `labels of ${name} shown at 390 px`).toBe(true);
      const phone = (await page.evaluate(boxesIn(`board-${name}`, '.fleet-state .badge, .fleet-temp, .fleet-op, .chip'))) as Boxes;
      for (const b of phone.items.filter((i) => i.shown)) {
        expect.soft(b.cut, `${name}: "${b.text}" is not cut inside`).toBe(false);
        expect.soft(b.bottom, `${name}: "${b.text}" is inside its row`).toBeLessThanOrEqual(Math.min(b.clipBottom, phone.row.bottom) + 0.5);
        expect.soft(b.right, `${name}: "${b.text}" is inside its row`).toBeLessThanOrEqual(Math.min(b.clipRight, phone.row.right) + 0.5);
        expect.soft(b.left, `${name}: "${b.text}" is inside its row`).toBeGreaterThanOrEqual(phone.row.left - 0.5);
      }
      const badges = phone.items.filter((i) => i.shown && /^(online|offline|not connected yet|unknown|good|bad|maintenance)$/.test(i.text));
      expect.soft(badges.length, `${name}: its status and health badges are shown`).toBeGreaterThanOrEqual(name === 'sim-fail' ? 3 : 2);
    }
    await shot(page, 'boards-390');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'boards-390-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('18: a device script page opens no failing stream; the scripts list keeps each path on one line', async () => {
    // Three boards and none chosen: there is nothing to stream yet. A stream opened before the
    // boards were known went without a board, and was refused or dropped (a failed request).
    const streams: string[] = [];
    const onRequest = (req: { url(): string }) => {
      if (req.url().includes('/stream/')) streams.push(req.url());
    };
    page.on('request', onRequest);
    await page.goto(`/device-scripts/${h.gpioScriptId}`);
    await page.getByLabel(/board/i).first().waitFor();
    await page.getByText('Live feed: not connected').waitFor();
    await page.waitForLoadState('networkidle');
    page.off('request', onRequest);
    expect.soft(streams, 'no stream request before a board is chosen').toEqual([]);
    await shot(page, 'device-script-1280');

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      await page.goto('/device-scripts');
      const code = page.getByRole('region', { name: 'Device scripts' }).locator('tbody tr').first().locator('td').nth(3).locator('code');
      await code.waitFor();
      // One line of 0.85rem text is about 18 px high; two would be 36.
      const box = (await code.boundingBox())!;
      expect.soft(box.height, `the path at ${width} px is one line`).toBeLessThan(28);
      await shot(page, `device-scripts-${width}`);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'device-scripts-390-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
