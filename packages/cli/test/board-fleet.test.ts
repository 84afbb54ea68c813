/**
 * `mm boards label|maintenance|show` and `mm run --label` against a stand-in that answers
 * the fleet part of the HTTP contract (docs/api.md, "Fleets": `PATCH /api/boards/<id>/`,
 * `board_selector`): what the client sends, and what it prints. The real server's side of
 * these is the scheduler's; the e2e test (test/e2e/cli-fleet.test.ts) runs the rest for real.
 */
import type http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { standInServer, type StandIn } from '../../../test/support/stand-in-server.ts';

const ID = '6f1c2a50-0000-4000-8000-00000000aaaa';
const OTHER = '6f1c2a50-0000-4000-8000-00000000bbbb';

function boardObject(id: string, name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    id,
    name,
    status: 'online',
    busy: false,
    last_seen_at: '2026-11-27T04:00:00.000Z',
    connected_at: '2026-11-27T03:00:00.000Z',
    agent_version: '0.1.0',
    hostname: 'kria',
    platform: 'linux',
    boot_id: 'b',
    active_pac: null,
    labels,
    facts: { board_model: 'Kria KV260 Vision AI Starter Kit', arch: 'arm64', memory_bytes: 4118261760, cpu_count: 4 },
    ...extra,
  };
}

