import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/processes.ts';
import { CHROMIUM, createInvocation, expectAccessible, hasChromium, screenshot, SHOTS_DIR, signIn, startHarness, type Harness } from './browser-support.ts';

/**
 * The board page in Chromium: the latest telemetry of the simulated board (a short
 * MM_TELEMETRY_INTERVAL_S), uPlot plots over six hours of samples put straight into the
 * database (PostgreSQL only: the embedded one is the server's alone), and its recent operations.
 */
if (!hasChromium) console.warn(`board telemetry browser test skipped: no Chromium at ${CHROMIUM}`);

const HOURS = 6;
/** Where people look at the screenshots besides the test output folder (MM_SHOTS_DIR). */
const EXTRA_SHOTS = process.env.MM_SHOTS_DIR;

describe.skipIf(!hasChromium)('the dashboard in Chromium: the board page with telemetry', () => {
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

  it.skipIf(!process.env.DATABASE_URL)('shows the latest reading, 24 h plots (temperatures per sensor, power, memory, load) and recent operations', async () => {
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
  });

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
