/**
 * End to end: the real control plane and a real `mm-agent --simulate` as processes, with a
 * short MM_TELEMETRY_INTERVAL_S: the board's telemetry arrives over the link, is kept and
 * served, and an execute's result carries what the board measured during the run.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { find, parsePrometheus } from '../support/prometheus.ts';
import { eventually, serverCluster, startAgent, type AgentProcess, type ServerCluster } from '../support/processes.ts';

interface Sample {
  at: string;
  temperatures_c: Record<string, number>;
  power_w?: number;
  memory_used_bytes: number;
  load_1m: number;
  disk_free_bytes: number;
}

// One database kind is enough here (the store is covered on both by packages/server/test/board-telemetry.test.ts).
const kind = dbKinds[dbKinds.length - 1]!;

describe(`board telemetry, end to end (${kind} database)`, () => {
  let cluster: ServerCluster;
  let agent: AgentProcess;
  let scratch: string;
  let board: { id: string; token: string };
  const api = (p: string, init?: RequestInit) => cluster.current().api(p, init);

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-telemetry-'));
    cluster = await serverCluster(kind);
    const { url } = await cluster.start();
    const res = await api('/api/boards/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'telemetry-e2e' }) });
    expect(res.status).toBe(201);
    board = await json(res);
    agent = await startAgent({ serverUrl: url, token: board.token, agentDir: path.join(scratch, 'agent'), env: { MM_TELEMETRY_INTERVAL_S: '0.5' } });
  });

  afterAll(async () => {
    await agent?.stop();
    await cluster?.cleanup();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('sets the board telemetry with plausible simulated readings, and serves the samples', async () => {
    const t = await eventually(async () => {
      const b = await json(await api(`/api/boards/${board.id}/`));
      expect(b.telemetry).not.toBeNull();
      return b.telemetry as Sample;
    }, 60_000);
    expect(Object.keys(t.temperatures_c).sort()).toEqual(['ams.pl_temp', 'ams.ps_temp']);
    for (const c of Object.values(t.temperatures_c)) expect(c).toBeGreaterThan(40), expect(c).toBeLessThan(80);
    expect(t.power_w).toBeGreaterThan(5);
    expect(t.power_w).toBeLessThan(13);
    expect(t.memory_used_bytes).toBeGreaterThan(0);
    expect(t.disk_free_bytes).toBeGreaterThan(0);
    expect(t.load_1m).toBeGreaterThanOrEqual(0);
    // The simulated board's own memory and load, never the host's (issue 39: 4.7 GB used on a
    // 3.8 GB KV260, load 26): within its memory and its cores.
    const facts = (await json(await api(`/api/boards/${board.id}/`))).facts as { memory_bytes: number; cpu_count: number };
    expect(t.memory_used_bytes).toBeLessThan(facts.memory_bytes);
    expect(t.memory_used_bytes).toBeGreaterThan(facts.memory_bytes * 0.1);
    expect(t.load_1m).toBeLessThanOrEqual(facts.cpu_count);
    // Several samples a minute arrive; the history keeps the first of the minute.
    const { samples } = await json(await api(`/api/boards/${board.id}/telemetry/`));
    expect(samples.length).toBeGreaterThanOrEqual(1);
    expect(samples.length).toBeLessThanOrEqual(2);
    expect(Object.keys((samples[0] as Sample).temperatures_c)).toContain('ams.ps_temp');
    // It keeps changing (the latest is replaced every interval).
    await eventually(async () => expect((await json(await api(`/api/boards/${board.id}/`))).telemetry.at).not.toBe(t.at), 30_000);

    const scrape = parsePrometheus(await (await api('/api/metrics/')).text());
    expect(find(scrape, 'mm_board_temperature_celsius', { board: board.id })).toHaveLength(2);
    expect(find(scrape, 'mm_board_power_watts', { board: board.id })).toHaveLength(1);
  });

  it("puts the run's peak temperature and mean power into the execute's result.metrics", async () => {
    const created = await api('/api/invocations/create/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'warm-up', description: 'e2e' }) });
    expect(created.status).toBe(201);
    const inv = (await json(created)).id as number;
    const form = new FormData();
    form.set('file_type', 'parameter');
    form.set('file', new Blob([JSON.stringify({ duration_s: 4 })]), 'params.json');
    expect((await api(`/api/invocations/${inv}/upload/`, { method: 'POST', body: form })).status).toBe(201);
    const idle = (await json(await api(`/api/boards/${board.id}/`))).telemetry as Sample;

    const res = await api(`/api/invocations/${inv}/execute/`, { method: 'POST' });
    expect(res.status).toBe(200);
    const op = await json(res);
    expect(op.status).toBe('succeeded');
    const metrics = op.result.metrics as Record<string, number>;
    expect(Object.keys(metrics)).toEqual(expect.arrayContaining(['max_temperature_c', 'mean_power_w']));
    // The simulated board warms up while it runs and draws ~11 W.
    expect(metrics.max_temperature_c).toBeGreaterThan(Math.max(...Object.values(idle.temperatures_c)));
    expect(metrics.mean_power_w).toBeGreaterThan(9);
    expect(metrics.mean_power_w).toBeLessThan(13);
  });
});
