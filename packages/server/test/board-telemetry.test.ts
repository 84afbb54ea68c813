import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkFeature } from '@mm/protocol';
import { boardTelemetry } from '../src/db/schema.ts';
import { recordTelemetry, TELEMETRY_KEEP_MS } from '../src/telemetry/telemetry-store.ts';
import { createScratchDatabase, dbKinds, skipWithoutRealDatabase } from '../../../test/support/databases.ts';
import { eventually } from '../../../test/support/eventually.ts';
import { json } from '../../../test/support/http.ts';
import { find, parsePrometheus } from '../../../test/support/prometheus.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { registerBoard } from './support/boards.ts';
import { FakeAgent } from './support/fake-agent.ts';

const PROMTOOL = '/usr/bin/promtool';
const MINUTE = 60_000;

const reading = (ps: number, extra: Record<string, unknown> = {}) => ({
  temperatures_c: { 'ams.ps_temp': ps, 'ams.pl_temp': ps + 4 },
  power_w: 7.25,
  memory_used_bytes: 800_000_000,
  load_1m: 0.5,
  disk_free_bytes: 20_000_000_000,
  ...extra,
});

const sample = (at: Date, ps: number) => ({ at: at.toISOString(), ...reading(ps) });

describe.each(dbKinds)('board telemetry on the server (%s database)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { MM_REPLICA_ID: 'replica-t' });
  });
  afterAll(async () => {
    await server?.stop();
  });
  const board = async (id: string) => json(await server.api(`/api/boards/${id}/`));
  const samples = async (id: string, query = '') => {
    const res = await server.api(`/api/boards/${id}/telemetry/${query}`);
    expect(res.status).toBe(200);
    return (await json(res)).samples as Array<Record<string, unknown> & { at: string; temperatures_c: Record<string, number> }>;
  };

  it('names the feature in welcome, keeps the latest sample on the board, stamps it, and serves it as a sample of its minute', async () => {
    const b = await registerBoard(server, 'telemetry-1');
    expect((await board(b.id)).telemetry).toBeNull();
    const agent = await FakeAgent.connect(server.url, b.token);
    const welcome = await agent.hello();
    expect(welcome.features).toContain(LinkFeature.boardTelemetry);
    const before = Date.now();
    agent.send({ type: 'board.telemetry', reading: reading(48.5) });
    const latest = await eventually(async () => {
      const t = (await board(b.id)).telemetry;
      expect(t).not.toBeNull();
      return t as Record<string, unknown> & { at: string };
    });
    expect(latest).toMatchObject(reading(48.5));
    expect(Date.parse(latest.at)).toBeGreaterThanOrEqual(before - 5);
    const got = await samples(b.id);
    expect(got).toHaveLength(1);
    expect(got[0]).toEqual(latest);

    // Another sample within 1 s of the last one is dropped; one later is taken.
    agent.send({ type: 'board.telemetry', reading: reading(60) });
    await new Promise((r) => setTimeout(r, 1100));
    expect((await board(b.id)).telemetry.temperatures_c['ams.ps_temp']).toBe(48.5);
    agent.send({ type: 'board.telemetry', reading: reading(49.5) });
    await eventually(async () => expect((await board(b.id)).telemetry.temperatures_c['ams.ps_temp']).toBe(49.5));
    await agent.close();
  });

  it('answers a malformed reading with an error and changes nothing', async () => {
    const b = await registerBoard(server, 'telemetry-bad');
    const agent = await FakeAgent.online(server.url, b.token);
    agent.send({ type: 'board.telemetry', reading: reading(48, { temperatures_c: { 'ams.ps_temp': 1e9 } }) });
    const error = await agent.next('error');
    expect(error).toMatchObject({ code: 'malformed_message', ref_type: 'board.telemetry' });
    agent.send({ type: 'board.telemetry', reading: reading(48, { temperatures_c: { 'Bad Name!': 40 } }) });
    await agent.next('error', (e) => e.ref_type === 'board.telemetry');
    expect((await board(b.id)).telemetry).toBeNull();
    expect(await samples(b.id)).toEqual([]);
    await agent.close();
  });

  it('keeps the first sample of each minute, answers from `since`, and never older than 24 h', async () => {
    const b = await registerBoard(server, 'telemetry-minutes');
    const { db } = server.ctx.database;
    const base = Math.floor((Date.now() - 3 * 60 * MINUTE) / MINUTE) * MINUTE; // three hours ago, on a minute
    // Three samples in one minute, one in the next; then one 30 h old (inserted straight in).
    await recordTelemetry(db, b.id, sample(new Date(base + 5_000), 40));
    await recordTelemetry(db, b.id, sample(new Date(base + 35_000), 41));
    await recordTelemetry(db, b.id, sample(new Date(base + 55_000), 42));
    await recordTelemetry(db, b.id, sample(new Date(base + MINUTE + 1_000), 43));
    const old = new Date(Date.now() - 30 * 60 * MINUTE);
    await db.insert(boardTelemetry).values({ boardId: b.id, minute: old, sample: sample(old, 30) });

    const all = await samples(b.id);
    expect(all.map((s) => s.temperatures_c['ams.ps_temp'])).toEqual([40, 43]);
    // The board's latest is the last one recorded.
    expect((await board(b.id)).telemetry.temperatures_c['ams.ps_temp']).toBe(43);
    const since = new Date(base + MINUTE).toISOString();
    expect((await samples(b.id, `?since=${encodeURIComponent(since)}`)).map((s) => s.temperatures_c['ams.ps_temp'])).toEqual([43]);
    // A `since` inside a minute after its sample was taken leaves that sample out (its own time
    // decides, not its minute): a client polling with the last time it saw plus 1 ms gets nothing new.
    const justAfter = new Date(base + MINUTE + 1_001).toISOString();
    expect(await samples(b.id, `?since=${encodeURIComponent(justAfter)}`)).toEqual([]);
    const atIt = new Date(base + MINUTE + 1_000).toISOString();
    expect((await samples(b.id, `?since=${encodeURIComponent(atIt)}`)).map((s) => s.temperatures_c['ams.ps_temp'])).toEqual([43]);
    const midFirst = new Date(base + 6_000).toISOString();
    expect((await samples(b.id, `?since=${encodeURIComponent(midFirst)}`)).map((s) => s.temperatures_c['ams.ps_temp'])).toEqual([43]);
    // A `since` further back than 24 h still answers 24 h.
    const longAgo = new Date(Date.now() - 48 * 60 * MINUTE).toISOString();
    expect(await samples(b.id, `?since=${encodeURIComponent(longAgo)}`)).toHaveLength(2);
  });

  it('prunes samples older than 24 h in the retention run, and keeps the others', async () => {
    const b = await registerBoard(server, 'telemetry-prune');
    const { db } = server.ctx.database;
    const now = Date.now();
    // 700 old minutes (more than one batch) and 3 recent ones.
    await db.execute(
      sql`insert into board_telemetry (board_id, minute, sample)
          select ${b.id}::uuid, ${new Date(now - TELEMETRY_KEEP_MS - 60 * MINUTE).toISOString()}::timestamptz - g * interval '1 minute', '{}'::jsonb
          from generate_series(0, 699) as g`,
    );
    for (let i = 1; i <= 3; i++) await db.insert(boardTelemetry).values({ boardId: b.id, minute: new Date(now - i * MINUTE), sample: sample(new Date(now - i * MINUTE), 45) });
    const counts = await server.ctx.retention.runOnce(new Date(now));
    expect(counts.board_telemetry).toBeGreaterThanOrEqual(700);
    const left = await db.select({ minute: boardTelemetry.minute }).from(boardTelemetry).where(eq(boardTelemetry.boardId, b.id));
    expect(left).toHaveLength(3);
  });

  it('says 404 for an unknown board and 400 for a bad `since`', async () => {
    const missing = await server.api('/api/boards/00000000-0000-4000-8000-000000000000/telemetry/');
    expect(missing.status).toBe(404);
    expect((await json(missing)).code).toBe('board_not_found');
    const b = await registerBoard(server, 'telemetry-400');
    const bad = await server.api(`/api/boards/${b.id}/telemetry/?since=yesterday`);
    expect(bad.status).toBe(400);
    expect((await json(bad)).code).toBe('validation_failed');
  });

  it('exports the gauges of the boards linked here, and drops a board once its link closed', async () => {
    const b = await registerBoard(server, 'telemetry-metrics');
    const agent = await FakeAgent.online(server.url, b.token);
    agent.send({ type: 'board.telemetry', reading: reading(51.25) });
    const scrape = async () => parsePrometheus(await (await server.api('/api/metrics/')).text());
    await eventually(async () => {
      const s = await scrape();
      expect(find(s, 'mm_board_temperature_celsius', { board: b.id, sensor: 'ams.ps_temp' }).map((x) => x.value)).toEqual([51.25]);
      expect(find(s, 'mm_board_temperature_celsius', { board: b.id, sensor: 'ams.pl_temp' }).map((x) => x.value)).toEqual([55.25]);
      expect(find(s, 'mm_board_power_watts', { board: b.id }).map((x) => [x.value, x.labels.replica])).toEqual([[7.25, 'replica-t']]);
      expect(s.types.get('mm_board_temperature_celsius')).toBe('gauge');
    });
    if (fs.existsSync(PROMTOOL)) {
      const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: await (await server.api('/api/metrics/')).text(), encoding: 'utf8' });
      expect(`${checked.stdout}${checked.stderr}`.trim()).toBe('');
    }
    await agent.close();
    await eventually(async () => expect(find(await scrape(), 'mm_board_temperature_celsius', { board: b.id })).toEqual([]));
  });
});

