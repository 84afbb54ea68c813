import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { createInvocation, expectAccessible, SHOTS_DIR, signIn, startHarness, type Harness, skipWithoutChromium } from './browser-support.ts';

const BOARDS = 1000;
/** Ten label combinations across the fleet, as the scheduler's benchmark uses. */
const COMBOS = Array.from({ length: 10 }, (_, i) => ({
  'board-model': i % 2 ? 'zcu104' : 'kv260',
  camera: i % 3 === 0 ? 'yes' : 'no',
  site: `lab-${(i % 5) + 1}`,
}));
const shotsDir = process.env.MM_SHOTS_DIR ?? SHOTS_DIR;

/** The page's globals the in-page callbacks use (the test project has Node's types, not the DOM's). */
interface PageGlobals {
  document: { getElementsByTagName(tag: string): { length: number } };
  requestAnimationFrame(cb: (t: number) => void): number;
  scrollTo(x: number, y: number): void;
  innerHeight: number;
  __frames?: number[];
  __framesOn?: boolean;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await fs.mkdir(shotsDir, { recursive: true });
  await page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage });
}

/** The seeded boards' number (`fleet-0042` → 42) in SQL. */
const NUM = `substring(name from '[0-9]+$')::int`;

/**
 * A new telemetry sample for every seeded board, straight into `boards.telemetry` as the agents'
 * samples land there (temperatures move from tick to tick).
 */
async function telemetryTick(sql: postgres.Sql, tick: number): Promise<void> {
  await sql.unsafe(`UPDATE boards SET telemetry = jsonb_build_object(
      'at', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'temperatures_c', jsonb_build_object('ps', round((40 + ${NUM} % 20 + 6 * sin((${tick} + ${NUM}) / 2.0))::numeric, 1), 'pl', 38 + ${NUM} % 15),
      'memory_used_bytes', 1000000000, 'load_1m', 0.5, 'disk_free_bytes', 5000000000)
    WHERE name LIKE 'fleet-%'`);
}

