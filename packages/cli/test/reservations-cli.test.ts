/**
 * `mm reserve`, `mm release`, `mm reservations ls|renew` (docs/reservations.md) as a process
 * against the real control plane: a lease, a second person's request waiting (and getting
 * the board when the first releases it), durations checked before anything is asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../../../test/support/cli.ts';
import { json } from '../../../test/support/http.ts';
import { startTestServer, type TestServer } from '../../../test/support/test-server.ts';
import { ADMIN_TOKEN, bearer, call, makeUser, type TestUser } from '../../server/test/support/accounts.ts';
import { FakeAgent } from '../../server/test/support/fake-agent.ts';

describe('mm reserve / release / reservations', () => {
  let cli: CliHome;
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let agent: FakeAgent;
  const mm = (user: TestUser, ...args: string[]) => cli.run(['--server', server.url, ...args], { MM_API_TOKEN: user.token });

  beforeAll(async () => {
    [cli, server] = await Promise.all([cliHome(), startTestServer('embedded', { MM_API_TOKEN: ADMIN_TOKEN })]);
    alice = await makeUser(server, 'alice', 'operator');
    bob = await makeUser(server, 'bob', 'operator');
    const b = await json(await call(server, 'POST', '/api/boards/', bearer(ADMIN_TOKEN), { name: 'kv260-1' }));
    await call(server, 'PATCH', `/api/boards/${b.id}/`, bearer(ADMIN_TOKEN), { labels: { site: 'lab-1' } });
    agent = await FakeAgent.online(server.url, b.token);
  }, 180_000);
  afterAll(async () => {
    await agent?.close().catch(() => {});
    await server?.stop();
    await cli?.cleanup();
  });

  it('reserves, queues a second request, hands the board over on release', async () => {
    expect((await mm(alice, 'reserve', 'kv260-1', '--for', 'soon')).code).toBe(2);
    expect((await mm(alice, 'reserve', '--for', '2h')).code).toBe(2);

    const mine = await mm(alice, 'reserve', 'kv260-1', '--for', '2h', '--note', 'bring-up');
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.stdout).toMatch(/^Reservation (\d+): kv260-1 is yours until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\.\n$/);
    const aliceId = Number(/Reservation (\d+)/.exec(mine.stdout)![1]);

    const queued = await mm(bob, '--json', 'reserve', '--label', 'site=lab-1', '--for', '30m', '--no-wait');
    expect(queued.code, queued.stderr).toBe(0);
    expect(JSON.parse(queued.stdout)).toMatchObject({ status: 'waiting', position: 1, board_selector: { 'site': 'lab-1' } });

    const ls = await mm(bob, 'reservations', 'ls');
    expect(ls.stdout.split('\n')[0]).toMatch(/^ID\s+BOARD\s+USER\s+STATUS\s+UNTIL\s+POSITION\s+NOTE$/);
    expect(ls.stdout).toMatch(new RegExp(`^${aliceId}\\s+kv260-1\\s+alice\\s+active\\s+\\S+ \\S+\\s+-\\s+bring-up$`, 'm'));
    expect(ls.stdout).toMatch(/^\d+\s+site=lab-1\s+bob\s+waiting\s+\S+ \S+\s+1\s+-$/m);

    // Bob asks again and waits in the foreground; alice releases: his command ends with the board.
    const waiting = cli.start(['--server', server.url, 'reserve', 'kv260-1', '--for', '1h'], { MM_API_TOKEN: bob.token });
    await waiting.waitFor(({ stderr }) => /waiting for kv260-1, position 1/.test(stderr), 30_000);
    // Not hers to release.
    expect((await mm(alice, 'release', String(aliceId + 1))).code).not.toBe(0);
    const released = await mm(alice, 'release');
    expect(released.stdout).toBe(`Released reservation ${aliceId}.\n`);
    // The older request (the selector one) gets the board first; the foreground one keeps waiting.
    const bobsLs = await mm(bob, '--json', 'reservations', 'ls', '--mine');
    const rows = JSON.parse(bobsLs.stdout).reservations as Array<{ id: number; status: string; board_selector: unknown }>;
    expect(rows.find((r) => r.board_selector)?.status).toBe('active');
    const selectorId = rows.find((r) => r.board_selector)!.id;
    const renewed = await mm(bob, 'reservations', 'renew', String(selectorId), '--for', '45m');
    expect(renewed.code, renewed.stderr).toBe(0);
    expect((await mm(bob, 'release', String(selectorId))).code).toBe(0);
    const got = await waiting.done;
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/kv260-1 is yours until/);
    expect((await mm(bob, 'release')).code).toBe(0);
    const none = await mm(bob, 'release');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/You hold no reservation/);
  }, 300_000);
});
