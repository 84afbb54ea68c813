/**
 * End to end: agent updates (docs/packages.md). The real control plane serves packages from
 * MM_PACKAGES_DIR; a real simulated agent runs under the package's start script
 * (deploy/agent/mm-agent-start, the watchdog) with its packaged version in a folder. An
 * update to a new build reconnects with the new version; an update to a build that crashes
 * at start is switched back by the start script and the operation says so.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentPackages, buildBundle } from '../deploy/bundles.ts';
import { bearerCaller, json } from '../support/http.ts';
import { eventually, repoRoot, startAgent, type AgentProcess } from '../support/processes.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const ADMIN = 'update-admin-token';
const ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64';
const NEW = '0.1.1+update-test';
const CRASHING = '0.1.2+crashes';
const HANGING = '0.1.3+hangs';
/** The board's deadline for the new version to reconnect (MM_AGENT_UPDATE_TIMEOUT_S). */
const TIMEOUT_S = 20;

describe('agent updates with rollback', () => {
  let server: TestServer;
  let tmp: string;
  let agent: AgentProcess;
  let boardId: string;
  let packagedVersion: string;

  const admin = (pathname: string, init?: { method?: string; body?: unknown }) => bearerCaller(server.api, ADMIN)(pathname, init);
  const board = async () => json(await admin(`/api/boards/${boardId}/`));
  const versions = () => path.join(agent.agentDir, 'versions');

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-agent-update-'));
    packagedVersion = JSON.parse(await fs.readFile(path.join(repoRoot, 'packages/agent/package.json'), 'utf8')).version;
    // The installed package's folder (/opt/mm-agent): this source's bundle, PATH's node.
    const packaged = path.join(tmp, 'opt-mm-agent');
    buildBundle('agent', path.join(packaged, 'lib'));
    const packages = path.join(tmp, 'packages');
    buildAgentPackages(packages, ['--version', NEW, '--arch', ARCH, '--no-node']);
    // A build that dies at start, packed the same way.
    const crashing = path.join(tmp, 'crashing');
    await fs.cp(path.join(packaged, 'lib'), crashing, { recursive: true });
    await fs.writeFile(path.join(crashing, 'mm-agent.mjs'), "#!/usr/bin/env node\nconsole.error('this build crashes at start');\nprocess.exit(3);\n");
    buildAgentPackages(packages, ['--version', CRASHING, '--arch', ARCH, '--no-node', '--bundle', crashing]);
    // And one that starts but never connects (stuck): only the deadline catches it.
    await fs.writeFile(path.join(crashing, 'mm-agent.mjs'), "#!/usr/bin/env node\nconsole.error('this build hangs');\nsetInterval(() => {}, 1000);\n");
    buildAgentPackages(packages, ['--version', HANGING, '--arch', ARCH, '--no-node', '--bundle', crashing]);

    server = await startTestServer('embedded', { MM_API_TOKEN: ADMIN, MM_PACKAGES_DIR: packages, MM_AGENT_UPDATE_TIMEOUT_S: String(TIMEOUT_S) });
    const created = await json(await admin('/api/boards/', { body: { name: 'updatable' } }));
    boardId = created.id;
    agent = await startAgent({
      serverUrl: server.url,
      token: created.token,
      agentDir: path.join(tmp, 'agent'),
      launcher: path.join(repoRoot, 'deploy/agent/mm-agent-start'),
      env: { MM_AGENT_PACKAGED_DIR: packaged },
    });
    await eventually(async () => expect(await board()).toMatchObject({ status: 'online', agent_version: packagedVersion }), 60_000);
  }, 600_000);

  afterAll(async () => {
    await agent?.stop();
    await server?.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('refuses a version the control plane does not hold (404, saying which it holds)', async () => {
    const res = await admin(`/api/boards/${boardId}/agent-update/`, { body: { version: '9.9.9' } });
    expect(res.status).toBe(404);
    const problem = await json(res);
    expect(problem.code).toBe('agent_version_not_found');
    expect(problem.detail).toContain('9.9.9');
    expect(problem.detail).toContain(NEW);
  });

  it('updates to a new build: installed beside, switched, reconnected with the new version', async () => {
    const res = await admin(`/api/boards/${boardId}/agent-update/`, { body: { version: NEW } });
    const op = await json(res);
    expect(res.status, JSON.stringify(op)).toBe(200);
    expect(op).toMatchObject({ kind: 'agent_update', status: 'succeeded', board_id: boardId, result: { version: NEW, previous_version: packagedVersion } });
    expect(await board()).toMatchObject({ status: 'online', agent_version: NEW });
    expect(await fs.readlink(path.join(versions(), 'current'))).toBe(NEW);
    await expect(fs.access(path.join(versions(), 'trial'))).rejects.toThrow();
    // The previous version is untouched beside it (the packaged folder), ready to switch back to.
    expect((await fs.stat(path.join(versions(), NEW, 'lib/mm-agent.mjs'))).isFile()).toBe(true);
    const log = await (await admin(`/api/operations/${op.id}/log/`)).text();
    expect(log).toContain(`reconnected with ${NEW}`);
  }, 300_000);

  it('updates to a build that crashes at start: the start script switches back, the operation fails update_rolled_back', async () => {
    const res = await admin(`/api/boards/${boardId}/agent-update/`, { body: { version: CRASHING } });
    const problem = await json(res);
    expect(res.status, JSON.stringify(problem)).toBe(502);
    // A failed operation's 502 (docs/api.md): the operation in the problem says why.
    expect(problem.code).toBe('operation_failed');
    expect(problem.operation).toMatchObject({ kind: 'agent_update', status: 'failed', error: { code: 'update_rolled_back' } });
    expect(problem.operation.error.message).toContain(`switched back to ${NEW}`);
    await eventually(async () => expect(await board()).toMatchObject({ status: 'online', agent_version: NEW }), 60_000);
    expect(await fs.readlink(path.join(versions(), 'current'))).toBe(NEW);
    const rolledBack = await fs.readFile(path.join(versions(), 'rolled-back'), 'utf8');
    expect(rolledBack).toContain(`version=${CRASHING}`);
    expect(rolledBack).toContain('reason=exited before reconnecting');
    // The build that failed is removed once the version in use is back; the one in use stays.
    await eventually(async () => expect(await fs.readdir(versions())).not.toContain(CRASHING), 30_000);
    expect((await fs.stat(path.join(versions(), NEW, 'lib/mm-agent.mjs'))).isFile()).toBe(true);
    expect(agent.output.text.join('\n')).toContain(`version ${CRASHING} exited before reconnecting: switched back to ${NEW}`);
  }, 300_000);

  it('updates to a build that starts but never reconnects: switched back at the deadline, update_rolled_back', async () => {
    const started = Date.now();
    const res = await admin(`/api/boards/${boardId}/agent-update/`, { body: { version: HANGING } });
    const problem = await json(res);
    expect(res.status, JSON.stringify(problem)).toBe(502);
    expect(problem.operation.error.code).toBe('update_rolled_back');
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_S * 1000 - 2000);
    await eventually(async () => expect(await board()).toMatchObject({ status: 'online', agent_version: NEW }), 60_000);
    expect(await fs.readFile(path.join(versions(), 'rolled-back'), 'utf8')).toContain('reason=did not reconnect in time');
  }, 300_000);
});
