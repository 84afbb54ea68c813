import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, createInvocation, expectAccessible, hasChromium, signIn, startHarness, type Harness, screenshotEveryWay } from './browser-support.ts';

/**
 * What issue 46 shows in the dashboard, in Chromium: a re-enrolment held for an admin on the
 * Keys page (approved there), and the boards a rollout left out on its page. Looked at 1280
 * and 390 px wide, light and dark.
 */
if (!hasChromium) console.warn(`security round 3 browser test skipped: no Chromium at ${CHROMIUM}`);

describe.skipIf(!hasChromium)('the dashboard in Chromium: held re-enrolments and boards left out of rollouts', () => {
  let h: Harness;
  let page: Page;
  let base: string;

  const enroll = (body: Record<string, unknown>) =>
    h.server.api('/api/agent/enroll/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  /** The page at both widths and in both schemes, saved as `<name>-<width>[-dark].png`. */
  const look = (name: string) => screenshotEveryWay(page, name);

  beforeAll(async () => {
    h = await startHarness();
    base = h.server.url.replace(/\/$/, '');
    const context = await h.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, h.users.admin.username, h.users.admin.password);
  }, 180_000);

  afterAll(async () => {
    await h?.stop();
  }, 60_000);

  it('lists a held re-enrolment with who asked, and approving it lets the next enrolment take a new token', async () => {
    const made = await h.api('/api/provisioning-keys/', { method: 'POST', json: { name: 'lab-9 boards', approval: 'manual', labels: { site: 'lab-9' } } });
    const key = ((await made.json()) as { key: string }).key;
    const first = (await (await enroll({ key, machine_id: 'kria-09-machine', hostname: 'kria-09' })).json()) as { board_id: string };
    expect((await h.api(`/api/boards/${first.board_id}/approve/`, { method: 'POST' })).status).toBe(200);
    expect((await enroll({ key, machine_id: 'kria-09-machine', hostname: 'kria-09' })).status).toBe(201);
    // Someone else with the key and the board's machine id: held, the board untouched.
    expect((await enroll({ key, machine_id: 'kria-09-machine', hostname: 'not-kria-09' })).status).toBe(202);

    // Enrolled boards are named <hostname>-<the start of the machine id> (issue 39).
    const boardName = ((await (await h.api(`/api/boards/${first.board_id}/`)).json()) as { name: string }).name;
    expect(boardName.startsWith('kria-09-')).toBe(true);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Provisioning keys', level: 1 }).waitFor();
    const held = page.getByTestId(`reenroll-${boardName}`);
    await held.waitFor({ timeout: 30_000 });
    expect(await held.textContent()).toContain('not-kria-09');
    await expectAccessible(page, 'keys page with a held re-enrolment');
    await look('keys-held-reenrolment');

    page.once('dialog', (d) => void d.accept());
    await page.getByTestId(`pending-${boardName}`).getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('no-pending').waitFor({ timeout: 30_000 });
    expect((await enroll({ key, machine_id: 'kria-09-machine', hostname: 'kria-09' })).status).toBe(201);
  });

  it("shows the boards a rollout left out, and why, on the rollout's page", async () => {
    const invocationId = await createInvocation(h, 'left-out run');
    for (const [name, change] of [
      ['lab-bench-3', { maintenance: true }],
      ['lab-bench-4', {}],
    ] as const) {
      const res = await h.api('/api/boards/', { method: 'POST', json: { name } });
      const { id } = (await res.json()) as { id: string };
      expect((await h.api(`/api/boards/${id}/`, { method: 'PATCH', json: { labels: { bench: 'yes' }, ...change } })).status).toBe(200);
    }
    const created = await h.api('/api/rollouts/', { method: 'POST', json: { kind: 'execute', board_selector: { bench: 'yes' }, invocation_id: invocationId } });
    expect(created.status).toBe(201);
    const r = (await created.json()) as { id: number; left_out: Array<{ board_name: string }> };
    expect(r.left_out.map((b) => b.board_name)).toEqual(['lab-bench-3']);

    await page.goto(`${base}/rollouts/${r.id}`);
    const leftOut = page.getByTestId('rollout-left-out');
    await leftOut.waitFor();
    expect(await leftOut.textContent()).toBe('lab-bench-3 (in maintenance)');
    await expectAccessible(page, 'rollout page with boards left out');
    await look('rollout-left-out');
    expect((await h.api(`/api/rollouts/${r.id}/cancel/`, { method: 'POST' })).status).toBe(202);
  });
});
