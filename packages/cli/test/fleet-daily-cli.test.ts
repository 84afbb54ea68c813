/**
 * `mm` on a fleet (issue 39), as a process against the real server: `mm run --label` refuses
 * a selector no board matches before creating anything (exit 3, "did you mean"), `mm boards
 * ls` shows health, maintenance and labels and takes --label, `mm ops ls` names boards,
 * `mm health-checks` manages checks.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';

describe('mm on a fleet', () => {
  let server: TestServer;
  let cli: CliHome;
  const boards: Record<string, string> = {};
  const call = (method: string, p: string, body?: unknown) =>
    server.api(p, { method, ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

  beforeAll(async () => {
    [server, cli] = await Promise.all([startTestServer('embedded'), cliHome()]);
    for (const [name, labels] of [['lab-a', { site: 'lab-1' }], ['lab-b', { site: 'lab-2' }]] as const) {
      const b = await json(await call('POST', '/api/boards/', { name }));
      boards[name] = b.id;
      expect((await call('PATCH', `/api/boards/${b.id}/`, { labels })).status).toBe(200);
    }
    expect((await call('PATCH', `/api/boards/${boards['lab-b']}/`, { maintenance: true })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([server?.stop(), cli?.cleanup()]);
  });

  const mm = (...args: string[]) => cli.run(['--server', server.url, ...args]);

  it('mm run --label with a selector no board matches: exit 3, the nearest label, nothing created', async () => {
    const p = path.join(cli.dir, 'work', 'p.json');
    await fs.writeFile(p, '{}');
    const r = await mm('run', '--label', 'sit=lab-1', '--parameter', p);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('No registered board has the labels sit=lab-1.');
    expect(r.stderr).toContain('Did you mean site=lab-1?');
    expect(r.stderr).not.toContain('{"');
    expect((await json(await server.api('/api/invocations/'))).total).toBe(0);
  });

  it('mm boards ls shows health, maintenance, reservation and labels, and filters with --label', async () => {
    const all = await mm('boards', 'ls');
    expect(all.code, all.stderr).toBe(0);
    const [header, ...rows] = all.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+STATUS\s+HEALTH\s+MAINT\s+RESERVED\s+LABELS\s+LAST SEEN\s+ID$/);
    // Held by no one: the RESERVED column says "-".
    expect(rows.find((r) => r.startsWith('lab-b'))).toMatch(/lab-b\s+offline\s+unknown\s+yes\s+-\s+site=lab-2/);
    const one = await mm('boards', 'ls', '--label', 'site=lab-1');
    expect(one.stdout).toContain('lab-a');
    expect(one.stdout).not.toContain('lab-b');
  });

  it('mm ops ls names the board, not an id prefix', async () => {
    const inv = await json(await call('POST', '/api/invocations/create/', { name: 'x', description: '' }));
    await server.ctx.operations.create({ kind: 'transfer', boardId: boards['lab-a']!, invocationId: inv.id });
    const r = await mm('ops', 'ls');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/transfer\s+queued\s+\d+\s+lab-a\s/);
    expect(r.stdout).not.toContain(boards['lab-a']!.slice(0, 8));
  });

  it('mm health-checks create, ls, edit, run, history and rm', async () => {
    const inv = await json(await call('POST', '/api/invocations/create/', { name: 'smoke', description: '' }));
    expect((await mm('health-checks', 'ls')).stdout).toContain('No health checks.');
    const created = await mm('health-checks', 'create', '--name', 'smoke', '--invocation', String(inv.id), '--label', 'site=lab-1', '--every', '1h', '--expect', 'fps>=10');
    expect(created.code, created.stderr).toBe(0);
    const id = /Health check (\d+)/.exec(created.stdout)![1]!;
    const ls = await mm('health-checks', 'ls');
    expect(ls.stdout).toMatch(new RegExp(`${id}\\s+smoke\\s+${inv.id}\\s+site=lab-1\\s+3600 s\\s+fps>=10`));
    expect((await mm('health-checks', 'edit', id, '--every', '2h')).code).toBe(0);
    expect((await json(await server.api(`/api/health-checks/${id}/`))).interval_s).toBe(7200);
    // No board online: nothing to run it on, said plainly.
    const run = await mm('health-checks', 'run', id);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('No online board matches');
    expect((await mm('health-checks', 'history', id)).stdout).toContain('has not run yet');
    expect((await mm('health-checks', 'rm', id)).code).toBe(0);
    expect((await mm('health-checks', 'ls')).stdout).toContain('No health checks.');
  });
});
