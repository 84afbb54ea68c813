/**
 * A terminal on the board, end to end (docs/terminal.md): the real control plane, real
 * `mm-agent --simulate` processes and their login shells in pseudo-terminals. Typing a command
 * and reading its output, a resize, Ctrl-C, the exit status; who may (viewer, operator without
 * a reservation, the board's own refusal, an offline board); the recording played back; the
 * session's end when the client leaves, when the agent goes, after the idle time, and when a
 * PAC activation reboots the board.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../support/http.ts';
import { eventually, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { openTerminal } from '../support/terminal-client.ts';
import { cliHome } from '../support/cli.ts';
import { hasTmux, tmuxRun } from '../support/tmux.ts';
import { ADMIN_TOKEN, bearer, makeUser, type TestUser } from '../../packages/server/test/support/accounts.ts';

const HEAVY = 240_000;
/** The shell the tests run: a plain sh, whatever the user's login shell loads. */
export const TERMINAL_ENV = {
  MM_TERMINAL_USER: os.userInfo().username,
  MM_TERMINAL_SHELL: '/bin/sh',
  ...(existsSync('/usr/bin/python3') ? { MM_PYTHON: '/usr/bin/python3' } : {}),
};
/** dash's and bash's prompts as root or not. */
const PROMPT = /[#$] $/;

describe('a terminal on the board, end to end', () => {
  let server: TestServer;
  let scratch: string;
  const agents: AgentProcess[] = [];
  let board: { id: string; token: string };
  let offBoard: { id: string; token: string };
  let viewer: TestUser;
  let operator: TestUser;
  const admin = bearer(ADMIN_TOKEN);

  const makeBoard = async (name: string) => {
    const res = await server.api('/api/boards/', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    expect(res.status).toBe(201);
    return (await json(res)) as { id: string; token: string };
  };
  const online = (id: string) => eventually(async () => expect((await json(await server.api(`/api/boards/${id}/`, { headers: admin }))).status).toBe('online'), 90_000);
  const sessions = async () => (await json(await server.api('/api/terminal-sessions/', { headers: admin }))).sessions as Array<Record<string, unknown>>;

  beforeAll(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-e2e-terminal-'));
    server = await startTestServer('embedded', { MM_API_TOKEN: ADMIN_TOKEN });
    board = await makeBoard('terminal-board');
    offBoard = await makeBoard('no-terminal-board');
    agents.push(await startAgent({ serverUrl: server.url, token: board.token, agentDir: path.join(scratch, 'a1'), env: TERMINAL_ENV }));
    agents.push(await startAgent({ serverUrl: server.url, token: offBoard.token, agentDir: path.join(scratch, 'a2'), env: { ...TERMINAL_ENV, MM_TERMINAL: 'off' } }));
    viewer = await makeUser(server, 'vera', 'viewer');
    operator = await makeUser(server, 'otto', 'operator');
    await online(board.id);
    await online(offBoard.id);
  }, HEAVY);

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await server?.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  it('runs a command, resizes, passes Ctrl-C through, ends with the exit status, and is recorded and audited', async () => {
    const t = await openTerminal(server.url, board.id, admin, { cols: 90, rows: 30 });
    await t.waitFor(PROMPT);
    let from = t.output().length;
    t.type('echo "hello-$((6 * 7))"\r');
    await t.waitFor('hello-42', { from });

    from = t.output().length;
    t.type('stty size\r');
    await t.waitFor('30 90', { from });
    t.resize(123, 41);
    from = t.output().length;
    t.type('stty size\r');
    await t.waitFor('41 123', { from });

    // Ctrl-C reaches the foreground job: a long sleep ends at once and the shell prompts again.
    from = t.output().length;
    t.type('sleep 60; echo not-interrupted\r');
    // The shell has the line (its echo came back) before the Ctrl-C goes.
    await t.waitFor('not-interrupted', { from });
    t.type('\x03');
    await t.waitFor(PROMPT, { from: from + 'sleep 60; echo not-interrupted'.length });
    // The echo of the typed line holds the words; a line of output starting with them would mean the sleep ran out.
    expect(t.output().slice(from)).not.toMatch(/\nnot-interrupted/);

    t.type('exit 3\r');
    expect(await t.exit).toMatchObject({ type: 'exit', code: 3, reason: 'exited' });

    const row = await eventually(async () => {
      const s = (await sessions()).find((x) => x.board_id === board.id && x.exit_code === 3);
      expect(s).toBeDefined();
      return s!;
    }, 30_000);
    expect(row).toMatchObject({ board_name: 'terminal-board', username: 'MM_API_TOKEN', end_reason: 'exited', cols: 90, rows: 30 });
    expect(row.ended_at).not.toBeNull();

    // The recording: asciicast v2, played back in order (the output, the resize).
    const rec = await server.api(`/api/terminal-sessions/${String(row.id)}/recording`, { headers: admin });
    expect(rec.status, await rec.clone().text()).toBe(200);
    expect(rec.headers.get('content-type')).toBe('application/x-asciicast');
    const lines = (await rec.text()).trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines[0]).toMatchObject({ version: 2, width: 90, height: 30 });
    const events = lines.slice(1) as Array<[number, string, string]>;
    const played = events.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
    expect(played).toContain('hello-42');
    expect(played).toContain('41 123');
    expect(events.some((e) => e[1] === 'r' && e[2] === '123x41')).toBe(true);
    for (let i = 1; i < events.length; i++) expect(events[i]![0]).toBeGreaterThanOrEqual(events[i - 1]![0]);

    // A viewer, even an operator, may not read recordings.
    expect((await server.api(`/api/terminal-sessions/${String(row.id)}/recording`, { headers: bearer(operator.token) })).status).toBe(403);
    expect((await server.api('/api/terminal-sessions/', { headers: bearer(viewer.token) })).status).toBe(403);

    const audit = await json(await server.api('/api/audit/?limit=50', { headers: admin }));
    const actions = (audit.events as Array<{ action: string; detail: { session_id?: string } | null }>).filter((e) => e.detail?.session_id === row.id).map((e) => e.action);
    expect(actions.sort()).toEqual(['terminal.close', 'terminal.open']);
  }, HEAVY);

  it.skipIf(!hasTmux)('mm shell: raw mode, the size and its changes, Ctrl-C passes through, the exit status is mm\'s', async () => {
    const cli = await cliHome();
    const screen = tmuxRun([process.execPath, cli.bundle, 'shell', 'terminal-board'], {
      env: { ...cli.env, MM_SERVER_URL: server.url, MM_API_TOKEN: ADMIN_TOKEN },
      cols: 100,
      rows: 30,
    });
    try {
      await screen.waitFor((s) => /[#$]$/.test(s), 90_000);
      screen.sendKeys('stty size', 'Enter');
      await screen.waitFor((s) => s.includes('30 100'));
      screen.resize(120, 40);
      // The new size travels tmux → mm → server → board: asked again until the board has it.
      for (let attempt = 1; ; attempt++) {
        screen.sendKeys('stty size', 'Enter');
        try {
          await screen.waitFor((s) => s.includes('40 120'), 5_000);
          break;
        } catch (err) {
          if (attempt === 10) throw err;
        }
      }
      screen.sendKeys('sleep 60; echo slept-through', 'Enter');
      await screen.waitFor((s) => s.includes('sleep 60; echo slept-through'));
      screen.sendKeys('C-c');
      await screen.waitFor((s) => /\^C\s*\n[#$]$/.test(s), 20_000);
      screen.sendKeys('exit 7', 'Enter');
      const after = await screen.waitFor((s) => s.includes('[exit '), 30_000);
      expect(after).toContain('[exit 7]');
      expect(after).not.toMatch(/\nslept-through/);
    } finally {
      screen.close();
      await cli.cleanup();
    }
  }, HEAVY);

  it('refuses a viewer, an operator without the reservation, a board that refuses terminals, and an offline board', async () => {
    const refused = (boardId: string, headers: Record<string, string>) =>
      openTerminal(server.url, boardId, headers).then(
        (t) => {
          t.close();
          throw new Error('the terminal opened');
        },
        (err: { status: number; body: { code?: string } }) => err,
      );
    expect((await refused(board.id, bearer(viewer.token))).status).toBe(403);
    expect(await refused(board.id, bearer(operator.token))).toMatchObject({ status: 403, body: { code: 'reservation_required' } });
    expect(await refused(offBoard.id, admin)).toMatchObject({ status: 403, body: { code: 'terminal_disabled' } });
    const never = await makeBoard('never-linked');
    expect(await refused(never.id, admin)).toMatchObject({ status: 503, body: { code: 'board_offline' } });
    expect(await refused('00000000-0000-4000-8000-000000000000', admin)).toMatchObject({ status: 404, body: { code: 'board_not_found' } });
    // Not an upgrade: 426.
    expect((await server.api(`/api/boards/${board.id}/terminal/`, { headers: admin })).status).toBe(426);
  }, HEAVY);

  it('ends the shell when the client leaves, and a session whose board goes away ends with a clear message', async () => {
    const t = await openTerminal(server.url, board.id, admin);
    await t.waitFor(PROMPT);
    t.type('echo $$ > /tmp/mm-terminal-test-shell.pid\r');
    await eventually(async () => expect((await fs.readFile('/tmp/mm-terminal-test-shell.pid', 'utf8')).trim()).toMatch(/^\d+$/), 30_000);
    const pid = Number((await fs.readFile('/tmp/mm-terminal-test-shell.pid', 'utf8')).trim());
    t.close();
    await eventually(async () => expect(alive(pid)).toBe(false), 30_000);
    await eventually(async () => expect((await sessions()).some((s) => s.end_reason === 'client_left')).toBe(true), 30_000);
    await fs.rm('/tmp/mm-terminal-test-shell.pid', { force: true });

    // The agent goes (its link drops): the client hears why and the socket closes.
    const idleDir = path.join(scratch, 'a3');
    const third = await makeBoard('idle-board');
    const agent = await startAgent({ serverUrl: server.url, token: third.token, agentDir: idleDir, env: { ...TERMINAL_ENV, MM_TERMINAL_IDLE_S: '2' } });
    agents.push(agent);
    await online(third.id);
    const idle = await openTerminal(server.url, third.id, admin);
    await idle.waitFor(PROMPT);
    expect(await idle.exit).toMatchObject({ code: null, reason: 'idle_timeout' });

    const lost = await openTerminal(server.url, third.id, admin);
    await lost.waitFor(PROMPT);
    await agent.stop();
    const exit = await lost.exit;
    expect(exit?.code).toBeNull();
    expect(['agent_stopping', 'link_lost']).toContain(exit?.reason);
    expect(exit?.message).toBeTruthy();
  }, HEAVY);

  it('a PAC activation\'s reboot ends the session with board_rebooting and a message, recorded; a new session opens once the board is back', async () => {
    const t = await openTerminal(server.url, board.id, admin);
    await t.waitFor(PROMPT);
    const activated = await server.api('/api/pacs/activate/', {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ board_id: board.id, pac: 'zcu104-sim-sample-cfg1' }),
    });
    expect([200, 202], await activated.clone().text()).toContain(activated.status);
    const exit = await t.exit;
    expect(exit).toMatchObject({ type: 'exit', code: null, reason: 'board_rebooting' });
    expect(exit?.message).toMatch(/rebooting/);
    await eventually(async () => expect((await sessions()).some((s) => s.board_id === board.id && s.end_reason === 'board_rebooting')).toBe(true), 30_000);

    await eventually(async () => expect(await json(await server.api(`/api/boards/${board.id}/`, { headers: admin }))).toMatchObject({ status: 'online', active_pac: 'zcu104-sim-sample-cfg1' }), 90_000);
    const again = await openTerminal(server.url, board.id, admin);
    await again.waitFor(PROMPT);
    again.type('exit 5\r');
    expect(await again.exit).toMatchObject({ code: 5, reason: 'exited' });
  }, HEAVY);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
