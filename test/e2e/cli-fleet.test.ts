/**
 * End to end for the client's fleet commands with the real control plane and a real
 * simulated KV260 (`mm-agent --simulate`, MM_SIM_BOARD_MODEL=kv260): `mm boards show` by
 * name, `mm run --board NAME` printing the run's metrics, `mm ops show` with metrics, in
 * a real terminal (tmux) where one is available.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../support/cli.ts';
import { dbKinds } from '../support/databases.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { hasTmux, tmuxRun } from '../support/tmux.ts';

const ADMIN = 'cli-fleet-admin-token';
const kind = dbKinds.at(-1)!;
/** Screens a person would see, kept for a look (docs and review). */
const SHOTS = process.env.MM_SHOTS_DIR;

describe(`mm fleet commands, end to end (${kind} database)`, () => {
  let server: TestServer;
  let agent: AgentProcess;
  let cli: CliHome;
  let scratch: string;
  let env: Record<string, string>;
  let boardId: string;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-cli-fleet-'));
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN });
    const admin = bearerCaller(server.api, ADMIN);
    const b = await json(await admin('/api/boards/', { body: { name: 'kv260-lab' } }));
    boardId = b.id;
    agent = await startAgent({ serverUrl: server.url, token: b.token, agentDir: path.join(scratch, 'agent'), env: { MM_SIM_BOARD_MODEL: 'kv260' } });
    await eventually(async () => expect((await json(await admin(`/api/boards/${b.id}/`))).status).toBe('online'), 60_000);
    cli = await cliHome();
    env = { MM_SERVER_URL: server.url, MM_API_TOKEN: ADMIN };
  }, 300_000);

  afterAll(async () => {
    await agent?.stop();
    await cli?.cleanup();
    await server?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('mm boards show <name>: facts and labels; unknown names are a usage error', async () => {
    const r = await cli.run(['boards', 'show', 'kv260-lab'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Board kv260-lab (${boardId})`);
    expect(r.stdout).toMatch(/^ {2}status {7}online, idle$/m);
    expect(r.stdout).toMatch(/mm\/board-model=kv260/);
    expect(r.stdout).toMatch(/mm\/os=ubuntu-22\.04/);
    expect(r.stdout).toMatch(/^ {2}board_model +Kria KV260 Vision AI Starter Kit$/m);
    expect(r.stdout).toMatch(/^ {2}som_model +SMK-K26-XCL2G$/m);
    expect(r.stdout).toMatch(/^ {2}memory_bytes +3\.8 GiB \(4118261760\)$/m);
    const asJson = JSON.parse((await cli.run(['boards', 'show', boardId, '--json'], env)).stdout);
    expect(asJson.facts.board_model).toBe('Kria KV260 Vision AI Starter Kit');
    const unknown = await cli.run(['boards', 'show', 'kv999'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No board is named "kv999" \(the boards are kv260-lab/);
  }, 120_000);

  it('mm run --board NAME prints the metrics; mm ops show has them as readable lines (in a terminal)', async () => {
    const params = path.join(scratch, 'params.json');
    await fs.writeFile(params, JSON.stringify({ duration_s: 0.3 }));
    const out = path.join(scratch, 'out.mp4');
    const r = await cli.run(['run', '--name', 'metrics-run', '--parameter', params, '--board', 'kv260-lab', '-o', out], env);
    expect(r.code, r.stderr).toBe(0);
    // The runner's names, then the simulated board's own measures of the run, then run_ms.
    expect(r.stdout).toMatch(/^Metrics:\n {2}fps +30 fps\n {2}latency_ms +33\.3 ms\n {2}max_temperature_c +[\d.]+ °C\n {2}mean_power_w +[\d.]+ W\n {2}run_ms +[\d.]+ m?s/m);
    const ops = await json(await bearerCaller(server.api, ADMIN)(`/api/operations/?kind=execute&board_id=${boardId}`));
    const opId = String(ops.operations[0].id);

    const show = await cli.run(['ops', 'show', opId], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^metrics:\n {2}fps +30 fps\n {2}latency_ms +33\.3 ms\n {2}max_temperature_c +[\d.]+ °C\n {2}mean_power_w +[\d.]+ W\n {2}run_ms +[\d.]+ m?s/m);

    if (!hasTmux) return;
    for (const [name, argv] of [
      ['boards-show', ['boards', 'show', 'kv260-lab']],
      ['ops-show', ['ops', 'show', opId]],
    ] as const) {
      const term = tmuxRun([process.execPath, cli.bundle, ...argv], { env: { ...cli.env, ...env }, cwd: scratch, cols: 100, rows: 40 });
      try {
        const screen = await term.waitFor((s) => /\[exit \d+\]/.test(s), 60_000);
        expect(screen).toContain('[exit 0]');
        // Nothing a person would trip over: no JSON braces, no undefined, no stack.
        expect(screen).not.toMatch(/undefined|NaN|\[object|^\s+at /m);
        if (SHOTS) {
          await fs.mkdir(SHOTS, { recursive: true });
          await fs.writeFile(path.join(SHOTS, `${name}.txt`), `${screen}\n`);
        }
      } finally {
        term.close();
      }
    }
  }, 300_000);
});
