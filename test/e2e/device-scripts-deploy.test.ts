import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realDatabaseUrl } from '../support/databases.ts';
import { json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { cliHome, type CliHome } from '../support/cli.ts';
import { eventually, freePort, startSimulatedAgent, type SimulatedAgent } from './device-scripts-support.ts';

/** A small HTTP device script: answers its version on `/`, says so on stdout, exits on `POST /crash`. */
const httpScript = (version: string) => `import http from 'node:http';
const port = Number(process.env.PORT);
http
  .createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/crash') {
      res.end('bye');
      console.error('crashing on request');
      setTimeout(() => process.exit(3), 20);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ version: ${JSON.stringify(version)}, pid: process.pid }));
  })
  .listen(port, '127.0.0.1', () => console.log('script ${version} listening on ' + port));
`;

/** A version that never comes up. */
const brokenScript = `console.error('broken version: cannot start');\nprocess.exit(1);\n`;

/** A version that answers its port, then exits (the supervisor restarts it, and it exits again): a crash loop. */
const unstableScript = `import http from 'node:http';
const server = http.createServer((req, res) => res.end('unstable'));
server.on('connection', () => {
  console.error('unstable version: exiting after a connection');
  setTimeout(() => process.exit(2), 50);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('unstable version listening'));
`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(realDatabaseUrl ? (['postgres'] as const) : (['embedded'] as const))('device scripts deployed, supervised and observed on a simulated board (%s database)', (kind) => {
  let server: TestServer;
  let board: { id: string; token: string };
  let agent: SimulatedAgent;
  let scriptId: string;
  let scriptPort: number;
  const remoteDir = '/opt/model-manager/device-scripts/e2e-http';

  const send = (p: string, method: string, body?: unknown) =>
    server.api(p, body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const upload = (text: string, filename = 'http-script.mjs') => {
    const form = new FormData();
    form.append('file', new Blob([text]), filename);
    return server.api(`/api/device-scripts/${scriptId}/file/`, { method: 'PUT', body: form });
  };
  const op = (action: string) => send(`/api/device-scripts/${scriptId}/${action}/`, 'POST', { board_id: board.id });
  const boardScripts = async () => (await json(await server.api(`/api/boards/${board.id}/scripts/`))).scripts as Array<Record<string, unknown>>;
  const ours = async () => (await boardScripts()).find((s) => s.script_id === scriptId);
  const answer = () => server.api(`/api/device-scripts/${scriptId}/proxy/?board_id=${board.id}`);

  beforeAll(async () => {
    server = await startTestServer(kind, { MM_SCRIPT_HEALTH_TIMEOUT_S: '6' });
    board = await json(await send('/api/boards/', 'POST', { name: 'sim-scripts' }));
    agent = await startSimulatedAgent(server.url, board.token, { gpioPort: await freePort() });
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000);
    scriptPort = await freePort();
    const created = await send('/api/device-scripts/', 'POST', {
      name: 'e2e http',
      device_type: 'test',
      description: '',
      script_filename: 'http-script.mjs',
      remote_dir: remoteDir,
      port: scriptPort,
      version: '1.0.0',
    });
    expect(created.status).toBe(201);
    scriptId = (await json(created)).id;
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    if (agent) await fs.rm(agent.agentDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('stores the program of the entry version (multipart, or attached by sha256) and serves it back', async () => {
    expect((await op('deploy')).status).toBe(404); // no program yet
    const put = await upload(httpScript('1.0.0'));
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ script_id: scriptId, version: '1.0.0', sha256: sha256(httpScript('1.0.0')) });
    const got = await server.api(`/api/device-scripts/${scriptId}/file/`);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe(httpScript('1.0.0'));
    // The same bytes again, by digest: nothing sent.
    const attached = await send(`/api/device-scripts/${scriptId}/file/`, 'PUT', { sha256: sha256(httpScript('1.0.0')) });
    expect(attached.status).toBe(200);
    const unknown = await send(`/api/device-scripts/${scriptId}/file/`, 'PUT', { sha256: 'ab'.repeat(32) });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe('content_not_found');
  });

  it('deploys it: written under the scripts root, running, reachable through the relay on its port, its output readable', async () => {
    const res = await op('deploy');
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ kind: 'script_deploy', status: 'succeeded', board_id: board.id });
    const onDisk = path.join(agent.agentDir, 'device-scripts', 'e2e-http', 'http-script.mjs');
    expect(await fs.readFile(onDisk, 'utf8')).toBe(httpScript('1.0.0'));
    await eventually(async () => expect(await ours()).toMatchObject({ name: 'e2e http', version: '1.0.0', port: scriptPort, state: 'running', restarts: 0 }), 10_000);
    const relayed = await answer();
    expect(relayed.status).toBe(200);
    expect((await json(relayed)).version).toBe('1.0.0');
    const logs = await server.api(`/api/device-scripts/${scriptId}/logs/?board_id=${board.id}`);
    expect(logs.status).toBe(200);
    expect(logs.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await logs.text()).toContain(`script 1.0.0 listening on ${scriptPort}`);
    // The catalogue can say where each version runs.
    const programs = await json(await server.api(`/api/device-scripts/${scriptId}/programs/`));
    expect(programs.deployments).toEqual([expect.objectContaining({ board_id: board.id, version: '1.0.0', state: 'running' })]);
  });

  it('stops, starts and restarts it', async () => {
    const stopped = await op('stop');
    expect(stopped.status).toBe(200);
    expect((await json(stopped)).kind).toBe('script_stop');
    await eventually(async () => expect((await ours())?.state).toBe('stopped'), 10_000);
    expect((await answer()).status).toBe(502);
    expect((await op('start')).status).toBe(200);
    await eventually(async () => expect((await ours())?.state).toBe('running'), 10_000);
    const before = (await json(await answer())).pid;
    expect((await op('restart')).status).toBe(200);
    const after = (await json(await answer())).pid;
    expect(after).not.toBe(before);
  });

  it('restarts a script that crashed, with a backoff, and counts it', async () => {
    const pid = (await json(await answer())).pid;
    expect((await server.api(`/api/device-scripts/${scriptId}/proxy/crash?board_id=${board.id}`, { method: 'POST' })).status).toBe(200);
    await eventually(async () => expect(await ours()).toMatchObject({ state: 'running', restarts: 1 }), 15_000);
    const again = await json(await answer());
    expect(again.pid).not.toBe(pid);
    expect(await (await server.api(`/api/device-scripts/${scriptId}/logs/?board_id=${board.id}`)).text()).toContain('crashing on request');
  });

  it('mm scripts upload/deploy/stop/start/restart/logs/states --board from the command line', async () => {
    const cli: CliHome = await cliHome();
    try {
      const env = { MM_SERVER_URL: server.url };
      const program = path.join(cli.dir, 'work', 'http-script.mjs');
      await fs.writeFile(program, httpScript('1.0.0'));
      const uploaded = await cli.run(['scripts', 'upload', 'e2e http', program], env);
      expect(uploaded.code, uploaded.stderr).toBe(0);
      expect(uploaded.stdout).toContain(sha256(httpScript('1.0.0')));
      const deployed = await cli.run(['scripts', 'deploy', 'e2e http', '--board', 'sim-scripts'], env);
      expect(deployed.code, deployed.stderr).toBe(0);
      expect(deployed.stdout).toContain(`e2e http 1.0.0: running on port ${scriptPort}`);
      const noBoard = await cli.run(['scripts', 'stop', 'e2e http'], env);
      expect(noBoard.code).toBe(2);
      expect((await cli.run(['scripts', 'stop', 'e2e http', '--board', 'sim-scripts'], env)).code).toBe(0);
      const states = await cli.run(['scripts', 'states', '--board', 'sim-scripts'], env);
      expect(states.stdout).toMatch(/e2e http\s+1\.0\.0\s+\d+\s+stopped/);
      expect((await cli.run(['scripts', 'start', 'e2e http', '--board', 'sim-scripts'], env)).code).toBe(0);
      expect((await cli.run(['scripts', 'restart', 'e2e http', '--board', 'sim-scripts'], env)).code).toBe(0);
      const logs = await cli.run(['scripts', 'logs', 'e2e http', '--board', 'sim-scripts'], env);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toContain(`script 1.0.0 listening on ${scriptPort}`);
      expect((await json(await answer())).version).toBe('1.0.0');
    } finally {
      await cli.cleanup();
    }
  }, 120_000);

  it('a version that does not come up is rolled back: script_unhealthy, the old one still answers', async () => {
    expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { version: '1.1.0' })).status).toBe(200);
    expect((await upload(brokenScript)).status).toBe(200);
    const res = await op('deploy');
    const problem = await json(res);
    expect(res.status).toBe(502);
    expect(problem.operation.error.code).toBe('script_unhealthy');
    expect(problem.operation.error.message).toContain('version 1.0.0 is back');
    expect(problem.operation.error.message).toContain('broken version: cannot start');
    const relayed = await answer();
    expect(relayed.status).toBe(200);
    expect((await json(relayed)).version).toBe('1.0.0');
    await eventually(async () => expect(await ours()).toMatchObject({ version: '1.0.0', state: 'running' }), 10_000);
    expect(await fs.readFile(path.join(agent.agentDir, 'device-scripts', 'e2e-http', 'http-script.mjs'), 'utf8')).toBe(httpScript('1.0.0'));
  });

  it('a version that answers, then exits (a crash loop), does not count as deployed: script_unstable, the old one is back', async () => {
    expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { version: '1.2.0' })).status).toBe(200);
    expect((await upload(unstableScript)).status).toBe(200);
    const res = await op('deploy');
    const problem = await json(res);
    expect(res.status).toBe(502);
    expect(problem.operation.error.code).toBe('script_unstable');
    expect(problem.operation.error.message).toMatch(/e2e http 1\.2\.0 answered on port \d+ but did not stay up for 5 s: it exited/);
    expect(problem.operation.error.message).toContain('version 1.0.0 is back');
    expect(problem.operation.error.message).toContain('unstable version: exiting after a connection');
    expect((await json(await answer())).version).toBe('1.0.0');
    await eventually(async () => expect(await ours()).toMatchObject({ version: '1.0.0', state: 'running' }), 10_000);
    expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { version: '1.0.0' })).status).toBe(200);
  });

  it('refuses a remote_dir outside the board scripts root (board and server), writing nothing', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-outside-'));
    try {
      expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { version: '1.2.0', remote_dir: outside })).status).toBe(200);
      expect((await upload(httpScript('1.2.0'))).status).toBe(200);
      const res = await op('deploy');
      const problem = await json(res);
      expect(res.status).toBe(400);
      expect(problem.code).toBe('script_dir_refused');
      expect(problem.detail).toContain('MM_SCRIPTS_ROOT');
      expect(await fs.readdir(outside)).toEqual([]);
      // Climbing out with "..": refused before any operation starts.
      expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { remote_dir: '/opt/model-manager/device-scripts/../../../tmp' })).status).toBe(200);
      const climbing = await op('deploy');
      expect(climbing.status).toBe(400);
      expect((await json(climbing)).code).toBe('script_dir_refused');
      // The one deployed before still runs.
      expect((await json(await answer())).version).toBe('1.0.0');
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('an agent refuses a remote_dir that leads out of its root through a symlink', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-outside-'));
    try {
      await fs.symlink(outside, path.join(agent.agentDir, 'device-scripts', 'escape'));
      expect((await send(`/api/device-scripts/${scriptId}/`, 'PATCH', { remote_dir: '/opt/model-manager/device-scripts/escape/x' })).status).toBe(200);
      const res = await op('deploy');
      expect(res.status).toBe(400);
      const problem = await json(res);
      expect(problem.code).toBe('script_dir_refused');
      expect(problem.detail).toContain('symbolic link');
      expect(await fs.readdir(outside)).toEqual([]);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('an agent that restarts starts its deployed scripts again and reports them in its hello', async () => {
    const agentDir = agent.agentDir;
    await agent.stop();
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('offline'), 30_000);
    // The simulated board's scripts end with its agent.
    expect((await answer()).status).toBe(503);
    agent = await startSimulatedAgent(server.url, board.token, { gpioPort: await freePort(), agentDir });
    await eventually(async () => expect((await json(await server.api(`/api/boards/${board.id}/`))).status).toBe('online'), 30_000);
    await eventually(async () => expect(await ours()).toMatchObject({ version: '1.0.0', state: 'running', restarts: 0 }), 15_000);
    await eventually(async () => expect((await json(await answer())).version).toBe('1.0.0'), 15_000);
  }, 90_000);
});