describe('mm boards label / maintenance / show, mm run --label (against the contract)', () => {
  let cli: CliHome;
  let api: StandIn;
  let patches: Array<{ id: string; body: Record<string, unknown> }>;
  let executes: Array<Record<string, unknown>>;
  let board: ReturnType<typeof boardObject>;

  const read = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let s = '';
      req.on('data', (d: Buffer) => (s += d));
      req.on('end', () => resolve(s));
    });
  const send = (res: http.ServerResponse, status: number, body: unknown, type = 'application/json') => res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));

  beforeAll(async () => {
    cli = await cliHome();
    api = await standInServer((req, res) => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const other = boardObject(OTHER, 'zcu-1', { 'mm/board-model': 'zcu104' });
        if (req.method === 'GET' && url.pathname === '/api/boards/') return send(res, 200, { boards: [board, other], total: 2 });
        if (req.method === 'GET' && url.pathname === `/api/boards/${ID}/`) return send(res, 200, board);
        if (req.method === 'PATCH' && url.pathname === `/api/boards/${ID}/`) {
          const body = JSON.parse(await read(req)) as { labels?: Record<string, string>; maintenance?: boolean };
          patches.push({ id: ID, body });
          if (body.labels) board = { ...board, labels: { ...Object.fromEntries(Object.entries(board.labels).filter(([k]) => k.startsWith('mm/'))), ...body.labels } };
          if (body.maintenance !== undefined) board = { ...board, maintenance: body.maintenance } as typeof board;
          return send(res, 200, board);
        }
        if (req.method === 'POST' && url.pathname === '/api/invocations/create/') return send(res, 201, { id: 5, name: 'sel', description: '', created_at: '2026-11-27T04:00:00.000Z', files: {} });
        if (req.method === 'POST' && url.pathname === '/api/invocations/5/execute/') {
          executes.push(JSON.parse(await read(req)) as Record<string, unknown>);
          return send(res, 400, { type: 'about:blank', title: 'No board matches', status: 400, code: 'no_matching_board', detail: 'No registered board matches {"camera":"yes"}.' }, 'application/problem+json');
        }
        send(res, 404, { type: 'about:blank', title: 'Not found', status: 404, code: 'not_found' }, 'application/problem+json');
      })();
    });
  }, 120_000);
  beforeEach(() => {
    patches = [];
    executes = [];
    board = boardObject(ID, 'kv-1', { site: 'lab', rack: 'a', 'mm/board-model': 'kv260', 'mm/arch': 'arm64' }, { health: 'bad', health_reason: 'fps 12 below 25', health_checked_at: '2026-11-27T04:01:00.000Z', maintenance: false, queued: 2 });
  });
  afterAll(async () => {
    await cli?.cleanup();
    await api?.close();
  });

  const mm = (...args: string[]) => cli.run([...args, '--server', api.url]);

  it('label: by name, sets and removes people\'s labels and PATCHes the whole map, never the mm/ ones', async () => {
    const r = await mm('boards', 'label', 'kv-1', 'camera=yes', 'rack=b', '--remove', 'site');
    expect(r.code, r.stderr).toBe(0);
    expect(patches).toEqual([{ id: ID, body: { labels: { rack: 'b', camera: 'yes' } } }]);
    expect(r.stdout).toContain('Board kv-1: camera=yes, mm/arch=arm64, mm/board-model=kv260, rack=b');
  }, 60_000);

  it('label: bad input is a usage error (exit 2) and sends nothing', async () => {
    for (const [args, message] of [
      [['boards', 'label', 'kv-1'], /Give labels to set/],
      [['boards', 'label', 'kv-1', 'novalue'], /A label is key=value/],
      [['boards', 'label', 'kv-1', 'mm/arch=x86'], /mm\/arch: labels under mm\/ are the agent's own/],
      [['boards', 'label', 'kv-1', '--remove', 'nothere'], /has no label "nothere"/],
      [['boards', 'label', 'nobody', 'a=b'], /No board is named "nobody"/],
    ] as const) {
      const r = await mm(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(patches).toEqual([]);
  }, 60_000);

  it('maintenance on|off', async () => {
    const on = await mm('boards', 'maintenance', 'kv-1', 'on');
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toContain('Board kv-1: maintenance on.');
    const off = await mm('boards', 'maintenance', ID, 'off', '--json');
    expect(JSON.parse(off.stdout)).toMatchObject({ id: ID, maintenance: false });
    expect(patches.map((p) => p.body)).toEqual([{ maintenance: true }, { maintenance: false }]);
    const bad = await mm('boards', 'maintenance', 'kv-1', 'maybe');
    expect(bad.code).toBe(2);
    expect(patches).toHaveLength(2);
  }, 60_000);

  it('show: health with its reason, maintenance, queue, labels apart from mm/ ones, facts', async () => {
    const r = await mm('boards', 'show', 'kv-1');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Board kv-1 (6f1c2a50-0000-4000-8000-00000000aaaa)');
    expect(r.stdout).toMatch(/^ {2}status {7}online, idle, 2 queued$/m);
    expect(r.stdout).toMatch(/^ {2}health {7}bad: fps 12 below 25 \(checked 2026-11-27 04:01:00Z\)$/m);
    expect(r.stdout).toMatch(/^ {2}maintenance {2}off$/m);
    expect(r.stdout).toMatch(/^ {2}labels {7}rack=a, site=lab$/m);
    expect(r.stdout).toMatch(/^ {2}mm\/ labels {3}mm\/arch=arm64, mm\/board-model=kv260$/m);
    expect(r.stdout).toMatch(/^ {2}board_model {3}Kria KV260 Vision AI Starter Kit$/m);
    expect(r.stdout).toMatch(/^ {2}memory_bytes {2}3\.8 GiB \(4118261760\)$/m);
  }, 60_000);

  it('run --label sends board_selector (no board check first; none matching is exit 3); with --board too it is a usage error', async () => {
    const r = await mm('run', '--name', 'sel', '--label', 'camera=yes', '--label', 'mm/board-model=kv260');
    // No board matches: exit 3, like no board at all.
    expect(r.code).toBe(3);
    expect(executes).toEqual([{ board_selector: { camera: 'yes', 'mm/board-model': 'kv260' } }]);
    expect(r.stderr).toMatch(/No registered board matches/);
    const both = await mm('run', '--name', 'x', '--label', 'a=b', '--board', 'kv-1');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/either --board or --label/);
  }, 60_000);
});
