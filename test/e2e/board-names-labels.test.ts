/**
 * Issue 39, items 4 and 20 with the real control plane and the real `mm` as a process:
 * `mm boards rename` (a taken name refused), bulk labels by ids and by selector
 * (`POST /api/boards/labels/`) and `mm boards label --label-selector k=v --set a=b --remove c`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../support/cli.ts';
import { dbKinds } from '../support/databases.ts';
import { bearerCaller, json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ADMIN = 'board-names-admin-token';
const kind = dbKinds.at(-1)!;

describe(`board names and bulk labels, end to end (${kind} database)`, () => {
  let server: TestServer;
  let cli: CliHome;
  let env: Record<string, string>;
  let admin: ReturnType<typeof bearerCaller>;
  const ids: Record<string, string> = {};
  const labelsOf = async (name: string) => (await json(await admin(`/api/boards/${ids[name]}/`))).labels as Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN });
    admin = bearerCaller(server.api, ADMIN);
    for (const [name, labels] of [
      ['lab1-a', { site: 'lab-1', temp: 'x' }],
      ['lab1-b', { site: 'lab-1' }],
      ['lab2-a', { site: 'lab-2', temp: 'y' }],
    ] as const) {
      const b = await json(await admin('/api/boards/', { body: { name } }));
      ids[name] = b.id;
      expect((await admin(`/api/boards/${b.id}/`, { method: 'PATCH', body: { labels } })).status).toBe(200);
    }
    cli = await cliHome();
    env = { MM_SERVER_URL: server.url, MM_API_TOKEN: ADMIN };
  }, 300_000);

  afterAll(async () => {
    await cli?.cleanup();
    await server?.stop();
  });

  it('POST /api/boards/labels/ sets and removes labels on the boards named, or on those a selector matches', async () => {
    const byIds = await admin('/api/boards/labels/', { body: { board_ids: [ids['lab1-a'], ids['lab2-a']], set: { camera: 'yes' } } });
    expect(byIds.status).toBe(200);
    const body = await json(byIds);
    expect(body.changed).toBe(2);
    expect(body.boards.map((b: { name: string }) => b.name)).toEqual(['lab1-a', 'lab2-a']);
    expect(await labelsOf('lab1-a')).toEqual({ site: 'lab-1', temp: 'x', camera: 'yes' });
    expect(await labelsOf('lab1-b')).toEqual({ site: 'lab-1' });

    const bySelector = await json(await admin('/api/boards/labels/', { body: { board_selector: { camera: 'yes' }, remove: ['camera', 'missing'] } }));
    expect(bySelector.changed).toBe(2);
    expect(await labelsOf('lab2-a')).toEqual({ site: 'lab-2', temp: 'y' });

    // Bad input changes nothing: no target, both targets, mm/ keys, the same key set and removed.
    for (const bad of [
      { set: { a: 'b' } },
      { board_ids: [ids['lab1-a']], board_selector: {}, set: { a: 'b' } },
      { board_ids: [ids['lab1-a']] },
      { board_ids: [ids['lab1-a']], set: { 'mm/arch': 'x' } },
      { board_ids: [ids['lab1-a']], remove: ['mm/arch'] },
      { board_ids: [ids['lab1-a']], set: { a: 'b' }, remove: ['a'] },
    ]) {
      const res = await admin('/api/boards/labels/', { body: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect(await labelsOf('lab1-a')).toEqual({ site: 'lab-1', temp: 'x' });
  });

  it('mm boards label --label-selector k=v --set a=b --remove c changes every matching board', async () => {
    const r = await cli.run(['boards', 'label', '--label-selector', 'site=lab-1', '--set', 'rack=b', '--remove', 'temp'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 boards changed:');
    expect(r.stdout).toMatch(/lab1-a: .*rack=b/);
    expect(await labelsOf('lab1-a')).toEqual({ site: 'lab-1', rack: 'b' });
    expect(await labelsOf('lab1-b')).toEqual({ site: 'lab-1', rack: 'b' });
    expect(await labelsOf('lab2-a')).toEqual({ site: 'lab-2', temp: 'y' });
    const none = await cli.run(['boards', 'label', '--label-selector', 'site=lab-9', '--set', 'rack=c'], env);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('nothing changed');
    // One board, the old way, with --set too.
    const one = await cli.run(['boards', 'label', 'lab2-a', 'x=1', '--set', 'y=2'], env);
    expect(one.code, one.stderr).toBe(0);
    expect(await labelsOf('lab2-a')).toEqual({ site: 'lab-2', temp: 'y', x: '1', y: '2' });
  });

  it('mm boards rename <board> <name>; a taken name is refused (board_name_taken) and nothing changes', async () => {
    const r = await cli.run(['boards', 'rename', 'lab1-b', 'bench-7'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('is now named bench-7');
    expect((await json(await admin(`/api/boards/${ids['lab1-b']}/`))).name).toBe('bench-7');
    const taken = await cli.run(['boards', 'rename', 'bench-7', 'lab1-a'], env);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toMatch(/lab1-a|board_name_taken|unique/);
    expect((await json(await admin(`/api/boards/${ids['lab1-b']}/`))).name).toBe('bench-7');
  });
});
