import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/processes.ts';
import { createInvocation, expectAccessible, screenshot, SHOTS_DIR, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

/**
 * The board page in Chromium: the latest telemetry of the simulated board (a short
 * MM_TELEMETRY_INTERVAL_S), uPlot plots over six hours of samples put straight into the
 * database (PostgreSQL only: the embedded one is the server's alone), and its recent operations.
 */
const HOURS = 6;
/** Where people look at the screenshots besides the test output folder (MM_SHOTS_DIR). */
const EXTRA_SHOTS = process.env.MM_SHOTS_DIR;

describe.skipIf(skipWithoutChromium('the board page with telemetry in Chromium'))('the dashboard in Chromium: the board page with telemetry', () => {
  let h: Harness;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    h = await startHarness({ agentEnv: { MM_TELEMETRY_INTERVAL_S: '1' } });
    base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.viewer.username, h.users.viewer.password);
  }, 180_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it.skipIf(skipWithoutRealDatabase('the board page’s 24 h plots over samples seeded into PostgreSQL'))('shows the latest reading, 24 h plots (temperatures per sensor, power, memory, load) and recent operations', async () => {
    // One sample a minute over the last hours (not the last two minutes, which the agent fills):
    // idle near 48/52 °C and 6.5 W, with a run every hour that warms the board up.
    const sql = postgres(h.cluster.databaseUrl!, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO board_telemetry (board_id, minute, sample)
        SELECT ${h.board.id}::uuid, m, jsonb_build_object(
          'at', to_char(m AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'temperatures_c', jsonb_build_object(
            'ams.ps_temp', round((47 + 1.2 * sin(i / 9.0) + CASE WHEN i % 60 < 12 THEN 16 * sin(pi() * (i % 60) / 12.0) ELSE 0 END)::numeric, 2),
            'ams.pl_temp', round((51 + 1.5 * sin(i / 7.0) + CASE WHEN i % 60 < 12 THEN 22 * sin(pi() * (i % 60) / 12.0) ELSE 0 END)::numeric, 2)),
          'power_w', round((6.4 + 0.2 * sin(i / 5.0) + CASE WHEN i % 60 < 12 THEN 4.8 ELSE 0 END)::numeric, 2),
          'memory_used_bytes', (700000000 + 50000000 * sin(i / 30.0) + CASE WHEN i % 60 < 12 THEN 300000000 ELSE 0 END)::bigint,
          'load_1m', round((0.3 + 0.1 * sin(i / 3.0) + CASE WHEN i % 60 < 12 THEN 1.8 ELSE 0 END)::numeric, 2),
          'disk_free_bytes', 21000000000::bigint)
        FROM generate_series(3, ${HOURS * 60}) AS i,
             LATERAL (SELECT date_trunc('minute', now()) - i * interval '1 minute' AS m) AS t
        ON CONFLICT DO NOTHING`;
    } finally {
      await sql.end();
    }
    const inv = await createInvocation(h, 'telemetry-page-run', { duration_s: 1 });
    const ran = await h.api(`/api/invocations/${inv}/execute/`, { method: 'POST' });
    expect(ran.status).toBe(200);
    await eventually(async () => expect(((await (await h.api(`/api/boards/${h.board.id}/`)).json()) as { telemetry: unknown }).telemetry).not.toBeNull(), 30_000);

    await page.goto(`${base}/boards/${h.board.id}`);
    await page.getByRole('heading', { name: 'Telemetry', level: 2 }).waitFor();
    const latest = page.getByTestId('latest-telemetry');
    await latest.waitFor();
    expect(await latest.textContent()).toMatch(/ams\.ps_temp \d+\.\d °C/);
    expect(await latest.textContent()).toMatch(/\d+\.\d\d W/);
    // The plots chunk loads on its own; one canvas per plot.
    await page.getByTestId('telemetry-plots').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('[data-testid="telemetry-plots"] canvas').count()).toBe(4);
    const plots = page.getByTestId('telemetry-plots');
    for (const title of ['Temperature (°C)', 'Power (W)', 'Memory used (GB)', 'Load (1 min)']) await plots.getByText(title, { exact: true }).waitFor();
    // Both sensors are series of the temperature plot.
    expect(await page.locator('.plot').first().textContent()).toContain('ams.pl_temp');
    await page.getByTestId('board-operations').getByRole('link', { name: /^#\d+$/ }).first().waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('board-operations').textContent()).toContain(`#${inv}`);
    await screenshot(page, 'board-telemetry');
    if (EXTRA_SHOTS) await fs.copyFile(path.join(SHOTS_DIR, 'board-telemetry.png'), path.join(EXTRA_SHOTS, 'board-telemetry.png'));
    await expectAccessible(page, 'board page');

    // The first page does not load uPlot: only the board page's telemetry section asks for it.
    const scripts = await page.evaluate(() =>
      (globalThis as unknown as { performance: { getEntriesByType(t: string): Array<{ name: string }> } }).performance.getEntriesByType('resource').map((r) => r.name),
    );
    expect(scripts.some((s) => /telemetry-plots-.*\.js$/.test(s))).toBe(true);

    // "Around a run": the plots zoom to the run's time, a minute either side.
    const op = (await ran.json()) as { id: number };
    let run = { started_at: '', finished_at: null as string | null };
    await eventually(async () => {
      run = (await (await h.api(`/api/operations/${op.id}/`)).json()) as typeof run;
      expect(run.finished_at).not.toBeNull();
    }, 60_000);
    await page.reload();
    const choose = page.getByTestId('telemetry-run');
    await expect.poll(() => choose.locator('option').count()).toBeGreaterThan(1);
    await choose.selectOption(String(op.id));
    const temps = page.getByTestId('telemetry-plot-temperature');
    const xs = async () => temps.evaluate((el) => [Number((el as unknown as { dataset: Record<string, string> }).dataset.xMin), Number((el as unknown as { dataset: Record<string, string> }).dataset.xMax)]);
    await expect.poll(xs).toEqual([Date.parse(run.started_at) / 1000 - 60, Date.parse(run.finished_at!) / 1000 + 60]);
    await page.getByRole('group', { name: 'Telemetry time range' }).getByRole('button', { name: 'Reset zoom' }).waitFor();
    await screenshot(page, 'board-telemetry-around-run');
  });

  it.skipIf(skipWithoutRealDatabase('the plots’ x range over samples seeded into PostgreSQL'))(
    'fits 15 minutes of samples to the plots, changes the range with its buttons, zooms with a mouse drag and shows real values in the legend',
    async () => {
      // A board of its own (no agent): 15 samples, one a minute up to this minute, 60 → 46 °C.
      const created = await h.api('/api/boards/', { method: 'POST', json: { name: 'fifteen-minutes' } });
      const board = (await created.json()) as { id: string };
      const sql = postgres(h.cluster.databaseUrl!, { max: 1, onnotice: () => {} });
      try {
        await sql`INSERT INTO board_telemetry (board_id, minute, sample)
          SELECT ${board.id}::uuid, m, jsonb_build_object(
            'at', to_char(m AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'temperatures_c', jsonb_build_object('ams.ps_temp', 60 - i, 'ams.pl_temp', 70 - i),
            'power_w', 6.5, 'memory_used_bytes', 700000000::bigint, 'load_1m', 0.5, 'disk_free_bytes', 21000000000::bigint)
          FROM generate_series(0, 14) AS i,
               LATERAL (SELECT date_trunc('minute', now()) - i * interval '1 minute' AS m) AS t`;
      } finally {
        await sql.end();
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${base}/boards/${board.id}`);
      const temps = page.getByTestId('telemetry-plot-temperature');
      await temps.locator('canvas').waitFor({ timeout: 30_000 });
      const plotIds = ['telemetry-plot-temperature', 'telemetry-plot-power', 'telemetry-plot-memory', 'telemetry-plot-load'];
      const xRange = async (id = 'telemetry-plot-temperature') => {
        const d = await page.getByTestId(id).evaluate((el) => ({ ...(el as unknown as { dataset: Record<string, string> }).dataset }));
        return { min: Number(d.xMin), max: Number(d.xMax), dataMin: Number(d.dataMin), dataMax: Number(d.dataMax) };
      };
      // One read of both ends: the window slides with each new sample, so two reads may straddle one.
      const span = async (id?: string) => {
        const r = await xRange(id);
        return Math.round(r.max - r.min);
      };
      const fraction = async () => {
        const r = await xRange();
        return (r.dataMax - r.dataMin) / (r.max - r.min);
      };
      // Fitted: the 14 minutes between the first and last samples span most of the width (the last hour made it 23 %).
      expect((await xRange()).dataMax - (await xRange()).dataMin).toBe(14 * 60);
      await expect.poll(fraction).toBeGreaterThan(0.9);
      const fit = page.getByRole('group', { name: 'Telemetry time range' });
      expect(await fit.getByRole('button', { name: 'Fit' }).getAttribute('aria-pressed')).toBe('true');

      // The legend rests on the latest sample (not "--"): its time and values.
      const legend = temps.locator('.u-legend');
      await expect.poll(() => legend.textContent()).toContain('60.0 °C');
      expect(await legend.textContent()).toContain('70.0 °C');
      expect(await legend.textContent()).not.toContain('--');
      expect(await legend.locator('.u-series').first().textContent()).toMatch(/Time.*\d{1,2}:\d{2}/);
      await screenshot(page, 'telemetry-fit');
      if (EXTRA_SHOTS) await fs.copyFile(path.join(SHOTS_DIR, 'telemetry-fit.png'), path.join(EXTRA_SHOTS, 'telemetry-fit.png'));

      // Hovering a point shows that sample's time and values.
      // In view first: the page's sections above the plots (power, incidents, terminal) may push them below the fold.
      const over = temps.locator('.u-over');
      await over.scrollIntoViewIfNeeded();
      let box = (await over.boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await expect.poll(() => legend.textContent()).not.toContain('60.0 °C');
      const hovered = (await legend.textContent())!;
      const ps = Number(/ams\.ps_temp\s*([\d.]+) °C/.exec(hovered)?.[1]);
      expect(ps).toBeGreaterThan(46);
      expect(ps).toBeLessThan(60);
      expect(hovered).toMatch(/Time.*\d{1,2}:\d{2}/);

      // The range buttons: the last hour, the last 24 h, and back to the data; all four plots follow.
      await fit.getByRole('button', { name: '24 h' }).click();
      await expect.poll(() => span()).toBe(24 * 3600);
      for (const id of plotIds) expect(await span(id)).toBe(24 * 3600);
      await fit.getByRole('button', { name: '1 h' }).click();
      await expect.poll(() => span()).toBe(3600);
      await fit.getByRole('button', { name: 'Fit' }).click();
      await expect.poll(fraction).toBeGreaterThan(0.9);
      const fitted = await xRange();

      // A drag across 30 % of the width zooms every plot to that stretch (where the plot is now).
      await over.scrollIntoViewIfNeeded();
      box = (await over.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.45, box.y + box.height / 2, { steps: 4 });
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 4 });
      await page.mouse.up();
      await fit.getByRole('button', { name: 'Reset zoom' }).waitFor();
      const zoomed = await xRange();
      const share = (zoomed.max - zoomed.min) / (fitted.max - fitted.min);
      expect(share).toBeGreaterThan(0.25);
      expect(share).toBeLessThan(0.35);
      expect(zoomed.min).toBeGreaterThan(fitted.min);
      for (const id of plotIds) expect(await xRange(id)).toMatchObject({ min: zoomed.min, max: zoomed.max });
      await screenshot(page, 'telemetry-zoomed');
      // A double-click goes back to the fitted range.
      await over.dblclick({ position: { x: box.width / 2, y: box.height / 2 } });
      await expect.poll(async () => (await xRange()).min).toBe(fitted.min);
      expect(await fit.getByRole('button', { name: 'Reset zoom' }).count()).toBe(0);
      await expectAccessible(page, 'board page with fitted plots');

      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
          await page.mouse.move(0, 0);
          await screenshot(page, `telemetry-range-${width}${scheme === 'dark' ? '-dark' : ''}`);
        }
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1280, height: 900 });
    },
  );

  it('says so when the board has sent no telemetry', async () => {
    const created = await h.api('/api/boards/', { method: 'POST', json: { name: 'quiet-board' } });
    const quiet = (await created.json()) as { id: string };
    await page.goto(`${base}/boards/${quiet.id}`);
    await page.getByText('No telemetry from this board yet', { exact: false }).waitFor();
    expect(await page.getByTestId('telemetry-plots').count()).toBe(0);
    await page.getByTestId('board-operations').getByText('No operations on this board yet.').waitFor();
    await screenshot(page, 'board-no-telemetry');
    if (EXTRA_SHOTS) await fs.copyFile(path.join(SHOTS_DIR, 'board-no-telemetry.png'), path.join(EXTRA_SHOTS, 'board-no-telemetry.png'));
  });
});
