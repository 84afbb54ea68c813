/**
 * Repeats, baselines and comparisons end to end (docs/results.md): a real control plane and two
 * real simulated agents whose runner reports fps with the noise of their `sim/noise` label; a
 * slower `sim/speed` is found as a regression on both boards and told to a webhook.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhookReceiver } from '../../packages/server/test/support/webhook-receiver.ts';
import { upload } from '../faults/fault-support.ts';
import { cliHome, type CliHome } from '../support/cli.ts';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import type { TestServer } from '../support/test-server.ts';
import { startBoard, startPacServer, stopBoard, type Board } from './pacs-support.ts';
import { createRollout, newInvocation, post, waitForRollout } from './rollouts-support.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 180_000 });

interface Op {
  id: number;
  status: string;
  board_id: string;
  result: {
    runs: Array<Record<string, number>>;
    summary: Record<string, { n: number; median: number; q1: number; q3: number; ci95: [number, number] }>;
    metrics: Record<string, number>;
    context: Record<string, unknown> & { files: Record<string, string> };
    warmup_runs: number;
  };
}

describe('repeated runs, a baseline and comparisons on two simulated boards', () => {
  let server: TestServer;
  let rx: WebhookReceiver;
  const boards: Board[] = [];
  let invocationId = 0;
  let baselineOps: Op[] = [];
  let slowOps: Op[] = [];
  let cli: CliHome | undefined;

  const label = async (b: Board, labels: Record<string, string>) => {
    const res = await server.api(`/api/boards/${b.id}/`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ labels }) });
    expect(res.status).toBe(200);
  };
  const execute = async (b: Board, body: Record<string, unknown>): Promise<Op> => {
    const res = await post(server, `/api/invocations/${invocationId}/execute/`, { board_id: b.id, ...body });
    const op = (await json(res)) as Op;
    expect(res.status, JSON.stringify(op)).toBe(200);
    return op;
  };
  const compare = async (body: Record<string, unknown>) => {
    const res = await post(server, '/api/comparisons/', body);
    const answer = await json(res);
    expect(res.status, JSON.stringify(answer)).toBe(200);
    return answer as {
      verdict: string;
      metrics: Array<{ metric: string; better: string; verdict: string; boards: Array<{ board_id: string; verdict: string; change_pct: number; ci95_pct: [number, number]; baseline_from: string }> }>;
      differs: Record<string, [unknown, unknown]>;
      skipped_metrics: string[];
    };
  };

  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    server = await startPacServer(realDatabaseUrl ? 'postgres' : 'embedded', { MM_WEBHOOK_ALLOW_PRIVATE: '1' });
    // A loaded machine may take long to start an agent: 90 s.
    boards.push(...(await Promise.all(['r1', 'r2'].map((name) => startBoard(server, name, {}, 90_000)))));
    for (const b of boards) await label(b, { 'sim/noise': '0.02' });
    invocationId = await newInvocation(server, 'repeats', 0);
  });
  afterAll(async () => {
    await Promise.all(boards.map((b) => stopBoard(b)));
    await server?.stop();
    await rx?.close();
    await cli?.cleanup();
  });

  it('refuses repeats out of range', async () => {
    for (const body of [{ repeat: 0 }, { repeat: 101 }, { warmup: 21 }, { repeat: 1.5 }]) {
      const res = await post(server, `/api/invocations/${invocationId}/execute/`, { board_id: boards[0]!.id, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const rollout = await post(server, '/api/rollouts/', { kind: 'pac_activate', board_selector: {}, params: { pac: 'x' }, repeat: 3 });
    expect(rollout.status).toBe(400);
  });

  it('an execute rollout with repeat and warmup keeps each counted run, its summary and its context', async () => {
    const created = await createRollout(server, { kind: 'execute', board_selector: {}, invocation_id: invocationId, repeat: 6, warmup: 1 });
    const done = await waitForRollout(server, created.id, (r) => r.finished_at !== null, 180_000);
    expect(done.status).toBe('succeeded');
    baselineOps = await Promise.all(done.boards.map(async (b) => (await json(await server.api(`/api/operations/${b.operation_id}/`))) as Op));
    for (const op of baselineOps) {
      const { result } = op;
      expect(result.runs).toHaveLength(6);
      expect(result.warmup_runs).toBe(1);
      // Noisy fps: the runs differ, and each has run_ms and latency_ms.
      expect(new Set(result.runs.map((r) => r.fps)).size).toBeGreaterThan(1);
      for (const r of result.runs) expect(Object.keys(r)).toEqual(expect.arrayContaining(['fps', 'latency_ms', 'run_ms']));
      const fps = result.runs.map((r) => r.fps!).sort((a, b) => a - b);
      expect(result.summary.fps).toMatchObject({ n: 6, median: (fps[2]! + fps[3]!) / 2 });
      // n = 6: the interval of the median is the 1st and 6th order statistics (96.9 %).
      expect(result.summary.fps!.ci95).toEqual([fps[0], fps[5]]);
      expect(result.summary.fps!.q1).toBeLessThanOrEqual(result.summary.fps!.median);
      expect(result.metrics.fps).toBeCloseTo(result.summary.fps!.median, 5);
      expect(result.context).toMatchObject({ board_id: op.board_id, runner_version: expect.stringMatching(/^simulated /), agent_version: expect.any(String) });
      expect(Object.keys(result.context).sort()).toEqual(
        ['active_pac', 'agent_version', 'app', 'board_id', 'board_model', 'dpu_fingerprint', 'dpu_mhz', 'files', 'runner_version', 'start_temperature_c'].sort(),
      );
      expect(result.context.files.parameter).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it('saves those runs as a named baseline', async () => {
    const res = await post(server, '/api/baselines/', { name: 'repeats-v1', operation_ids: baselineOps.map((o) => o.id) });
    const baseline = await json(res);
    expect(res.status, JSON.stringify(baseline)).toBe(201);
    expect(baseline).toMatchObject({ name: 'repeats-v1', invocation_id: invocationId });
    expect(baseline.runs).toHaveLength(12);
    expect(Object.keys(baseline.summary_by_board).sort()).toEqual(boards.map((b) => b.id).sort());
    expect(baseline.summary_by_board[boards[0]!.id].fps.n).toBe(6);

    expect((await post(server, '/api/baselines/', { name: 'repeats-v1', operation_ids: [baselineOps[0]!.id] })).status).toBe(409);
    expect((await post(server, '/api/baselines/', { name: 'other', operation_ids: [999_999] })).status).toBe(404);
    expect((await post(server, '/api/baselines/', { name: 'other', operation_ids: [] })).status).toBe(400);
    expect((await json(await server.api('/api/baselines/'))).total).toBe(1);
    expect((await json(await server.api('/api/baselines/repeats-v1/'))).id).toBe(baseline.id);
    expect((await json(await server.api(`/api/baselines/${baseline.id}/`))).name).toBe('repeats-v1');
    expect((await server.api('/api/baselines/nope/')).status).toBe(404);
  });

  it('A/A: the same invocation run again is not a regression', async () => {
    const ops = await Promise.all(boards.map((b) => execute(b, { repeat: 6 })));
    const c = await compare({ baseline: 'repeats-v1', operation_ids: ops.map((o) => o.id) });
    // The simulated board's figures come from its noise model (sim/noise): they must stay quiet.
    // run_ms, temperature and power are the host's wall time and the simulated sensors, which
    // move with this machine's load between the baseline's runs and these: not asserted here
    // (bench/results-noise.ts measures the false-regression rate of the model itself).
    for (const metric of ['fps', 'latency_ms']) expect(c.metrics.find((m) => m.metric === metric)?.verdict, metric).not.toBe('regressed');
    // fps, latency_ms and run_ms; max_temperature_c and mean_power_w where the board measures them.
    expect(c.metrics.map((m) => m.metric)).toEqual(expect.arrayContaining(['fps', 'latency_ms', 'run_ms']));
    const fps = c.metrics.find((m) => m.metric === 'fps')!;
    expect(fps.better).toBe('higher');
    expect(fps.boards.map((b) => b.baseline_from)).toEqual(['board', 'board']);
    expect(c.differs).not.toHaveProperty('files.parameter');
  });

  it('a 10 % slower board pair is a regression on both boards, told to a webhook, and what differs is named', async () => {
    const hook = await post(server, '/api/webhooks/', { url: rx.url('/results'), events: ['regression.detected'] });
    expect(hook.status).toBe(201);
    for (const b of boards) await label(b, { 'sim/noise': '0.02', 'sim/speed': '0.9' });
    // Another parameter file too: the comparison names it.
    expect((await upload(server.url, invocationId, 'parameter', 'p.json', Buffer.from(JSON.stringify({ duration_s: 0, note: 'v2' })))).status).toBe(201);
    const ops = await Promise.all(boards.map((b) => execute(b, { repeat: 6 })));
    slowOps = ops;
    const c = await compare({ baseline: 'repeats-v1', operation_ids: ops.map((o) => o.id) });
    expect(c.verdict).toBe('regressed');
    const fps = c.metrics.find((m) => m.metric === 'fps')!;
    expect(fps.verdict).toBe('regressed');
    for (const b of fps.boards) {
      expect(b.verdict).toBe('regressed');
      expect(b.change_pct).toBeLessThan(-5);
      expect(b.ci95_pct[1]).toBeLessThan(0);
    }
    expect(c.metrics.find((m) => m.metric === 'latency_ms')!.verdict).toBe('regressed');
    expect(Object.keys(c.differs)).toContain('files.parameter');

    const [delivery] = await rx.waitFor('/results', 1, 60_000);
    const body = JSON.parse(delivery!.body) as { type: string; data: { baseline: string; summary: string; regressed: Array<{ metric: string }> } };
    expect(body.type).toBe('regression.detected');
    expect(body.data.baseline).toBe('repeats-v1');
    expect(body.data.regressed.map((r) => r.metric)).toContain('fps');
    // The same comparison again tells nothing new.
    await compare({ baseline: 'repeats-v1', operation_ids: ops.map((o) => o.id) });
    await new Promise((r) => setTimeout(r, 1000));
    expect(rx.received.filter((r) => r.path === '/results')).toHaveLength(1);
  });

  it('mm compare prints the table and what differs, and --json the comparison', async () => {
    cli = await cliHome();
    const env = { MM_SERVER_URL: server.url };
    const ids = slowOps.map((o) => String(o.id));
    const r = await cli.run(['compare', ...ids, '--baseline', 'repeats-v1'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Against baseline repeats-v1: REGRESSED');
    expect(r.stdout).toMatch(/Frames per second .* ✗ regressed/);
    expect(r.stdout).toContain('files.parameter');
    const asJson = JSON.parse((await cli.run(['compare', ...ids, '--baseline', 'repeats-v1', '--threshold', 'fps=50', '--json'], env)).stdout);
    expect(asJson.metrics.find((m: { metric: string }) => m.metric === 'fps').verdict).toBe('unchanged');
    const usage = await cli.run(['compare', 'x', '--baseline', 'repeats-v1'], env);
    expect(usage.code).toBe(2);
    const missing = await cli.run(['compare', ids[0]!, '--baseline', 'nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('baseline');
  });

  it('a threshold larger than the drop makes it unchanged; bad requests are refused', async () => {
    const list = await json(await server.api(`/api/operations/?invocation_id=${invocationId}&limit=2`));
    const ids = (list.operations as Array<{ id: number }>).map((o) => o.id);
    const bad = [
      { baseline: 'repeats-v1' },
      { baseline: 'repeats-v1', operation_ids: ids, rollout_id: 1 },
      { baseline: 'repeats-v1', operation_ids: ids, thresholds: { fps: -1 } },
    ];
    for (const body of bad) expect((await post(server, '/api/comparisons/', body)).status, JSON.stringify(body)).toBe(400);
    expect((await post(server, '/api/comparisons/', { baseline: 'nope', operation_ids: ids })).status).toBe(404);
    expect((await server.api('/api/baselines/repeats-v1/', { method: 'DELETE' })).status).toBe(204);
    expect((await server.api('/api/baselines/repeats-v1/')).status).toBe(404);
  });
});
