/**
 * End to end: boards join by themselves (docs/enrollment.md). The real control plane and
 * real `mm-agent --simulate` processes that hold a provisioning key and no token.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome } from '../support/cli.ts';
import { dbKinds } from '../support/databases.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ADMIN = 'enroll-admin-token';

// One database (the real one where configured): what is end to end here does not depend on
// which PostgreSQL holds the rows; the integration files cover both (docs/testing.md).
describe.each(dbKinds.slice(-1))('boards join by themselves (%s database)', (kind) => {
  let server: TestServer;
  let tmp: string;
  const agents: AgentProcess[] = [];

  const admin = (pathname: string, init?: { method?: string; body?: unknown }) => bearerCaller(server.api, ADMIN)(pathname, init);
  const enrollCall = (body: Record<string, unknown>) =>
    server.api('/api/agent/enroll/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const createKey = async (body: Record<string, unknown>) => {
    const res = await admin('/api/provisioning-keys/', { method: 'POST', body });
    expect(res.status).toBe(201);
    return (await json(res)) as { id: string; key: string; labels: Record<string, string>; approval: string };
  };
  const board = async (id: string) => json(await admin(`/api/boards/${id}/`));

  /** An agent with a key and a token file that does not exist yet. */
  async function enrollingAgent(name: string, key: string) {
    const agentDir = path.join(tmp, name);
    const tokenFile = path.join(agentDir, 'token');
    const agent = await startAgent({ serverUrl: server.url, agentDir, env: { MM_PROVISIONING_KEY: key, MM_BOARD_TOKEN_FILE: tokenFile } });
    agents.push(agent);
    return { agent, agentDir, tokenFile };
  }

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-enroll-'));
    server = await startTestServer(kind, { MM_API_TOKEN: ADMIN });
  });

  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await server?.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('an auto key: the board comes online with the key\'s labels; the token is kept 0600 and the key is not used again', async () => {
    const key = await createKey({ name: 'lab-2', labels: { site: 'lab-2', rack: 'a' } });
    expect(key.key).toMatch(/^mmk_/);
    // The key is shown once: the list never has it.
    const list = await json(await admin('/api/provisioning-keys/'));
    expect(JSON.stringify(list)).not.toContain(key.key);
    expect(list.provisioning_keys.find((k: { id: string }) => k.id === key.id)).toMatchObject({ name: 'lab-2', approval: 'auto', labels: { site: 'lab-2', rack: 'a' } });

    const { agent, tokenFile } = await enrollingAgent('auto', key.key);
    const boardId = await eventually(async () => {
      const { boards } = await json(await admin('/api/boards/'));
      const b = boards.find((x: { status: string; labels: Record<string, string> }) => x.status === 'online' && x.labels.site === 'lab-2');
      expect(b).toBeDefined();
      return b.id as string;
    }, 60_000);
    expect(await board(boardId)).toMatchObject({ status: 'online', labels: { site: 'lab-2', rack: 'a' }, hostname: os.hostname() });
    const st = await fs.stat(tokenFile);
    expect(st.mode & 0o777).toBe(0o600);
    const token = (await fs.readFile(tokenFile, 'utf8')).trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Restarted, it uses the kept token: no new enrollment (the key's count stays at one).
    await agent.stop();
    await eventually(async () => expect((await board(boardId)).status).toBe('offline'));
    const again = await startAgent({ serverUrl: server.url, agentDir: agent.agentDir, env: { MM_PROVISIONING_KEY: 'mmk_not-used-any-more', MM_BOARD_TOKEN_FILE: tokenFile } });
    agents.push(again);
    await eventually(async () => expect((await board(boardId)).status).toBe('online'), 60_000);
    expect((await fs.readFile(tokenFile, 'utf8')).trim()).toBe(token);
    const k = (await json(await admin('/api/provisioning-keys/'))).provisioning_keys.find((x: { id: string }) => x.id === key.id);
    expect(k.boards_enrolled).toBe(1);
    await again.stop();

    // Audit: the key's creation and the enrollment.
    const audit = await json(await admin('/api/audit/?limit=1000'));
    const actions = audit.events.map((e: { action: string; target: string }) => `${e.action} ${e.target}`);
    expect(actions).toContain(`provisioning_key.create provisioning_key ${key.id}`);
    expect(actions).toContain(`board.enroll board ${boardId}`);
  });

  it('a manual key: the board is pending (202, Retry-After, no token) until an admin approves it, then comes online', async () => {
    const key = await createKey({ name: 'needs approval', labels: { site: 'lab-3' }, approval: 'manual' });
    const { tokenFile } = await enrollingAgent('manual', key.key);
    const pending = await eventually(async () => {
      const { boards } = await json(await admin('/api/boards/'));
      const b = boards.find((x: { labels: Record<string, string> }) => x.labels.site === 'lab-3');
      expect(b?.status).toBe('pending');
      return b as { id: string };
    }, 60_000);
    // Asking by hand shows the contract's answer; the agent has no token yet.
    const res = await enrollCall({ key: key.key, machine_id: 'someone-else', hostname: 'other' });
    expect(res.status).toBe(202);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await json(res)).toMatchObject({ status: 'pending' });
    await expect(fs.access(tokenFile)).rejects.toThrow();
    expect((await board(pending.id)).status).toBe('pending');

    const approved = await admin(`/api/boards/${pending.id}/approve/`, { method: 'POST' });
    expect(approved.status).toBe(200);
    expect((await json(approved)).status).not.toBe('pending');
    await eventually(async () => expect((await board(pending.id)).status).toBe('online'), 60_000);
    expect((await fs.stat(tokenFile)).mode & 0o777).toBe(0o600);
  });

  it('a wrong, expired, used-up or deleted key gets 401; a key opens nothing else', async () => {
    const wrong = await enrollCall({ key: 'mmk_wrong', machine_id: 'm1', hostname: 'h1' });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).code).toBe('unauthorized');
    const refused = (await json(await admin('/api/audit/?action=board.enroll_refused'))).events;
    expect(refused.some((e: { detail: { hostname?: string } | null }) => e.detail?.hostname === 'h1')).toBe(true);

    const deleted = await createKey({ name: 'to delete' });
    expect((await admin(`/api/provisioning-keys/${deleted.id}/`, { method: 'DELETE' })).status).toBe(204);
    expect((await admin(`/api/provisioning-keys/${deleted.id}/`, { method: 'DELETE' })).status).toBe(404);
    expect((await enrollCall({ key: deleted.key, machine_id: 'm2', hostname: 'h2' })).status).toBe(401);

    const soon = new Date(Date.now() + 1500).toISOString();
    const expiring = await createKey({ name: 'expiring', expires_at: soon });
    await eventually(() => expect(Date.now()).toBeGreaterThan(Date.parse(soon)), 10_000);
    expect((await enrollCall({ key: expiring.key, machine_id: 'm3', hostname: 'h3' })).status).toBe(401);

    const single = await createKey({ name: 'one board', max_boards: 1 });
    expect((await enrollCall({ key: single.key, machine_id: 'm4', hostname: 'h4' })).status).toBe(201);
    expect((await enrollCall({ key: single.key, machine_id: 'm5', hostname: 'h5' })).status).toBe(401);
    // The machine already enrolled may still enroll again with it (same board).
    expect((await enrollCall({ key: single.key, machine_id: 'm4', hostname: 'h4' })).status).toBe(201);

    // A key is no user token and no board token.
    const live = await createKey({ name: 'live' });
    expect((await server.api('/api/boards/', { headers: { authorization: `Bearer ${live.key}` } })).status).toBe(401);
    expect((await server.api('/api/agent/connect/', { headers: { authorization: `Bearer ${live.key}` } })).status).toBe(401);

    // A real agent with a deleted key stops with a clear message instead of trying forever.
    const { agent } = await enrollingAgent('deleted-key', deleted.key);
    const exit = await agent.exited;
    expect(exit.code).toBe(2);
    expect(agent.output.text.join('\n')).toContain('refused the provisioning key');
  });

  it('one machine enrolling twice: one board, a new token, and the old token stops working', async () => {
    const key = await createKey({ name: 'twice', labels: { site: 'lab-4' } });
    const first = await enrollingAgent('twice', key.key);
    const boardId = await eventually(async () => {
      const { boards } = await json(await admin('/api/boards/'));
      const b = boards.find((x: { labels: Record<string, string>; status: string }) => x.labels.site === 'lab-4' && x.status === 'online');
      expect(b).toBeDefined();
      return b.id as string;
    }, 60_000);
    const oldToken = (await fs.readFile(first.tokenFile, 'utf8')).trim();
    await first.agent.stop();
    // The board is reinstalled: its token is gone, its machine id (MM_AGENT_DIR/machine-id) stays.
    await fs.rm(first.tokenFile);
    const second = await startAgent({ serverUrl: server.url, agentDir: first.agentDir, env: { MM_PROVISIONING_KEY: key.key, MM_BOARD_TOKEN_FILE: first.tokenFile } });
    agents.push(second);
    await eventually(async () => expect((await board(boardId)).status).toBe('online'), 60_000);
    const newToken = (await fs.readFile(first.tokenFile, 'utf8')).trim();
    expect(newToken).not.toBe(oldToken);
    const { boards } = await json(await admin('/api/boards/'));
    expect(boards.filter((b: { labels: Record<string, string> }) => b.labels.site === 'lab-4')).toHaveLength(1);
    expect((await server.api('/api/agent/connect/', { headers: { authorization: `Bearer ${oldToken}` } })).status).toBe(401);
    expect((await server.api('/api/agent/connect/', { headers: { authorization: `Bearer ${newToken}` } })).status).toBe(426);
  });

  it('keys and approval need an admin; bad input is a 400', async () => {
    expect((await server.api('/api/provisioning-keys/')).status).toBe(401);
    const bad = await admin('/api/provisioning-keys/', { method: 'POST', body: { name: 'x', labels: { 'mm/arch': 'arm64' }, approval: 'sometimes' } });
    expect(bad.status).toBe(400);
    const fields = (await json(bad)).errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['approval']));
    expect(fields.some((f: string) => f.startsWith('labels'))).toBe(true);
    expect((await admin('/api/provisioning-keys/', { method: 'POST', body: { name: 'past', expires_at: '2020-01-01T00:00:00.000Z' } })).status).toBe(400);
    expect((await enrollCall({ key: 'mmk_x' })).status).toBe(400);
    expect((await admin('/api/boards/00000000-0000-4000-8000-000000000000/approve/', { method: 'POST' })).status).toBe(404);
  });

  it('mm keys: create (labels, manual), ls, rm', async () => {
    const cli = await cliHome();
    try {
      const env = { MM_SERVER_URL: server.url, MM_API_TOKEN: ADMIN };
      const made = await cli.run(['--json', 'keys', 'create', 'from the cli', '--label', 'site=lab-9', '--label', 'rack=b', '--manual', '--max-boards', '3'], env);
      expect(made.code, made.stderr).toBe(0);
      const key = JSON.parse(made.stdout) as { id: string; key: string; labels: Record<string, string>; approval: string; max_boards: number };
      expect(key).toMatchObject({ labels: { site: 'lab-9', rack: 'b' }, approval: 'manual', max_boards: 3 });
      expect(key.key).toMatch(/^mmk_/);
      const text = await cli.run(['keys', 'ls'], env);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('from the cli');
      expect(text.stdout).toContain('rack=b,site=lab-9');
      expect(text.stdout).not.toContain(key.key);
      expect((await cli.run(['keys', 'create', 'x', '--label', 'novalue'], env)).code).toBe(2);
      expect((await cli.run(['keys', 'rm', key.id], env)).code).toBe(0);
      expect((await enrollCall({ key: key.key, machine_id: 'cli', hostname: 'cli' })).status).toBe(401);
      expect((await cli.run(['keys', 'rm', key.id], env)).code).not.toBe(0);
      // Registering a board prints the server's one-line install command.
      const added = await cli.run(['--json', 'boards', 'add', 'from-the-cli'], env);
      expect(added.code, added.stderr).toBe(0);
      expect(JSON.parse(added.stdout).install_command).toMatch(/^curl -fsSL .*\/api\/downloads\/install-agent\.sh \| sudo sh -s -- --server-url .* --token /);
    } finally {
      await cli.cleanup();
    }
  });
});
