import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page, Route } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually.ts';
import { CHROMIUM, createInvocation, expectAccessible, hasChromium, SHOTS_DIR, signIn, startHarness, type Harness } from './browser-support.ts';

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

/**
 * The fields of the contract's fleet section that other work adds to the server (health,
 * maintenance, telemetry): this test stands them in on the board list's answers, so the view is
 * driven deterministically. Two in 50 boards are bad (with a reason), every 100th in maintenance,
 * and each answer carries a new telemetry sample (temperatures move), as live updates would.
 */
let telemetryTick = 0;
async function withFleetFields(route: Route): Promise<void> {
  const res = await route.fetch();
  const body = (await res.json()) as { boards: Array<Record<string, unknown> & { name: string }> };
  telemetryTick++;
  const at = new Date(Date.UTC(2026, 10, 27, 4, 0, telemetryTick)).toISOString();
  for (const b of body.boards) {
    const n = Number(/(\d+)$/.exec(b.name)?.[1] ?? 0);
    b.health = n % 50 === 7 || n % 50 === 18 ? 'bad' : n % 3 === 0 ? 'unknown' : 'good';
    b.health_reason = b.health === 'bad' ? `fps 12.5 below the minimum 25 (check "smoke")` : null;
    b.maintenance = n % 100 === 42;
    b.telemetry = { at, temperatures_c: { ps: 40 + (n % 20) + 6 * Math.sin((telemetryTick + n) / 2), pl: 38 + (n % 15) }, memory_used_bytes: 1e9, load_1m: 0.5, disk_free_bytes: 5e9 };
  }
  await route.fulfill({ response: res, json: body });
}

if (!hasChromium) console.warn(`dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set MM_CHROMIUM)`);

describe.skipIf(!hasChromium)('the fleet pages in Chromium: 1,000 boards, selector runs, readable results', () => {
  let h: Harness;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let sql: postgres.Sql;
  const report: Record<string, unknown> = {};
  const seeded: Array<{ id: string; name: string }> = [];

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    if (!h.cluster.databaseUrl) throw new Error('this test seeds 1,000 boards straight into PostgreSQL: set DATABASE_URL');
    sql = postgres(h.cluster.databaseUrl, { max: 2, onnotice: () => {} });
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
    await sql`UPDATE boards SET labels = ${sql.json({ 'board-model': 'kv260', camera: 'yes', site: 'lab-1' })} WHERE id = ${h.board.id}`;
    context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    await context.route(/\/api\/boards\/\?/, withFleetFields);
    page = await context.newPage();
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
    await shot(page, 'fleet-01-boards-1000', false); // the window: the whole list is 64,000 px tall
    await expectAccessible(page, 'fleet view with 1,000 boards');

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
    await startFrames();
    const ticksBefore = telemetryTick;
    await eventually(() => expect(telemetryTick).toBeGreaterThanOrEqual(ticksBefore + 2), 20_000);
    await page.waitForTimeout(500);
    const frames = await stopFrames('polling');
    report.telemetry_updates_while_still = telemetryTick - ticksBefore;

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
    // PATCH /api/boards/<id>/ is another engineer's route: stood in here, keeping what was
    // patched so the page's own polls of the board see it too.
    let patched: Record<string, unknown> = { maintenance: false, health: 'good' };
    await page.route(`**/api/boards/${h.board.id}/`, async (route) => {
      const board = (await (await h.api(`/api/boards/${h.board.id}/`)).json()) as Record<string, unknown>;
      if (route.request().method() === 'PATCH') {
        const body = route.request().postDataJSON() as Record<string, unknown>;
        patches.push(body);
        patched = { ...patched, ...body };
      }
      const labels = { ...((patched.labels as object | undefined) ?? (board.labels as object)), 'mm/arch': 'arm64' };
      await route.fulfill({ json: { ...board, ...patched, labels } });
    });
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
    await panel.getByText('mm/arch=arm64').waitFor();
    await panel.getByRole('button', { name: 'Put in maintenance' }).click();
    await panel.getByTestId('board-maintenance').getByText('in maintenance').waitFor();
    expect(patches[1]).toEqual({ maintenance: true });
    await shot(page, 'fleet-03-board-panel');
    await expectAccessible(page, 'board page with the fleet panel');
    await page.unroute(`**/api/boards/${h.board.id}/`);
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
    // The run asks for the selector and the priority (the scheduler's contract).
    const [request] = await Promise.all([page.waitForRequest((r) => r.method() === 'POST' && r.url().includes(`/api/invocations/${id}/execute/`)), page.getByRole('button', { name: 'Execute' }).click()]);
    expect(request.postDataJSON()).toEqual({ board_selector: { camera: 'yes', 'board-model': 'kv260' }, priority: 50 });
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

    // Selector work not yet assigned: the list says what it waits for.
    const [waiting] = await sql<Array<{ id: number }>>`INSERT INTO operations (kind, status, invocation_id, params) VALUES ('execute', 'queued', ${id}, '{}') RETURNING id`;
    await page.route(/\/api\/operations\/\?/, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as { operations: Array<Record<string, unknown>> };
      // `board_selector`/`priority` on operations are the scheduler's fields: stood in here.
      for (const o of body.operations) if (o.id === waiting!.id) Object.assign(o, { board_selector: { camera: 'yes' }, priority: 10 });
      await route.fulfill({ response: res, json: body });
    });
    await page.goto('/operations');
    await page.getByTestId(`waiting-for-${waiting!.id}`).getByText('camera=yes').waitFor();
    await page.getByTestId(`waiting-for-${waiting!.id}`).getByText('priority 10').waitFor();
    await page.getByRole('row', { name: new RegExp(`#${op.id}`) }).getByRole('link', { name: 'sim-board' }).waitFor();
    await shot(page, 'fleet-07-operations-list');
    await page.unroute(/\/api\/operations\/\?/);
  }, 120_000);
});