describe.skipIf(skipWithoutRealDatabase('board telemetry on two replicas'))('board telemetry with two replicas on one PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
    one = await startTestServer('postgres', { MM_REPLICA_ID: 'replica-one' }, { scratchDatabase: scratch, keep: true });
    two = await startTestServer('postgres', { MM_REPLICA_ID: 'replica-two' }, { scratchDatabase: scratch, keep: true });
  });
  afterAll(async () => {
    await two?.stop();
    await one?.stop();
    await scratch?.drop();
    for (const s of [one, two]) if (s) await fsp.rm(s.dataDir, { recursive: true, force: true });
  });

  it('each replica exports the gauges of the boards linked to it, and either serves every board\'s telemetry', async () => {
    const a = await registerBoard(one, 'on-one');
    const b = await registerBoard(one, 'on-two');
    const agentA = await FakeAgent.online(one.url, a.token);
    const agentB = await FakeAgent.online(two.url, b.token);
    agentA.send({ type: 'board.telemetry', reading: reading(44) });
    agentB.send({ type: 'board.telemetry', reading: reading(54) });
    const boardsOf = async (server: TestServer) =>
      find(parsePrometheus(await (await server.api('/api/metrics/')).text()), 'mm_board_temperature_celsius', { sensor: 'ams.ps_temp' }).map((s) => [s.labels.board, s.value, s.labels.replica]);
    await eventually(async () => {
      expect(await boardsOf(one)).toEqual([[a.id, 44, 'replica-one']]);
      expect(await boardsOf(two)).toEqual([[b.id, 54, 'replica-two']]);
    });
    // The stored sample is the same whichever replica is asked.
    for (const server of [one, two]) {
      expect((await json(await server.api(`/api/boards/${b.id}/`))).telemetry.temperatures_c['ams.ps_temp']).toBe(54);
      expect(await json(await server.api(`/api/boards/${a.id}/telemetry/`))).toMatchObject({ samples: [{ temperatures_c: { 'ams.ps_temp': 44 } }] });
    }
    await agentA.close();
    await agentB.close();
  });
});
