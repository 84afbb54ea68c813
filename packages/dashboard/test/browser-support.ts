/**
 * The browser tests' harness: the real control plane and a `mm-agent --simulate` board as
 * processes, Debian's Chromium driven by playwright-core, screenshots of every page into
 * packages/dashboard/test-output/screenshots/ (gitignored), and an axe-core check.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { realDatabaseUrl } from '../../../test/support/databases.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster, type ServerProcess } from '../../../test/support/processes.ts';
import { freePort } from '../../../test/e2e/device-scripts-support.ts';

export const CHROMIUM = process.env.MM_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/**
 * Whether a browser test skips: without Chromium it prints one line saying what is skipped
 * and how to get it; with `MM_REQUIRE_CHROMIUM=1` (CI, `.ci/run`) the absence fails the file
 * instead, so the browser tests cannot skip there unnoticed. Called where the suite is declared.
 */
export function skipWithoutChromium(what: string): boolean {
  if (hasChromium) return false;
  const how = 'apt-get install chromium, or set MM_CHROMIUM';
  if (process.env.MM_REQUIRE_CHROMIUM === '1') throw new Error(`${what} needs Chromium at ${CHROMIUM}, and MM_REQUIRE_CHROMIUM=1: ${how}`);
  console.warn(`skipped: ${what} (no Chromium at ${CHROMIUM}: ${how})`);
  return true;
}
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const dashboardDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SHOTS_DIR = path.join(dashboardDir, 'test-output', 'screenshots');
export const ADMIN_TOKEN = 'browser-test-admin-token';

export interface Harness {
  cluster: ServerCluster;
  server: ServerProcess;
  agent: AgentProcess;
  board: { id: string; token: string };
  gpioScriptId: string;
  users: Record<'admin' | 'operator' | 'viewer', { username: string; password: string }>;
  browser: Browser;
  api(pathname: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

/** Builds the dashboard when dist/ is missing or older than its sources (the install's own check). */
async function ensureBuilt(): Promise<void> {
  const r = spawnSync(process.execPath, [path.join(dashboardDir, 'scripts', 'build-if-needed.mjs')], { cwd: dashboardDir, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(path.join(dashboardDir, 'dist', 'index.html'))) throw new Error('the dashboard could not be built');
}

export interface HarnessOptions {
  /** More settings for the control plane (e.g. MM_LOG_MAX_BYTES). */
  serverEnv?: Record<string, string>;
  /** More settings for the simulated board's agent (e.g. its own MM_RUNNER). */
  agentEnv?: Record<string, string>;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  await ensureBuilt();
  await fs.mkdir(SHOTS_DIR, { recursive: true });
  const cluster = await serverCluster(realDatabaseUrl ? 'postgres' : 'embedded', { MM_API_TOKEN: ADMIN_TOKEN, ...opts.serverEnv });
  const server = await cluster.start();
  const api = (pathname: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${ADMIN_TOKEN}`);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    return server.api(pathname, { ...init, headers, ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}) });
  };

  const users = {
    admin: { username: 'ada', password: 'ada-password-123456' },
    operator: { username: 'otto', password: 'otto-password-123456' },
    viewer: { username: 'vera', password: 'vera-password-123456' },
  };
  for (const [role, u] of Object.entries(users)) {
    const res = await api('/api/users/', { method: 'POST', json: { ...u, role } });
    expect(res.status, await res.clone().text()).toBe(201);
  }

  const created = await api('/api/boards/', { method: 'POST', json: { name: 'sim-board' } });
  expect(created.status).toBe(201);
  const board = (await created.json()) as { id: string; token: string };

  // The simulated GPIO motor script listens on a free port; the catalogue entry says where.
  const { scripts } = (await (await api('/api/device-scripts/?device_type=gpio')).json()) as { scripts: Array<{ id: string }> };
  const gpioScriptId = scripts[0]!.id;
  const gpioPort = await freePort();
  const patched = await api(`/api/device-scripts/${gpioScriptId}/`, { method: 'PATCH', json: { port: gpioPort } });
  expect(patched.status).toBe(200);

  const agent = await startAgent({
    serverUrl: server.url,
    token: board.token,
    agentDir: await fs.mkdtemp(path.join(os.tmpdir(), 'mm-browser-agent-')),
    env: { MM_SIM_GPIO_PORT: String(gpioPort), MM_SIM_REBOOT_DELAY_MS: '1500', LOG_LEVEL: 'warn', ...opts.agentEnv },
  });
  await eventually(async () => {
    const b = (await (await api(`/api/boards/${board.id}/`)).json()) as { status: string };
    expect(b.status).toBe('online');
  }, 60_000);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  return {
    cluster,
    server,
    agent,
    board,
    gpioScriptId,
    users,
    browser,
    api,
    async stop() {
      await browser.close().catch(() => undefined);
      await agent.stop();
      await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      await cluster.cleanup();
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS_DIR, `${name}.png`), fullPage: true });
}

const axeSource = fs.readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core in the page: no serious or critical violation. */
/** Screenshots of the page as it is, at 1280 and 390 px, light and dark (`<name>-<width>[-dark]`); leaves it light at 1280 px. */
export async function screenshotEveryWay(page: Page, name: string): Promise<void> {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
        await screenshot(page, `${name}-${width}${scheme === 'dark' ? '-dark' : ''}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 900 });
}

export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol: an inline <script> tag would be blocked by the
  // server's Content-Security-Policy (script-src 'self'), as any injected script should be.
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    // Runs in the page: its globals, typed here by hand (the test project has Node's types only).
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run(ctx: unknown, opts: object): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }> }> };
    };
    const r = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3).join(', ')})`);
  });
  expect(violations, `accessibility of ${name}`).toEqual([]);
}

/** A new personal token of this user (signed in with its password, as the user would). */
export async function personalToken(baseUrl: string, user: { username: string; password: string }): Promise<string> {
  const login = await fetch(`${baseUrl}/api/auth/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  if (login.status !== 200) throw new Error(`sign-in as ${user.username}: ${login.status} ${await login.text()}`);
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('mm_session='))!.split(';')[0]!;
  const made = await fetch(`${baseUrl}/api/tokens/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, origin: baseUrl },
    body: JSON.stringify({ name: `browser-test-${Date.now()}` }),
  });
  if (made.status !== 201) throw new Error(`token for ${user.username}: ${made.status} ${await made.text()}`);
  return ((await made.json()) as { token: string }).token;
}

/** Signs in on the sign-in page with a personal token or MM_API_TOKEN. */
export async function signInWithToken(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(baseUrl + '/');
  await page.getByRole('button', { name: 'Sign in with an API token instead' }).click();
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Invocations', level: 1 }).waitFor();
}

export async function signIn(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  await page.goto(baseUrl + '/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Invocations', level: 1 }).waitFor();
}

/** An invocation made through the API, with a parameter file when `params` are given; its id. */
export async function createInvocation(h: Harness, name: string, params?: Record<string, unknown>): Promise<number> {
  const created = await h.api('/api/invocations/create/', { method: 'POST', json: { name, description: '' } });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: number };
  if (params) {
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob([JSON.stringify(params)]), 'params.json');
    expect((await h.api(`/api/invocations/${id}/upload/`, { method: 'POST', body: form })).status).toBe(201);
  }
  return id;
}
