import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { buildBundle, repoRoot } from './bundles.ts';

/**
 * The agent bundle as a board runs it: built by its bundler, copied to a folder outside the
 * workspace (no node_modules anywhere above it), started with plain `node`, it connects to
 * a real control plane and runs an invocation on the simulated board.
 */

const agentVersion = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'packages/agent/package.json'), 'utf8')) as { version: string }).version;

let work: string;
let board: string; // the folder the bundle runs from
let server: TestServer;
let agent: ChildProcess | undefined;
let agentLog = '';

/** The environment of a board: no workspace, no loaders, nothing vitest set up. */
function boardEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8', ...extra };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    if (agent?.exitCode != null) throw new Error(`the agent exited (${agent.exitCode}) while waiting for ${what}:\n${agentLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}:\n${agentLog}`);
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-bundle-'));
  const dist = path.join(work, 'dist');
  buildBundle('agent', dist);
  board = path.join(work, 'board', 'opt-mm-agent');
  fs.mkdirSync(path.dirname(board), { recursive: true });
  fs.cpSync(dist, board, { recursive: true });
  server = await startTestServer('embedded');
});
afterAll(async () => {
  if (agent && agent.exitCode === null) agent.kill('SIGKILL');
  await server?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('the agent bundle', () => {
  it('is plain JavaScript files with no path of the build machine in them', () => {
    expect(board.startsWith(repoRoot)).toBe(false);
    // mm-runner (docs/runner.md) is a folder of Python and text files beside the bundle.
    const files = fs.readdirSync(board).filter((f) => f !== 'mm-runner').sort();
    expect(files).toContain('mm-agent.mjs');
    // Nothing native: the same files run on arm64 and x86-64.
    for (const f of files) expect(f, f).toMatch(/\.mjs$/);
    const runnerFiles = fs.readdirSync(path.join(board, 'mm-runner'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(runnerFiles.map((e) => e.name)).toContain('pipeline.py');
    for (const e of runnerFiles) {
      const full = path.join(e.parentPath, e.name);
      expect(e.name, full).toMatch(/\.(py|json)$|^mm-runner$/);
      expect(fs.readFileSync(full, 'utf8').includes(repoRoot), `${full} mentions ${repoRoot}`).toBe(false);
    }
    for (const f of files) {
      const text = fs.readFileSync(path.join(board, f), 'utf8');
      expect(text.startsWith('#!/usr/bin/env node\n'), f).toBe(true);
      expect(text.includes(repoRoot), `${f} mentions ${repoRoot}`).toBe(false);
    }
    for (let dir = board; dir !== path.dirname(dir); dir = path.dirname(dir)) {
      expect(fs.existsSync(path.join(dir, 'node_modules')), `${dir}/node_modules`).toBe(false);
    }
  });

  it('answers --version with plain node', () => {
    const r = spawnSync(process.execPath, ['mm-agent.mjs', '--version'], { cwd: board, env: boardEnv({}), encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(agentVersion);
  });

  it('connects with --simulate, runs an invocation, and stops on SIGTERM', async () => {
    const created = await server.api('/api/boards/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bundled-sim' }),
    });
    expect(created.status).toBe(201);
    const { id, token } = await json(created);

    agent = spawn(process.execPath, ['mm-agent.mjs', '--simulate'], {
      cwd: board,
      env: boardEnv({
        MM_SERVER_URL: server.url,
        MM_BOARD_TOKEN: token,
        MM_AGENT_DIR: path.join(work, 'board', 'agent-data'),
        MM_SIM_GPIO_PORT: '0',
        LOG_LEVEL: 'info',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agent.stdout!.on('data', (d: Buffer) => (agentLog += d.toString()));
    agent.stderr!.on('data', (d: Buffer) => (agentLog += d.toString()));
    const exited = new Promise<number | null>((resolve) => agent!.once('exit', (code) => resolve(code)));

    const online = await until('the board to be online', async () => {
      const b = await json(await server.api(`/api/boards/${id}/`));
      return b.status === 'online' ? b : undefined;
    });
    expect(online).toMatchObject({ agent_version: agentVersion, platform: expect.any(String), boot_id: expect.any(String) });

    // The simulated runner is a program of its own beside the bundle: an execute runs it.
    const inv = await json(
      await server.api('/api/invocations/create/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bundled run', description: '' }),
      }),
    );
    const form = new FormData();
    form.append('file_type', 'parameter');
    form.append('file', new Blob([JSON.stringify({ duration_s: 0 })], { type: 'application/json' }), 'params.json');
    expect((await server.api(`/api/invocations/${inv.id}/upload/`, { method: 'POST', body: form })).status).toBe(201);
    const executed = await server.api(`/api/invocations/${inv.id}/execute/`, { method: 'POST' });
    const operation = await json(executed);
    expect(operation.status, JSON.stringify(operation)).toBe('succeeded');
    const video = await server.api(`/api/invocations/${inv.id}/video/`);
    expect(video.status).toBe(200);
    const mp4 = Buffer.from(await video.arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');

    agent.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), 30_000)))]);
    clearTimeout(timer);
    expect(code, agentLog).toBe(0);
    await until('the board to be offline', async () => {
      const b = await json(await server.api(`/api/boards/${id}/`));
      return b.status === 'offline' ? true : undefined;
    });
  });
});
