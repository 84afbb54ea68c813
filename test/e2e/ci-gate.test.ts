/**
 * The CI gate end to end (issue 43, item 2): `mm run … --baseline NAME --fail-on-regression`
 * as a process against the real control plane and two real simulated boards (`sim/speed`
 * sets their fps), comparing with a baseline made from real runs. Exit codes 0 (no
 * regression), 5 (fps and latency regressed on both boards), 1 (a run failed), 3 (no board
 * matches; server unreachable), 2 (unknown baseline, nothing created); the Markdown summary
 * and the JUnit report written, the latter read back by an XML parser.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../support/cli.ts';
import { dbKinds } from '../support/databases.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ADMIN = 'ci-gate-admin-token';
const kind = dbKinds.at(-1)!;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name) });

interface JSuite {
  name: string;
  tests: string;
  failures: string;
  errors: string;
  testcase: Array<{ name: string; failure?: { type: string; message: string }; error?: { type: string; message: string } }>;
}

async function readJunit(file: string) {
  const xml = await fs.readFile(file, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  return (parser.parse(xml) as { testsuites: { tests: string; failures: string; errors: string; testsuite: JSuite[] } }).testsuites;
}

describe(`mm run --baseline --fail-on-regression, end to end (${kind} database)`, () => {
  let server: TestServer;
  const agents: AgentProcess[] = [];
  const boards: Record<string, string> = {};
  let cli: CliHome;
  let scratch: string;
  let work: string;
  let env: Record<string, string>;
  /** The baseline's operations by board name. */
  const baselineOps: Record<string, number> = {};
  const admin = (p: string, init?: { method?: string; body?: unknown }) => bearerCaller(server.api, ADMIN)(p, init);

  const setSpeed = async (speed: number) => {
    for (const id of Object.values(boards)) {
      expect((await admin(`/api/boards/${id}/`, { method: 'PATCH', body: { labels: { gate: 'yes', 'sim/speed': String(speed) } } })).status).toBe(200);
    }
  };
  const mm = (args: string[]) => cli.run(args, env, work);
  // Where nothing may regress: the run time and the simulated sensors follow this machine's
  // load, not the board's speed; only the simulated fps and latency must hold still.
  const hostBound = ['run_ms', 'max_temperature_c', 'mean_power_w'].flatMap((m) => ['--threshold', `${m}=1000`]);
  const gateRun = (extra: string[], params = 'p.json') => mm(['run', '--name', 'gate', '--parameter', params, '--label', 'gate=yes', '--all', '--repeat', '5', ...extra]);

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-ci-gate-'));
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN });
    for (const name of ['gate-a', 'gate-b']) {
      const b = await json(await admin('/api/boards/', { body: { name } }));
      boards[name] = b.id;
      agents.push(await startAgent({ serverUrl: server.url, token: b.token, agentDir: path.join(scratch, name), env: { MM_SIM_BOARD_MODEL: 'kv260' } }));
    }
    for (const id of Object.values(boards)) await eventually(async () => expect((await json(await admin(`/api/boards/${id}/`))).status).toBe('online'), 240_000);
    await setSpeed(1);
    cli = await cliHome();
    work = path.join(cli.dir, 'work');
    await fs.writeFile(path.join(work, 'p.json'), JSON.stringify({ duration_s: 0.1 }));
    await fs.writeFile(path.join(work, 'fail.json'), JSON.stringify({ duration_s: 0.1, exit_code: 3 }));
    env = { MM_SERVER_URL: server.url, MM_API_TOKEN: ADMIN };

    // The baseline: five counted runs on each board at full speed (fewer than 4 + 4 runs give no 95 % interval: inconclusive).
    const first = await gateRun(['--json']);
    expect(first.code, first.stderr).toBe(0);
    const rollout = JSON.parse(first.stdout).rollout as { boards: Array<{ operation_id: number; board_name: string }> };
    for (const b of rollout.boards) baselineOps[b.board_name] = b.operation_id;
    const res = await admin('/api/baselines/', { body: { name: 'release', operation_ids: rollout.boards.map((b) => b.operation_id) } });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  }, 600_000);

  afterAll(async () => {
    for (const a of agents) await a.stop();
    await cli?.cleanup();
    await server?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('exit 0 when nothing regressed: the JUnit report has no failure, the summary a row per board', async () => {
    // The simulated board's own figures (fps, latency) hold still; the run's wall time and the
    // simulated sensors follow this machine's load between the baseline and now, so they get a
    // threshold no load reaches (the exit-5 case below shows the default one at work).
    const r = await gateRun(['--baseline', 'release', '--fail-on-regression', '--summary-md', 'summary.md', '--junit', 'out/junit.xml', ...hostBound]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Baseline release: \S+ (unchanged|inconclusive)\.$/m);
    const j = await readJunit(path.join(work, 'out/junit.xml'));
    expect(j.failures).toBe('0');
    expect(j.errors).toBe('0');
    expect(j.testsuite.map((s) => s.name)).toEqual(expect.arrayContaining(['runs', 'fps', 'latency_ms']));
    expect(j.testsuite.find((s) => s.name === 'fps')!.testcase.map((c) => c.name).sort()).toEqual(['gate-a', 'gate-b']);
    const md = await fs.readFile(path.join(work, 'summary.md'), 'utf8');
    expect(md).toMatch(/^### \S+ (unchanged|inconclusive): gate \(invocation \d+, rollout \d+\) vs baseline `release`$/m);
    expect(md).toMatch(/^\| Board \| Run \|.*`fps` ↑.*\|$/m);
    expect(md).toMatch(/^\| gate-a \| succeeded \| /m);
    expect(md).toMatch(/^\| gate-b \| succeeded \| /m);
    // The link back opens the dashboard's comparison page of this rollout, and the page is served.
    const link = /\[See it on the dashboard\]\((\S+)\)/.exec(md)?.[1];
    expect(link!.startsWith(`${server.url.replace(/\/$/, '')}/compare?`)).toBe(true);
    expect(new URL(link!).search).toMatch(/^\?baseline=release&rollout=\d+$/);
    // The control plane answers that path with the dashboard's page (503 with its "not built"
    // notice where this checkout's dashboard was never built), not a 404.
    const page = await fetch(link!);
    expect([200, 503]).toContain(page.status);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
  }, 300_000);

  it('exit 5 when fps dropped 20 % on both boards; the files say which metric regressed where (appended summary)', async () => {
    await setSpeed(0.8);
    try {
      const r = await gateRun(['--baseline', 'release', '--fail-on-regression', '--summary-md', 'summary.md', '--junit', 'out/junit.xml']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/^mm: Regression against baseline release: .*fps/m);
      const j = await readJunit(path.join(work, 'out/junit.xml'));
      const fps = j.testsuite.find((s) => s.name === 'fps')!;
      expect(fps.failures).toBe('2');
      expect(fps.testcase.map((c) => c.failure?.type)).toEqual(['regressed', 'regressed']);
      expect(fps.testcase[0]!.failure!.message).toMatch(/^fps regressed on gate-[ab]: 30 fps → 24 fps \(−20 %\)/);
      expect(j.testsuite.find((s) => s.name === 'latency_ms')!.failures).toBe('2');
      const md = await fs.readFile(path.join(work, 'summary.md'), 'utf8');
      // Appended after the earlier run's section, as $GITHUB_STEP_SUMMARY is.
      expect(md.match(/^### /gm)).toHaveLength(2);
      expect(md).toMatch(/^### ❌ regressed: gate /m);
      expect(md).toMatch(/^\| gate-a \| succeeded \| ❌ regressed: 30 fps → 24 fps \(−20 %\)/m);
      expect(md).toContain('| **All boards** | regressed | ❌ **regressed** | ❌ **regressed** |');

      // Without --fail-on-regression the gate reports but passes; --json carries the comparison.
      const soft = await gateRun(['--baseline', 'release', '--json']);
      expect(soft.code, soft.stderr).toBe(0);
      const doc = JSON.parse(soft.stdout);
      expect(doc.verdict).toBe('regressed');
      expect(doc.comparison.metrics.find((m: { metric: string }) => m.metric === 'fps')).toMatchObject({ better: 'higher', verdict: 'regressed' });
      // With it, --json prints one document: the error, carrying the comparison.
      const hard = await gateRun(['--baseline', 'release', '--fail-on-regression', '--json']);
      expect(hard.code).toBe(5);
      expect(JSON.parse(hard.stdout).error).toMatchObject({ exit_code: 5, verdict: 'regressed' });
    } finally {
      await setSpeed(1);
    }
  }, 600_000);

  it('exit 1 when the runs fail, even with a baseline: the JUnit report has an error per board, the summary lists them', async () => {
    const r = await gateRun(['--baseline', 'release', '--fail-on-regression', '--summary-md', 'failed.md', '--junit', 'failed.xml'], 'fail.json');
    expect(r.code, r.stderr).toBe(1);
    const j = await readJunit(path.join(work, 'failed.xml'));
    expect(j.errors).toBe('2');
    expect(j.testsuite.map((s) => s.name)).toEqual(['runs']);
    expect(j.testsuite[0]!.testcase.map((c) => c.error?.type)).toEqual(['failed', 'failed']);
    const md = await fs.readFile(path.join(work, 'failed.md'), 'utf8');
    expect(md).toMatch(/^### ❌ 2 of 2 run\(s\) failed, no comparison/m);
    expect(md).toMatch(/^- gate-a \(operation \d+\): failed/m);
  }, 300_000);

  it('exit 3 when no board has the labels or the server is away; exit 2 for an unknown baseline, before anything is created', async () => {
    const none = await mm(['run', '--name', 'gate', '--parameter', 'p.json', '--label', 'gate=nope', '--baseline', 'release', '--fail-on-regression']);
    expect(none.code, none.stderr).toBe(3);
    const away = await cli.run(['run', '--name', 'gate', '--parameter', 'p.json', '--label', 'gate=yes', '--baseline', 'release', '--fail-on-regression'], { ...env, MM_SERVER_URL: 'http://127.0.0.1:9' }, work);
    expect(away.code).toBe(3);

    const before = (await json(await admin('/api/invocations/'))).total;
    const unknown = await mm(['run', '--name', 'gate', '--parameter', 'p.json', '--label', 'gate=yes', '--baseline', 'no-such-baseline', '--fail-on-regression']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No baseline is named "no-such-baseline" \(the baselines are release\)/);
    expect((await json(await admin('/api/invocations/'))).total).toBe(before);

    const usage = await mm(['run', '--parameter', 'p.json', '--fail-on-regression']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--fail-on-regression compare with a baseline: give --baseline NAME/);
  }, 300_000);

  it('one board, no --all: its regression is the verdict (the only board)', async () => {
    const res = await admin('/api/baselines/', { body: { name: 'release-a', operation_ids: [baselineOps['gate-a']] } });
    expect(res.status).toBe(201);
    const ok = await mm(['run', '--name', 'one', '--parameter', 'p.json', '--board', 'gate-a', '--repeat', '5', '--baseline', 'release-a', '--fail-on-regression', '--junit', 'one.xml', ...hostBound]);
    expect(ok.code, ok.stderr).toBe(0);
    await setSpeed(0.8);
    try {
      const slow = await mm(['run', '--name', 'one', '--parameter', 'p.json', '--board', 'gate-a', '--repeat', '5', '--baseline', 'release-a', '--fail-on-regression', '--junit', 'one.xml']);
      expect(slow.code, slow.stderr).toBe(5);
      const j = await readJunit(path.join(work, 'one.xml'));
      expect(j.testsuite.find((s) => s.name === 'fps')!.testcase).toHaveLength(1);
      expect(j.testsuite.find((s) => s.name === 'fps')!.failures).toBe('1');
    } finally {
      await setSpeed(1);
    }
  }, 300_000);
});
