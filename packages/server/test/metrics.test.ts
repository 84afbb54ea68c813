import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKinds } from '../../../test/support/databases.ts';
import { json } from '../../../test/support/http.ts';
import { find, parsePrometheus, value, type Scrape } from '../../../test/support/prometheus.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { FakeAgent } from './support/fake-agent.ts';

const TOKEN = 'metrics-test-token';
/** Debian's `prometheus` package: the test of the scrape against promtool runs where it is installed. */
const PROMTOOL = '/usr/bin/promtool';
const auth = { authorization: `Bearer ${TOKEN}` };

describe.each(dbKinds)('GET /api/metrics/ (%s database)', (kind) => {
  let server: TestServer;
  const api = (p: string, init: RequestInit = {}) => server.api(p, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
  const postJson = (p: string, body: unknown) => api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const scrape = async (): Promise<Scrape> => {
    const res = await api('/api/metrics/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await res.text());
  };

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: TOKEN, MM_REPLICA_ID: 'replica-a' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.skipIf(!fs.existsSync(PROMTOOL))('passes `promtool check metrics` (no lint problems either)', async () => {
    // Some traffic first, so that the labelled families have samples.
    await api('/api/invocations/');
    await api('/api/no-such-route/');
    const res = await api('/api/metrics/');
    const text = await res.text();
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${checked.stdout}${checked.stderr}`.trim()).toBe('');
    expect(checked.status).toBe(0);
  });

  it('needs the token when auth is on', async () => {
    const res = await server.api('/api/metrics/');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect((await json(res)).code).toBe('unauthorized');
  });

  it('counts requests by route pattern and status, never by raw path', async () => {
    const before = await scrape();
    const route = '/api/invocations/:id/';
    const count = (s: Scrape, status: string) =>
      value(s, 'mm_http_request_duration_seconds_count', { method: 'GET', route, status });
    const created = await postJson('/api/invocations/create/', { name: 'metrics', description: '' });
    expect(created.status).toBe(201);
    const id = (await json(created)).id as number;
    expect((await api(`/api/invocations/${id}/`)).status).toBe(200);
    expect((await api(`/api/invocations/${id}`)).status).toBe(200);
    expect((await api('/api/invocations/999999/')).status).toBe(404);
    expect((await api('/api/invocations/888888/')).status).toBe(404);
    // Refused by auth: still labelled with the route it asked for.
    expect((await server.api(`/api/invocations/${id}/`)).status).toBe(401);
    const junk = await api('/api/no-such-thing/abc-123/');
    expect(junk.status).toBe(404);

    const after = await scrape();
    expect(after.types.get('mm_http_request_duration_seconds')).toBe('histogram');
    expect(count(after, '200') - count(before, '200')).toBe(2);
    expect(count(after, '404') - count(before, '404')).toBe(2);
    expect(count(after, '401') - count(before, '401')).toBe(1);
    expect(value(after, 'mm_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    // Durations are observed: the sum grows, and +Inf holds every observation.
    expect(value(after, 'mm_http_request_duration_seconds_sum', { route, status: '200' })).toBeGreaterThan(0);
    expect(value(after, 'mm_http_request_duration_seconds_bucket', { route, status: '200', method: 'GET', le: '+Inf' })).toBe(count(after, '200'));
    // No label holds a raw path: ids and junk never become series.
    const routes = new Set(find(after, 'mm_http_request_duration_seconds_count').map((s) => s.labels.route));
    for (const r of routes) expect(r).not.toMatch(/\/\d+\/|no-such-thing/);
    expect(routes).toContain('/api/invocations/create/');
    expect(routes).toContain('/api/metrics/');
  });

  it('has the process metrics, event-loop delay and the replica label', async () => {
    const s = await scrape();
    expect(find(s, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(find(s, 'nodejs_eventloop_lag_p99_seconds')).toHaveLength(1);
    expect(find(s, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    for (const sample of s.samples) expect(sample.labels.replica).toBe('replica-a');
  });

  it('shows boards online, bytes over agent links, operations by kind and status, and SSE clients', async () => {
    const before = await scrape();
    expect(value(before, 'mm_boards_online')).toBe(0);
    expect(value(before, 'mm_sse_clients')).toBe(0);

    const boardRes = await postJson('/api/boards/', { name: 'metrics-board' });
    expect(boardRes.status).toBe(201);
    const board = (await json(boardRes)) as { id: string; token: string };
    const agent = await FakeAgent.online(server.url, board.token);
    try {
      const online = await scrape();
      expect(value(online, 'mm_boards_online')).toBe(1);
      const received = value(online, 'mm_agent_link_bytes_total', { direction: 'received' });
      const sent = value(online, 'mm_agent_link_bytes_total', { direction: 'sent' });
      // At least the upgrade request and hello in, the 101 and welcome out.
      expect(received).toBeGreaterThan(100);
      expect(sent).toBeGreaterThan(100);

      const inv = (await json(await postJson('/api/invocations/create/', { name: 'metrics-run', description: '' }))).id as number;
      const failing = postJson(`/api/invocations/${inv}/execute/`, { board_id: board.id });
      const start = await agent.next('op.start');
      // An SSE client of the running operation.
      const events = await api(`/api/operations/${start.op_id}/events/`);
      expect(events.status).toBe(200);
      expect(value(await scrape(), 'mm_sse_clients')).toBe(1);
      await agent.report(agent.outcome(start.op_id, 'failed', { error: { code: 'runner_failed', message: 'exit status 3' }, result: { exit_code: 3 } }));
      expect((await failing).status).toBe(502);
      await events.text(); // the stream ends with the operation

      // The ended stream's client goes when its connection has closed.
      await expect.poll(async () => value(await scrape(), 'mm_sse_clients'), { timeout: 10_000 }).toBe(0);
      const after = await scrape();
      expect(value(after, 'mm_operations_total', { kind: 'execute', status: 'failed' }) - value(before, 'mm_operations_total', { kind: 'execute', status: 'failed' })).toBe(1);
      expect(value(after, 'mm_agent_link_bytes_total', { direction: 'received' })).toBeGreaterThan(received);
      expect(value(after, 'mm_agent_link_bytes_total', { direction: 'sent' })).toBeGreaterThan(sent);
    } finally {
      await agent.close();
    }
    // The link's bytes stay counted after it closed.
    await expect.poll(async () => value(await scrape(), 'mm_boards_online'), { timeout: 10_000 }).toBe(0);
    const closed = await scrape();
    expect(value(closed, 'mm_agent_link_bytes_total', { direction: 'received' })).toBeGreaterThan(100);
  });
  it('counts the file streams over agent links: file bytes and the bytes on the wire for them', async () => {
    const board = (await json(await postJson('/api/boards/', { name: 'stream-bytes-board' }))) as { id: string; token: string };
    const agent = await FakeAgent.online(server.url, board.token);
    try {
      const inv = (await json(await postJson('/api/invocations/create/', { name: 'stream-bytes', description: '' }))).id as number;
      const data = Buffer.alloc(3 * 1024 * 1024 + 17, 'weights ');
      const form = new FormData();
      form.set('file_type', 'weights');
      form.set('file', new Blob([data]), 'w.bin');
      expect((await api(`/api/invocations/${inv}/upload/`, { method: 'POST', body: form })).status).toBe(201);
      const before = await scrape();
      const at = (s: Scrape, measure: string) => value(s, 'mm_agent_link_stream_bytes_total', { direction: 'sent', measure });
      const transfer = api(`/api/invocations/${inv}/transfer/`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, body: JSON.stringify({ board_id: board.id }) });
      expect((await transfer).status).toBe(202);
      const start = await agent.next('op.start');
      const pulled = await agent.pullContent(start.files[0]!.sha256);
      expect(pulled.data.equals(data)).toBe(true);
      await expect.poll(async () => at(await scrape(), 'file') - at(before, 'file'), { timeout: 10_000 }).toBe(data.length);
      const after = await scrape();
      const wire = at(after, 'wire') - at(before, 'wire');
      expect(wire).toBeGreaterThan(0);
      expect(wire).toBeLessThanOrEqual(data.length);
      await agent.report(agent.outcome(start.op_id, 'succeeded', { result: {} }));
    } finally {
      await agent.close();
    }
  });
});
