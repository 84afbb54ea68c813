/**
 * The GitHub Action in the repository (.github/actions/mm-run, issue 43 item 2), its `run:`
 * steps executed by bash as a runner would (test/support/github-action.ts) against the real
 * control plane and a real simulated board: it downloads `mm` from the server (checked
 * against SHA256SUMS), runs the model on the board the labels pick, and passes mm's exit
 * code on as the step's and as its `exit-code` output. The example workflow uses only inputs
 * the action has.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCliBundle } from '../support/cli.ts';
import { dbKinds } from '../support/databases.ts';
import { runCompositeAction, readAction } from '../support/github-action.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, repoRoot, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ADMIN = 'ci-gate-action-admin-token';
const kind = dbKinds.at(-1)!;
const ACTION_DIR = path.join(repoRoot, '.github/actions/mm-run');

describe('the example workflow', () => {
  it('uses the action in the repository with inputs it declares, its token from a secret', async () => {
    const action = await readAction(path.join(ACTION_DIR, 'action.yml'));
    const workflow = parse(await fs.readFile(path.join(repoRoot, '.github/workflows/example-model-gate.yml'), 'utf8')) as {
      jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, string> }> }>;
    };
    const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
    const gate = steps.find((s) => s.uses === './.github/actions/mm-run');
    expect(gate).toBeDefined();
    for (const name of Object.keys(gate!.with ?? {})) expect(Object.keys(action.inputs ?? {})).toContain(name);
    for (const [name, spec] of Object.entries(action.inputs ?? {})) if (spec.required) expect(gate!.with).toHaveProperty(name);
    expect(gate!.with!.token).toMatch(/^\$\{\{ secrets\.\w+ \}\}$/);
  });
});

describe(`the mm-run GitHub Action against a real server (${kind} database)`, () => {
  let server: TestServer;
  let agent: AgentProcess;
  let scratch: string;
  let served: string;
  let n = 0;

  /** A fresh runner (its own temp, PATH file and summary) and workspace with a parameter file. */
  async function runAction(inputs: Record<string, string>, params: unknown = { duration_s: 0.2 }) {
    const dir = path.join(scratch, `job-${++n}`);
    const workspace = path.join(dir, 'workspace');
    await fs.mkdir(workspace, { recursive: true });
    await fs.writeFile(path.join(workspace, 'params.json'), JSON.stringify(params));
    const run = await runCompositeAction({ actionDir: ACTION_DIR, with: { parameter: 'params.json', ...inputs }, workspace, runnerDir: path.join(dir, 'runner') });
    return { ...run, workspace, runnerDir: path.join(dir, 'runner') };
  }

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-ci-action-'));
    // The control plane serves the client built from these sources (its packages folder's `mm`).
    const packages = path.join(scratch, 'packages');
    await fs.mkdir(packages);
    served = path.join(packages, 'mm');
    await fs.rename(await buildCliBundle(packages), served);
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN, MM_PACKAGES_DIR: packages });
    const admin = bearerCaller(server.api, ADMIN);
    const b = await json(await admin('/api/boards/', { body: { name: 'gate-kv260' } }));
    expect((await admin(`/api/boards/${b.id}/`, { method: 'PATCH', body: { labels: { gate: 'yes' } } })).status).toBe(200);
    agent = await startAgent({ serverUrl: server.url, token: b.token, agentDir: path.join(scratch, 'agent'), env: { MM_SIM_BOARD_MODEL: 'kv260' } });
    await eventually(async () => expect((await json(await admin(`/api/boards/${b.id}/`))).status).toBe('online'), 60_000);
  }, 300_000);

  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('downloads mm from the control plane, checked, onto PATH, and runs the model on the labelled board: exit 0', async () => {
    const r = await runAction({ 'server-url': server.url, token: ADMIN, name: 'action-run', labels: 'gate=yes' });
    expect(r.steps.map((s) => s.name)).toEqual(['Download mm from the control plane', 'Run the model']);
    expect(r.code, r.steps.map((s) => s.stdout + s.stderr).join('\n')).toBe(0);
    expect(r.outputs['exit-code']).toBe('0');
    expect(r.steps[0]!.stdout).toMatch(new RegExp(`^mm \\d+\\.\\d+\\.\\d+ from ${server.url}$`, 'm'));
    const downloaded = path.join(r.runnerDir, 'temp/mm-cli/mm');
    const sha = (f: string) => fs.readFile(f).then((b) => createHash('sha256').update(b).digest('hex'));
    expect(await sha(downloaded)).toBe(await sha(served));
    expect((await fs.stat(downloaded)).mode & 0o111).not.toBe(0);
    expect(await fs.readFile(path.join(r.runnerDir, 'path'), 'utf8')).toBe(`${path.dirname(downloaded)}\n`);
    // mm ran in the workspace: the output video is there, and the metrics in the log.
    expect((await fs.readdir(r.workspace)).some((f) => /^action-run-\d+\.mp4$/.test(f))).toBe(true);
    expect(r.steps[1]!.stdout).toMatch(/^ {2}fps +30 fps$/m);
  }, 300_000);

  it("passes mm's exit code on: 4 for a refused token, 3 when no board has the labels, 1 when the run fails", async () => {
    const refused = await runAction({ 'server-url': server.url, token: 'not-a-token', labels: 'gate=yes' });
    expect(refused.code).toBe(4);
    expect(refused.outputs['exit-code']).toBe('4');
    expect(refused.steps[1]!.stdout).toContain('::error title=Not authorized::');

    const none = await runAction({ 'server-url': server.url, token: ADMIN, labels: 'gate=yes site=nowhere' });
    expect(none.code).toBe(3);
    expect(none.outputs['exit-code']).toBe('3');
    expect(none.steps[1]!.stderr).toMatch(/No registered board (matches|has the labels)/);

    const failed = await runAction({ 'server-url': server.url, token: ADMIN, labels: 'gate=yes' }, { duration_s: 0.1, exit_code: 3 });
    expect(failed.code).toBe(1);
    expect(failed.outputs['exit-code']).toBe('1');
    expect(failed.steps[1]!.stdout).toContain('::error title=Run failed::');
  }, 300_000);

  it('refuses an mm that does not match the SHA256SUMS it is served with, and a server that cannot be reached', async () => {
    const bad = http.createServer((req, res) => {
      if (req.url === '/api/downloads/mm') return res.end('#!/usr/bin/env node\nconsole.log("not mm")\n');
      if (req.url === '/api/downloads/SHA256SUMS') return res.end(`${'0'.repeat(64)}  mm\n`);
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    try {
      const r = await runAction({ 'server-url': `http://127.0.0.1:${(bad.address() as AddressInfo).port}`, token: ADMIN, labels: 'gate=yes' });
      expect(r.steps).toHaveLength(1);
      expect(r.code).toBe(1);
      expect(r.steps[0]!.stdout).toMatch(/::error::mm from .* does not match its SHA256SUMS/);
      expect(await fs.readFile(path.join(r.runnerDir, 'path'), 'utf8')).toBe('');
    } finally {
      bad.close();
    }
    const away = await runAction({ 'server-url': 'http://127.0.0.1:9', token: ADMIN });
    expect(away.steps).toHaveLength(1);
    expect(away.code).not.toBe(0);
  }, 120_000);
});
