import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInvocation, expectAccessible, signIn, skipWithoutChromium, startHarness, type Harness, screenshotEveryWay } from './browser-support.ts';

/**
 * Baselines and the comparison page in Chromium (docs/results.md): the harness's simulated
 * board runs an invocation 6 times (sim/noise 2 %), the runs are saved as a baseline, the board
 * is made 20 % slower and runs again with another parameter file; on the Baselines page the
 * operator compares the new operation with the baseline and reads the metric × board table
 * (regressed, coloured) and what differs. Looked at 1280 and 390 px wide, light and dark.
 */
describe.skipIf(skipWithoutChromium('results in Chromium'))('the dashboard in Chromium: baselines and comparisons', () => {
  let h: Harness;
  let page: Page;
  let base: string;

  const look = (name: string) => screenshotEveryWay(page, name);

  const label = async (labels: Record<string, string>) => {
    expect((await h.api(`/api/boards/${h.board.id}/`, { method: 'PATCH', json: { labels } })).status).toBe(200);
  };
  const execute = async (invocationId: number) => {
    const res = await h.api(`/api/invocations/${invocationId}/execute/`, { method: 'POST', json: { board_id: h.board.id, repeat: 6 } });
    const op = (await res.json()) as { id: number; status: string };
    expect(res.status, JSON.stringify(op)).toBe(200);
    return op.id;
  };

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.operator.username, h.users.operator.password);
  }, 240_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('compares a slower run with a baseline: verdicts by metric and board, and what differs', async () => {
    await label({ 'sim/noise': '0.02' });
    const invocationId = await createInvocation(h, 'compare-me', { duration_s: 0 });
    const first = await execute(invocationId);
    const saved = await h.api('/api/baselines/', { method: 'POST', json: { name: 'compare-me-v1', operation_ids: [first] } });
    expect(saved.status).toBe(201);
    await label({ 'sim/noise': '0.02', 'sim/speed': '0.8' });
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob([JSON.stringify({ duration_s: 0, v: 2 })]), 'params.json');
    expect((await h.api(`/api/invocations/${invocationId}/upload/`, { method: 'POST', body: form })).status).toBe(201);
    const second = await execute(invocationId);

    await page.goto(`${base}/baselines`);
    await page.getByRole('heading', { name: 'Baselines', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'Baselines' }).getByRole('cell', { name: 'compare-me-v1' }).waitFor();
    const compare = page.getByRole('form', { name: 'Compare with a baseline' });
    await compare.getByLabel('Baseline').selectOption('compare-me-v1');
    await compare.getByLabel(/Operations/).fill(String(second));
    await compare.getByRole('button', { name: 'Compare' }).click();

    await page.getByRole('heading', { name: /Comparison with compare-me-v1/ }).waitFor();
    expect(page.url()).toContain(`/compare?baseline=compare-me-v1&operations=${second}`);
    const table = page.getByRole('region', { name: 'Verdicts by metric and board' });
    const fpsRow = table.getByRole('row', { name: /Frames per second/ });
    await fpsRow.waitFor();
    // One board: its verdict is the metric's; a 20 % drop is far outside 2 % noise.
    await expect.poll(() => fpsRow.locator('.verdict-regressed').count()).toBe(2);
    expect(await fpsRow.textContent()).toMatch(/−|-/);
    await expect.poll(() => table.getByRole('row', { name: /Latency/ }).locator('.verdict-regressed').count()).toBe(2);
    const title = page.getByRole('heading', { name: /Comparison with/ });
    expect(await title.locator('.verdict-regressed').count()).toBe(1);
    const differs = page.getByRole('region', { name: 'What differs' });
    await differs.getByText('files.parameter').waitFor();
    // The regressed cell is tinted: its background is not transparent.
    const bg = await fpsRow.locator('.verdict-cell').first().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor);
    expect(bg).not.toBe('rgba(0, 0, 0, 0)');
    await expectAccessible(page, 'comparison');
    // On a phone what differs stacks (field, then each value on its own lines): nothing of it
    // hides in a sideways scroll, and a field name is not broken letter by letter.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => differs.evaluate((el) => { const box = el as unknown as { scrollWidth: number; clientWidth: number }; return box.scrollWidth - box.clientWidth; })).toBeLessThanOrEqual(0);
    const field = differs.getByText('files.parameter');
    expect((await field.boundingBox())!.height).toBeLessThan(30);
    await page.setViewportSize({ width: 1280, height: 900 });
    await look(path.join('results', 'comparison'));

    // A faster run: green verdicts on green-tinted cells, legible too (light and dark).
    await label({ 'sim/noise': '0.02', 'sim/speed': '1.25' });
    const third = await execute(invocationId);
    await page.goto(`${base}/compare?baseline=compare-me-v1&operations=${third}`);
    await expect.poll(() => table.getByRole('row', { name: /Frames per second/ }).locator('.verdict-improved').count()).toBe(2);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectAccessible(page, `an improved comparison (${scheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await look(path.join('results', 'comparison-improved'));

    // A link straight to a comparison, and one without a baseline.
    await page.goto(`${base}/compare`);
    await page.getByRole('link', { name: 'Baselines' }).first().waitFor();
  }, 180_000);

  it('draws the baseline band and each repeated run’s interval on the invocation’s metric plots', async () => {
    await label({ 'sim/noise': '0.02' });
    const invocationId = await createInvocation(h, 'plot-my-band', { duration_s: 0 });
    const first = await execute(invocationId);
    const saved = await h.api('/api/baselines/', { method: 'POST', json: { name: 'plot-my-band-v1', operation_ids: [first] } });
    expect(saved.status).toBe(201);
    const baseline = (await saved.json()) as { summary_by_board: Record<string, Record<string, { median: number; ci95: [number, number] }>> };
    const band = baseline.summary_by_board[h.board.id]!.fps!;
    await label({ 'sim/noise': '0.02', 'sim/speed': '0.8' });
    const second = await execute(invocationId);
    // Each point of a repeated run carries its summary: the interval the plot draws.
    const { points } = (await (await h.api(`/api/invocations/${invocationId}/metrics/?name=fps`)).json()) as { points: Array<{ operation_id: number; summary?: { n: number; ci95: [number, number] } }> };
    expect(points.map((p) => [p.operation_id, p.summary?.n])).toEqual([
      [first, 6],
      [second, 6],
    ]);

    await page.goto(`${base}/invocations/${invocationId}`);
    const fps = page.getByTestId('metric-plot-fps');
    await fps.locator('canvas').waitFor({ timeout: 30_000 });
    const drawn = async () => {
      const d = await fps.evaluate((el) => ({ ...(el as unknown as { dataset: Record<string, string> }).dataset }));
      return {
        bands: JSON.parse(d.bands ?? '[]') as Array<{ label: string; lo: number; hi: number }>,
        intervals: JSON.parse(d.intervals ?? '[]') as Array<{ x: number; lo: number; hi: number }>,
        xMin: Number(d.xMin),
        xMax: Number(d.xMax),
      };
    };
    // The newest baseline of the invocation is chosen: its band is the 95 % interval of its median on this board.
    expect(await page.getByTestId('metric-baseline').inputValue()).not.toBe('');
    await expect.poll(async () => (await drawn()).bands).toEqual([{ label: 'plot-my-band-v1 · sim-board', lo: band.ci95[0], hi: band.ci95[1] }]);
    // Both runs were repeated 6 times: each has its interval, drawn where its point is.
    const byOp = new Map(points.map((p) => [p.operation_id, p.summary!.ci95]));
    expect((await drawn()).intervals.map((i) => [i.lo, i.hi])).toEqual([byOp.get(first), byOp.get(second)]);
    await page.getByTestId('metric-plot-key').getByText(/baseline plot-my-band-v1, the 95 % interval of its median/).waitFor();
    expect(await page.getByTestId('metric-plot-key').textContent()).toContain('Error bars');
    // The slower second run's interval lies below the band.
    expect(byOp.get(second)![1]).toBeLessThan(band.ci95[0]);
    await expectAccessible(page, 'invocation metric plots');
    await page.getByRole('heading', { name: 'Metrics over its runs' }).scrollIntoViewIfNeeded();
    await look(path.join('results', 'metric-band'));

    // One step a run: the two runs sit at 1 and 2, whatever the time between them.
    await page.getByRole('group', { name: 'Metrics time range' }).getByRole('button', { name: 'By run' }).click();
    await expect.poll(async () => [(await drawn()).xMin, (await drawn()).xMax]).toEqual([0.5, 2.5]);
    expect((await drawn()).intervals.map((i) => i.x)).toEqual([1, 2]);
    // No baseline: no band.
    await page.getByTestId('metric-baseline').selectOption('');
    await expect.poll(async () => (await drawn()).bands).toEqual([]);
    expect(await page.getByTestId('metric-plot-key').textContent()).not.toContain('baseline');
  });
});
