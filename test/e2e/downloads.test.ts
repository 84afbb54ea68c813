/**
 * Downloads and the one-line install (docs/packages.md): the real control plane serves the
 * packages of MM_PACKAGES_DIR, install-agent.sh and their checksums without sign-in, says
 * clearly what is missing, and the install command it shows installs the package into a
 * root folder (DESTDIR-like: no dpkg database, users or systemctl) with the settings given.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentPackages } from '../deploy/bundles.ts';
import { bearerCaller, json } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const ADMIN = 'downloads-admin-token';
const VERSION = '0.1.0+downloads';
const ARCH = process.arch === 'arm64' ? 'arm64' : 'amd64';

/** Runs a shell line without blocking this process (the server under test lives in it). */
function sh(line: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', line], { encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? ((err as { code?: unknown }).code as number | null) ?? null : 0, stdout, stderr }),
    );
  });
}

/** KEY=value lines as systemd's EnvironmentFile= reads them. */
function envValues(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    env[line.slice(0, i)] = line.slice(i + 1);
  }
  return env;
}

describe.skipIf(!has('dpkg-deb') || !has('curl'))('downloads and install-agent.sh', () => {
  let server: TestServer;
  let tmp: string;
  let packagesDir: string;
  const admin = (pathname: string, init?: { method?: string; body?: unknown }) => bearerCaller(server.api, ADMIN)(pathname, init);

  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-downloads-'));
    packagesDir = path.join(tmp, 'packages');
    server = await startTestServer('embedded', { MM_API_TOKEN: ADMIN, MM_PACKAGES_DIR: packagesDir });
  });
  afterAll(async () => {
    await server?.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('says clearly what it cannot serve while nothing is built', async () => {
    const res = await server.api('/api/downloads/');
    expect(res.status).toBe(200);
    const body = await json(res);
    // In a checkout the workspace's own client and install script are served before any
    // package is built (`pnpm start`); the agent packages are what is missing.
    expect(body).toMatchObject({ total: 2, agent_version: null });
    expect(body.downloads.map((d: { name: string }) => d.name).sort()).toEqual(['install-agent.sh', 'mm']);
    const mm = await server.api('/api/downloads/mm');
    expect(mm.status).toBe(200);
    expect((await mm.text()).startsWith('#!/usr/bin/env node')).toBe(true);
    expect(body.missing.join('\n')).toContain('no arm64 agent package in the packages folder (MM_PACKAGES_DIR)');
    // Anyone may read this: it names the setting, not the server's folder.
    expect(body.missing.join('\n')).not.toContain(packagesDir);
    expect(body.missing.join('\n')).toContain('package:agent');
    const missing = await server.api(`/api/downloads/mm-agent_${VERSION}_${ARCH}.deb`);
    expect(missing.status).toBe(404);
    const problem = await json(missing);
    expect(problem.code).toBe('download_not_found');
    expect(problem.detail).toContain('MM_PACKAGES_DIR');
  });

  it('serves the built package, install-agent.sh and SHA256SUMS without sign-in, and the install command installs into a root folder', async () => {
    buildAgentPackages(packagesDir, ['--version', VERSION, '--arch', ARCH, '--no-node']);
    const { downloads, agent_version, missing } = await json(await server.api('/api/downloads/'));
    expect(agent_version).toBe(VERSION);
    const pkg = downloads.find((d: { kind: string }) => d.kind === 'agent_package');
    expect(pkg).toMatchObject({ name: `mm-agent_${VERSION}_${ARCH}.deb`, version: VERSION, arch: ARCH, url: `${server.url.replace(/\/$/, '')}/api/downloads/mm-agent_${VERSION}_${ARCH}.deb` });
    expect(downloads.some((d: { kind: string }) => d.kind === 'install_script')).toBe(true);
    expect(missing.join('\n')).toContain(`no ${ARCH === 'amd64' ? 'arm64' : 'amd64'} agent package`);
    const bytes = Buffer.from(await (await server.api(`/api/downloads/${pkg.name}`)).arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(pkg.sha256);
    expect(await (await server.api('/api/downloads/SHA256SUMS')).text()).toContain(`${pkg.sha256}  ${pkg.name}\n`);

    // Registering a board answers the one line; run it (without sudo, into a root folder).
    const board = await json(await admin('/api/boards/', { body: { name: 'from-the-install-line' } }));
    const base = server.url.replace(/\/$/, '');
    expect(board.install_command).toBe(`curl -fsSL ${base}/api/downloads/install-agent.sh | sudo sh -s -- --server-url ${base} --token ${board.token}`);
    const root = path.join(tmp, 'root-token');
    const line = `${board.install_command.replace('| sudo sh -s --', '| sh -s --')} --root ${root} --runner '/usr/local/bin/run-model --fast'`;
    const r = await sh(line);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`unpacked mm-agent_${VERSION}_${ARCH}.deb`);
    expect((await fs.stat(path.join(root, 'opt/mm-agent/lib/mm-agent.mjs'))).isFile()).toBe(true);
    expect((await fs.stat(path.join(root, 'opt/mm-agent/bin/mm-agent-start'))).mode & 0o111).toBeTruthy();
    const envFile = path.join(root, 'etc/mm-agent/mm-agent.env');
    expect((await fs.stat(envFile)).mode & 0o777).toBe(0o600);
    const env = envValues(await fs.readFile(envFile, 'utf8'));
    expect(env).toMatchObject({ MM_SERVER_URL: base, MM_RUNNER: '/usr/local/bin/run-model --fast', MM_BOARD_TOKEN_FILE: '/var/lib/mm-agent/token', MM_PROVISIONING_KEY: '' });
    const tokenFile = path.join(root, 'var/lib/mm-agent/token');
    expect((await fs.stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await fs.readFile(tokenFile, 'utf8')).trim()).toBe(board.token);

    // A provisioning key's line sets the key instead (the agent enrolls at its first start).
    const key = await json(await admin('/api/provisioning-keys/', { body: { name: 'install line' } }));
    expect(key.install_command).toContain(`--provisioning-key ${key.key}`);
    const keyRoot = path.join(tmp, 'root-key');
    const r2 = await sh(`${key.install_command.replace('| sudo sh -s --', '| sh -s --')} --root ${keyRoot}`);
    expect(r2.status, `${r2.stdout}${r2.stderr}`).toBe(0);
    expect(envValues(await fs.readFile(path.join(keyRoot, 'etc/mm-agent/mm-agent.env'), 'utf8')).MM_PROVISIONING_KEY).toBe(key.key);
    await expect(fs.access(path.join(keyRoot, 'var/lib/mm-agent/token'))).rejects.toThrow();
  }, 300_000);

  it('install-agent.sh refuses an unknown architecture and a missing server URL', () => {
    const script = path.join(import.meta.dirname, '../../deploy/agent/install-agent.sh');
    const noUrl = spawnSync('sh', [script, '--root', path.join(tmp, 'x')], { encoding: 'utf8' });
    expect(noUrl.status).not.toBe(0);
    expect(noUrl.stderr).toContain('--server-url is required');
    const badArch = spawnSync('sh', [script, '--server-url', 'http://127.0.0.1:9', '--arch', 'riscv64', '--root', path.join(tmp, 'x')], { encoding: 'utf8' });
    expect(badArch.status).not.toBe(0);
    expect(badArch.stderr).toContain('no agent package for the architecture riscv64');
  });
});