describe.skipIf(skipWithoutChromium('the fleet pages at 1,000 boards in Chromium') || skipWithoutRealDatabase('the fleet pages at 1,000 boards seeded into PostgreSQL'))('the fleet pages in Chromium: 1,000 boards, selector runs, readable results', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let sql: postgres.Sql;
  const report: Record<string, unknown> = {};
  const seeded: Array<{ id: string; name: string }> = [];
  let boardListAnswers = 0;

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    // The harness runs on the real PostgreSQL whenever one is configured, which the skip above asks for.
    sql = postgres(h.cluster.databaseUrl!, { max: 2, onnotice: () => {} });
    // 999 more boards (the harness's simulated one is the 1,000th), seen a while ago, labelled.
    const rows = Array.from({ length: BOARDS - 1 }, (_, i) => ({
      name: `fleet-${String(i + 1).padStart(4, '0')}`,
      token_hash: createHash('sha256').update(randomBytes(16)).digest('hex'),
      labels: sql.json(COMBOS[i % COMBOS.length]!),
      hostname: `fleet-host-${i + 1}`,
      platform: 'linux-arm64',
      agent_version: '0.1.0',
      last_seen_at: new Date(Date.now() - (i % 60) * 60_000),
      connected_at: new Date(Date.now() - 86_400_000),
    }));
    const inserted = await sql<Array<{ id: string; name: string }>>`INSERT INTO boards ${sql(rows)} RETURNING id, name`;
    seeded.push(...inserted.sort((a, b) => a.name.localeCompare(b.name)));
    // Health as health checks leave it: two in 50 bad (with a reason), every third unknown; every 100th in maintenance.
    await sql.unsafe(`UPDATE boards SET
        health = CASE WHEN ${NUM} % 50 IN (7, 18) THEN 'bad' WHEN ${NUM} % 3 = 0 THEN 'unknown' ELSE 'good' END,
        health_reason = CASE WHEN ${NUM} % 50 IN (7, 18) THEN 'fps 12.5 below the minimum 25 (check "smoke")' END,
        health_checked_at = CASE WHEN ${NUM} % 3 <> 0 OR ${NUM} % 50 IN (7, 18) THEN now() - interval '5 minutes' END,
        maintenance = (${NUM} % 100 = 42)
      WHERE name LIKE 'fleet-%'`);
    await telemetryTick(sql, 0);
    // The last hour of the first 40 boards' telemetry, one sample a minute, for their sparklines.
    await sql.unsafe(`INSERT INTO board_telemetry (board_id, minute, sample)
      SELECT b.id, date_trunc('minute', now()) - make_interval(mins => m),
        jsonb_build_object('at', to_char((date_trunc('minute', now()) - make_interval(mins => m)) at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'temperatures_c', jsonb_build_object('ps', round((42 + 5 * sin((m + ${NUM}) / 4.0))::numeric, 1)),
          'memory_used_bytes', 1000000000, 'load_1m', 0.5, 'disk_free_bytes', 5000000000)
      FROM boards b, generate_series(1, 50) m WHERE b.name LIKE 'fleet-%' AND ${NUM.replace('name', 'b.name')} <= 40`);
    // The simulated board's people's labels through the real PATCH (its agent's mm/ labels stay).
    const labelled = await h.api(`/api/boards/${h.board.id}/`, { method: 'PATCH', json: { labels: { 'board-model': 'kv260', camera: 'yes', site: 'lab-1' } } });
    expect(labelled.status).toBe(200);
    context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('response', (r) => {
      if (r.request().method() === 'GET' && /\/api\/boards\/\?/.test(r.url())) boardListAnswers++;
    });
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 240_000);

  afterAll(async () => {
    console.log('fleet view measurements:', JSON.stringify(report));
    await context?.close().catch(() => undefined);
    await sql?.end();
    await h?.stop();
  }, 60_000);

  it('shows 1,000 boards at a glance, fast, and filters them by label, status and health from the URL', async () => {
    // Work on some of them: running (with progress) and queued, straight into the operations table.
    for (let i = 0; i < 6; i++)
      await sql`INSERT INTO operations (kind, status, board_id, started_at, progress)
        VALUES ('transfer', 'running', ${seeded[i]!.id}, now(), ${sql.json({ phase: 'pulling weights', bytes_done: (i + 1) * 10_000_000, bytes_total: 70_000_000 })})`;
    for (let i = 0; i < 3; i++) await sql`INSERT INTO operations (kind, status, board_id) VALUES ('execute', 'queued', ${seeded[0]!.id})`;

    // A row on screen a moment asks for its last hour of telemetry (its sparkline's history).
    const historyAnswer = page.waitForResponse((r) => /\/api\/boards\/[0-9a-f-]+\/telemetry\//.test(r.url()) && r.status() === 200, { timeout: 30_000 });
    const t0 = Date.now();
    await page.goto('/boards');
    await page.getByTestId('fleet-count').getByText(`${BOARDS} boards`).waitFor();
    await page.getByTestId('board-fleet-0001').waitFor();
    report.time_to_render_1000_ms = Date.now() - t0;
    const domRows = await page.locator('.virtual-list > li').count();
    report.rows_in_dom = domRows;
    expect(domRows).toBeLessThan(60); // virtualised: the window's rows, not 1,000
    await expect.poll(() => page.getByTestId('fleet-summary').textContent()).toContain('40 bad');
    expect(await page.getByTestId('fleet-summary').textContent()).toContain('10 in maintenance');
    const first = page.getByTestId('board-fleet-0001');
    expect(await first.getByRole('link', { name: /#\d+ transfer/ }).count()).toBe(1);
    expect(await first.getByText('3 queued').count()).toBe(1);
    expect(await first.getByRole('progressbar').count()).toBe(1);
    await page.getByTestId('board-fleet-0007').getByText(/fps 12.5 below/).first().waitFor();
    await first.locator('canvas.sparkline').waitFor();
    await historyAnswer;
    await page.waitForTimeout(300); // the rows redraw with their history
    await shot(page, 'fleet-01-boards-1000', false); // the window: the whole list is 64,000 px tall
    await expectAccessible(page, 'fleet view with 1,000 boards');

    // A sparkline is drawn in the scheme's accent: a switch to dark draws it again in dark's.
    const canvas = `document.querySelector('[data-testid="board-fleet-0001"] canvas.sparkline')`;
    const ink = () =>
      page.evaluate(`(() => {
        const c = ${canvas};
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200) return d[i] + ',' + d[i + 1] + ',' + d[i + 2];
        return null;
      })()`) as Promise<string | null>;
    const accent = () => page.evaluate(`getComputedStyle(${canvas}).color.replace(/^rgba?\\(|\\)$|\\s/g, '')`) as Promise<string>;
    // Within a few levels a channel: canvas pixels are stored premultiplied, so an edge pixel may round.
    const near = (a: string | null, b: string) => a !== null && a.split(',').every((v, i) => Math.abs(Number(v) - Number(b.split(',')[i])) <= 4);
    const lightAccent = await accent();
    expect(near(await ink(), lightAccent), `${await ink()} vs ${lightAccent}`).toBe(true);
    await page.emulateMedia({ colorScheme: 'dark' });
    const darkAccent = await accent();
    expect(near(lightAccent, darkAccent)).toBe(false);
    await expect.poll(async () => near(await ink(), darkAccent)).toBe(true);
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(async () => near(await ink(), lightAccent)).toBe(true);

    // Frame times in the page: first while telemetry updates arrive (a poll every 5 s) with the
    // page still, then while the list is scrolled end to end.
    const startFrames = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as PageGlobals;
        g.__frames = [];
        g.__framesOn = true;
        let last = 0;
        const tick = (t: number) => {
          if (last) g.__frames!.push(t - last);
          last = t;
          if (g.__framesOn) g.requestAnimationFrame(tick);
        };
        g.requestAnimationFrame(tick);
      });
    const stopFrames = (name: string) =>
      page
        .evaluate(() => {
          const g = globalThis as unknown as PageGlobals;
          g.__framesOn = false;
          return g.__frames ?? [];
        })
        .then((frames) => {
          report[`${name}_frames`] = frames.length;
          report[`${name}_frame_ms_p50`] = Math.round(percentile(frames, 50) * 10) / 10;
          report[`${name}_frame_ms_p95`] = Math.round(percentile(frames, 95) * 10) / 10;
          report[`${name}_frame_ms_max`] = Math.round(Math.max(...frames));
          report[`${name}_frames_over_50ms`] = frames.filter((f) => f > 50).length;
          return frames;
        });
    // New samples land every 2 s (as 1,000 agents' telemetry would); the page polls the list.
    await startFrames();
    const answersBefore = boardListAnswers;
    let tick = 1;
    const ticking = setInterval(() => void telemetryTick(sql, tick++).catch(() => undefined), 2000);
    try {
      await eventually(() => expect(boardListAnswers).toBeGreaterThanOrEqual(answersBefore + 2), 20_000);
      await page.waitForTimeout(500);
    } finally {
      clearInterval(ticking);
    }
    const frames = await stopFrames('polling');
    report.telemetry_updates_while_still = boardListAnswers - answersBefore;

    await startFrames();
    const height = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight);
    for (let y = 0; y <= height; y += 1200) {
      await page.evaluate((yy) => (globalThis as unknown as PageGlobals).scrollTo(0, yy), y);
      await page.waitForTimeout(100);
    }
    await page.getByTestId('board-sim-board').waitFor(); // 'sim-board' sorts last: the bottom was drawn
    await stopFrames('scrolling');
    report.dom_elements = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.getElementsByTagName('*').length);
    expect(frames.length).toBeGreaterThan(10);

    // Filters: health, then a label chip picked on a row, then status; all in the URL.
    await page.evaluate(() => (globalThis as unknown as PageGlobals).scrollTo(0, 0));
    await page.getByLabel('Health').selectOption('bad');
    await page.getByTestId('fleet-count').getByText(`40 of ${BOARDS} boards`).waitFor();
    expect(page.url()).toContain('health=bad');
    await page.getByTestId('board-fleet-0007').getByRole('button', { name: 'camera=yes' }).click();
    await page.getByTestId('fleet-count').getByText(/of 1000 boards/).waitFor();
    expect(decodeURIComponent(page.url())).toContain('label=camera=yes');
    const count = (await page.getByTestId('fleet-count').textContent()) ?? '';
    const shown = Number(/^(\d+) of/.exec(count)?.[1]);
    expect(shown).toBe(20); // boards 7, 57, …: camera=yes; boards 18, 68, …: camera=no
    for (const row of await page.locator('.fleet-row').all()) {
      expect(await row.getByText('camera=yes').count()).toBe(1);
      expect(await row.locator('.health-bad').count()).toBe(1);
    }
    await shot(page, 'fleet-02-filtered');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'fleet-02b-filtered-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 800 });
    await shot(page, 'fleet-02c-filtered-phone', false);
    expect(await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
      return d.scrollWidth <= d.clientWidth;
    })).toBe(true); // no sideways scroll of the page on a phone
    await page.setViewportSize({ width: 1280, height: 900 });
    // Opened from the URL alone: the same filters.
    await page.goto('/boards?status=maintenance');
    await page.getByTestId('fleet-count').getByText(`10 of ${BOARDS} boards`).waitFor();
    await page.goto('/boards?label=site%3Dlab-1&label=camera%3Dyes');
    await page.getByTestId('fleet-count').getByText(`101 of ${BOARDS} boards`).waitFor(); // combination 0, and sim-board
    expect(await page.getByLabel('Label filters').getByRole('button').count()).toBe(2);
    await page.getByLabel('Name').fill('sim');
    await page.getByTestId('fleet-count').getByText(`1 of ${BOARDS} boards`).waitFor();
    await page.getByTestId('board-sim-board').waitFor();
    expect(page.url()).toContain('q=sim');
    await page.getByLabel('Label filters').getByRole('button', { name: /site=lab-1/ }).click();
    expect(page.url()).not.toContain('site');
  }, 180_000);

  it('board page: the fleet panel edits labels and maintenance through PATCH', async () => {
    const patches: Array<Record<string, unknown>> = [];
    const onRequest = (r: { method(): string; url(): string; postDataJSON(): unknown }) => {
      if (r.method() === 'PATCH' && r.url().endsWith(`/api/boards/${h.board.id}/`)) patches.push(r.postDataJSON() as Record<string, unknown>);
    };
    page.on('request', onRequest);
    const boardNow = async () => (await (await h.api(`/api/boards/${h.board.id}/`)).json()) as { labels: Record<string, string>; maintenance: boolean };
    await page.goto(`/boards/${h.board.id}`);
    const panel = page.getByTestId('board-fleet-panel');
    await panel.waitFor();
    await panel.getByText('camera=yes').waitFor();
    await panel.getByRole('button', { name: 'Edit labels' }).click();
    await panel.getByRole('button', { name: 'Add a label' }).click();
    const keys = panel.getByLabel('Key');
    await keys.last().fill('Bad Key');
    await panel.getByLabel('Value').last().fill('x');
    await panel.getByRole('button', { name: 'Save labels' }).click();
    await panel.getByText(/Bad Key: a key is/).waitFor();
    expect(patches).toHaveLength(0); // refused before sending
    await keys.last().fill('rack');
    await panel.getByLabel('Value').last().fill('r7');
    await panel.getByRole('button', { name: 'Save labels' }).click();
    await panel.getByText('rack=r7').waitFor();
    expect(patches[0]).toEqual({ labels: { 'board-model': 'kv260', camera: 'yes', site: 'lab-1', rack: 'r7' } });
    // The agent's own labels stay, read-only, next to the people's.
    const labels = (await boardNow()).labels;
    expect(labels).toMatchObject({ rack: 'r7', camera: 'yes', site: 'lab-1', 'board-model': 'kv260' });
    const arch = labels['mm/arch'];
    expect(arch).toBeTruthy(); // from the agent's facts (Debian's name for its arch)
    await panel.getByText(`mm/arch=${arch}`).waitFor();
    await panel.getByRole('button', { name: 'Put in maintenance' }).click();
    await panel.getByTestId('board-maintenance').getByText('in maintenance').waitFor();
    expect(patches[1]).toEqual({ maintenance: true });
    expect((await boardNow()).maintenance).toBe(true);
    await shot(page, 'fleet-03-board-panel');
    await expectAccessible(page, 'board page with the fleet panel');
    // Back in service (the selector run below needs it).
    await panel.getByRole('button', { name: 'Return to service' }).click();
    await panel.getByTestId('board-maintenance').getByText('in service').waitFor();
    expect((await boardNow()).maintenance).toBe(false);
    page.off('request', onRequest);
  }, 60_000);

  it('invocation page: selector chips, the latest run (error and log tail), metric plots by board; invocations list: latest runs', async () => {
    const id = await createInvocation(h, 'yolo-fleet', { duration_s: 0.5, exit_code: 3 });
    // Earlier runs on several boards with metrics, as the per-run metrics work stores them.
    for (let i = 0; i < 12; i++) {
      const b = seeded[i % 3]!;
      await sql`INSERT INTO operations (kind, status, board_id, invocation_id, created_at, started_at, finished_at, result)
        VALUES ('execute', 'succeeded', ${b.id}, ${id}, now() - ${`${60 - i * 4} minutes`}::interval, now() - ${`${60 - i * 4} minutes`}::interval,
          now() - ${`${59 - i * 4} minutes`}::interval,
          ${sql.json({ exit_code: 0, duration_ms: 41_000, metrics: { fps: 30 + (i % 3) * 5 + i / 4, latency_ms: 33 - (i % 3) * 3, run_ms: 41_000 } })})`;
    }
    // Then a real failed run on the simulated board: the latest.
    const run = await h.api(`/api/invocations/${id}/execute/`, { method: 'POST', json: { board_id: h.board.id } });
    expect(run.status).toBe(502);

    // Invocations list: the latest run, CI-style.
    const listed = (await (await h.api('/api/invocations/?q=yolo-fleet')).json()) as { invocations: Array<{ latest_run: { status: string; board_id: string } | null }> };
    expect(listed.invocations[0]!.latest_run).toMatchObject({ status: 'failed', board_id: h.board.id });
    await page.goto('/invocations');
    const row = page.getByRole('row', { name: /yolo-fleet/ });
    await row.getByText('failed').waitFor();
    await row.getByText(/sim-board/).waitFor();
    await shot(page, 'fleet-04-invocations-latest-run');

    await page.goto(`/invocations/${id}`);
    const latest = page.getByTestId('latest-run');
    await latest.getByText('failed').first().waitFor();
    await latest.getByText(/simulated failure: exiting with status 3/).waitFor();
    await page.getByTestId('metric-plot-fps').locator('canvas').first().waitFor();
    await page.getByTestId('metric-plot-latency_ms').locator('canvas').first().waitFor();
    // One series per board in the legend: the three seeded ones.
    for (const b of seeded.slice(0, 3)) await page.getByTestId('metric-plot-fps').getByText(b.name).waitFor();
    // With the pointer elsewhere the legend gives each board its latest value (not "—" for all but one).
    await expect.poll(() => page.getByTestId('metric-plot-fps').locator('.u-legend').textContent()).toMatch(/^(?!.*—).*Run.*#\d+.*fps.*fps.*fps/);

    // Selector chips: pick labels, see how many boards match, priority; an unservable one blocks the run.
    await page.getByLabel('by labels').check();
    const label = page.getByLabel('Label', { exact: true });
    await label.fill('camera=yes');
    await page.getByRole('button', { name: 'Add label' }).click();
    await label.fill('board-model=kv260');
    await label.press('Enter');
    const chips = page.getByTestId('selector-chips');
    await chips.getByText('camera=yes').waitFor();
    await chips.getByText('board-model=kv260').waitFor();
    await page.getByTestId('selector-match').getByText(/\d+ boards match/).waitFor();
    await page.getByLabel('Priority').fill('50');
    await shot(page, 'fleet-05-invocation-selector');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.reload();
    await page.getByTestId('metric-plot-fps').locator('canvas').first().waitFor();
    await shot(page, 'fleet-05b-invocation-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.reload();
    await page.getByTestId('metric-plot-fps').locator('canvas').first().waitFor();
    await page.getByLabel('by labels').check();
    await label.fill('camera=yes');
    await label.press('Enter');
    await label.fill('board-model=kv260');
    await label.press('Enter');
    await page.getByLabel('Priority').fill('50');
    await expectAccessible(page, 'invocation page with selector chips and plots');
    await label.fill('site=mars');
    await label.press('Enter');
    await page.getByTestId('selector-match').getByText(/No registered board carries these labels/).waitFor();
    expect(await page.getByRole('button', { name: 'Execute' }).isDisabled()).toBe(true);
    await chips.getByRole('button', { name: /site=mars/ }).click();
    // The run asks for the selector and the priority; the scheduler gives it to the one online
    // matching board (the simulated one), which runs it (and fails: exit status 3).
    const [request] = await Promise.all([page.waitForRequest((r) => r.method() === 'POST' && r.url().includes(`/api/invocations/${id}/execute/`)), page.getByRole('button', { name: 'Execute' }).click()]);
    expect(request.postDataJSON()).toEqual({ board_selector: { camera: 'yes', 'board-model': 'kv260' }, priority: 50 });
    const started = (await (await request.response())!.json()) as { id: number; board_selector: Record<string, string> | null };
    expect(started.board_selector).toEqual({ camera: 'yes', 'board-model': 'kv260' });
    await eventually(async () => {
      const op = (await (await h.api(`/api/operations/${started.id}/`)).json()) as { status: string; board_id: string | null };
      expect(op).toMatchObject({ status: 'failed', board_id: h.board.id });
    }, 30_000);
  }, 120_000);

  it('operation page: the result as readable fields, step times, raw JSON on demand; the list shows boards and selectors', async () => {
    const id = await createInvocation(h, 'readable-result', { duration_s: 1 });
    const done = await h.api(`/api/invocations/${id}/execute/`, { method: 'POST', json: { board_id: h.board.id } });
    expect(done.status).toBe(200);
    const op = (await done.json()) as { id: number };
    await page.goto(`/operations/${op.id}`);
    const result = page.getByTestId('operation-result');
    await result.getByText('Exit status').waitFor();
    await result.getByRole('cell', { name: 'params.json' }).waitFor();
    await page.getByTestId('step-times').getByText('runner').waitFor();
    await page.getByTestId('operation-board').getByText('sim-board').waitFor();
    expect(await page.getByTestId('raw-result').count()).toBe(0);
    await shot(page, 'fleet-06-operation-result');
    await expectAccessible(page, 'operation page with a readable result');
    await page.getByRole('button', { name: /Show the raw result/ }).click();
    await page.getByTestId('raw-result').getByText('"exit_code": 0').waitFor();

    // Seeded metrics show as named values with units.
    const [withMetrics] = await sql<Array<{ id: number }>>`SELECT id FROM operations WHERE result ? 'metrics' ORDER BY id LIMIT 1`;
    await page.goto(`/operations/${withMetrics!.id}`);
    await page.getByTestId('result-metrics').getByText(/fps/).first().waitFor();
    await page.getByTestId('result-metrics').getByText(/\d ms$/).first().waitFor();

    // Selector work not yet assigned (only offline boards match it): the list says what it waits for.
    const queued = await h.api(`/api/invocations/${id}/execute/`, { method: 'POST', headers: { prefer: 'respond-async' }, json: { board_selector: { camera: 'yes', site: 'lab-2' }, priority: 10 } });
    expect(queued.status).toBe(202);
    const waiting = (await queued.json()) as { id: number; status: string; board_id: string | null };
    expect(waiting).toMatchObject({ status: 'queued', board_id: null });
    await page.goto('/operations');
    await page.getByTestId(`waiting-for-${waiting.id}`).getByText('camera=yes').waitFor();
    await page.getByTestId(`waiting-for-${waiting.id}`).getByText('priority 10').waitFor();
    await page.getByRole('row', { name: new RegExp(`#${op.id}`) }).getByRole('link', { name: 'sim-board' }).waitFor();
    await shot(page, 'fleet-07-operations-list');
    const cancelled = await h.api(`/api/operations/${waiting.id}/cancel/`, { method: 'POST' });
    expect(cancelled.ok).toBe(true);
  }, 120_000);
});
