import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './bundles.ts';

/**
 * The deployment files checked by the tools that read them, where those tools are installed
 * (`apt-get install shellcheck nginx-light caddy docker-compose` gives all of them). There is
 * no Docker engine here: the image itself is not built by the suite.
 */

const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const deploy = path.join(repoRoot, 'deploy');
let work: string;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-configs-'));
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('deployment files', () => {
  it.skipIf(!has('shellcheck'))('shell scripts pass shellcheck', () => {
    const scripts = ['agent/install.sh', 'agent/uninstall.sh', 'gpio-motor/install.sh', 'gpio-motor/uninstall.sh', 'gpio-motor/gpio-lines.sh', 'lib/install-common.sh'];
    const r = spawnSync('shellcheck', ['-x', ...scripts], { cwd: deploy, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
    const wrapper = spawnSync('shellcheck', ['-s', 'sh', 'agent/xlnx-config-sudo'], { cwd: deploy, encoding: 'utf8' });
    expect(wrapper.stdout).toBe('');
  });

  it.skipIf(!has('nginx') || !has('openssl'))('nginx.conf passes nginx -t', () => {
    const certs = path.join(work, 'certs');
    fs.mkdirSync(certs);
    const cert = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=mm.example.org',
      '-keyout', path.join(certs, 'privkey.pem'), '-out', path.join(certs, 'fullchain.pem')]);
    expect(cert.status).toBe(0);
    const site = fs.readFileSync(path.join(deploy, 'server/nginx.conf'), 'utf8').replaceAll('/etc/letsencrypt/live/mm.example.org', certs);
    fs.writeFileSync(path.join(work, 'site.conf'), site);
    fs.writeFileSync(
      path.join(work, 'nginx.conf'),
      `events {}\npid ${work}/nginx.pid;\nerror_log ${work}/error.log;\nhttp { access_log off; include ${work}/site.conf; }\n`,
    );
    const r = spawnSync('nginx', ['-t', '-c', path.join(work, 'nginx.conf')], { encoding: 'utf8' });
    expect(r.stderr).toContain('test is successful');
    expect(r.status).toBe(0);
  });

  it.skipIf(!has('caddy'))('the Caddyfile is valid', () => {
    const r = spawnSync('caddy', ['validate', '--config', path.join(deploy, 'server/Caddyfile'), '--adapter', 'caddyfile'], {
      encoding: 'utf8',
      env: { ...process.env, MM_DOMAIN: 'mm.example.org', HOME: work, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work },
    });
    expect(r.stdout + r.stderr).toContain('Valid configuration');
    expect(r.status).toBe(0);
  });

  it.skipIf(!has('docker-compose'))('docker-compose.yml is a valid compose file', () => {
    // As shipped: v1 (Debian 12's 1.29) must take the same file as Compose v2 (no top-level `name:`).
    const dir = path.join(work, 'compose');
    fs.mkdirSync(dir);
    const compose = fs.readFileSync(path.join(deploy, 'server/docker-compose.yml'), 'utf8');
    fs.writeFileSync(path.join(dir, 'docker-compose.yml'), compose.replace('context: ../..', `context: ${repoRoot}`));
    fs.copyFileSync(path.join(deploy, 'server/server.env.example'), path.join(dir, 'server.env'));
    fs.copyFileSync(path.join(deploy, 'server/Caddyfile'), path.join(dir, 'Caddyfile'));
    // As shipped (.env from env.example, secrets empty) compose refuses to start.
    fs.copyFileSync(path.join(deploy, 'server/env.example'), path.join(dir, '.env'));
    const refused = spawnSync('docker-compose', ['--profile', 'tls', 'config'], { cwd: dir, encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/POSTGRES_PASSWORD|MM_API_TOKEN|MM_DOMAIN/);
    fs.writeFileSync(path.join(dir, '.env'), 'COMPOSE_PROJECT_NAME=model-manager\nPOSTGRES_PASSWORD=0123abcd\nMM_API_TOKEN=feedbeef\nMM_DOMAIN=mm.example.org\n');
    const r = spawnSync('docker-compose', ['--profile', 'tls', 'config'], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/invalid|error/i);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/image: postgres:16/);
    expect(r.stdout).toMatch(/condition: service_healthy/);
    // The project name comes from .env (COMPOSE_PROJECT_NAME), as env.example sets it.
    expect(fs.readFileSync(path.join(deploy, 'server/env.example'), 'utf8')).toMatch(/^COMPOSE_PROJECT_NAME=model-manager$/m);
    expect(compose).not.toMatch(/^name:/m);
  });

  it('the server runs with the same node flags in the image, under `pnpm start` and in docs/deployment.md, and node accepts them', () => {
    const dockerfile = fs.readFileSync(path.join(deploy, 'server/Dockerfile'), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    expect(cmd, 'an exec-form CMD').not.toBeNull();
    const argv = JSON.parse(cmd![1]!) as string[];
    const flags = argv.filter((a) => a.startsWith('--'));
    expect(flags).toEqual(['--min-semi-space-size=16', '--initial-old-space-size=128']);
    expect(argv).toEqual(['node', ...flags, 'dist/mm-server.mjs']);
    const dev = fs.readFileSync(path.join(repoRoot, 'scripts/dev.mjs'), 'utf8');
    expect(dev).toContain(`const SERVER_NODE_FLAGS = [${flags.map((f) => `'${f}'`).join(', ')}];`);
    expect(dev).toContain("start('control plane', serverBin, [], { ...process.env, MM_DATA_DIR: dataDir }, SERVER_NODE_FLAGS);");
    const deployment = fs.readFileSync(path.join(repoRoot, 'docs/deployment.md'), 'utf8');
    expect(deployment).toContain(`node ${flags.join(' ')} /opt/mm-server/dist/mm-server.mjs`);
    const r = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the agent runs with the same node flags from its unit and under `pnpm start`', () => {
    const unit = fs.readFileSync(path.join(deploy, 'agent/mm-agent.service'), 'utf8');
    const exec = /^ExecStart=@NODE@ (.*) \/opt\/mm-agent\/mm-agent\.mjs$/m.exec(unit);
    expect(exec, 'ExecStart with node flags').not.toBeNull();
    const flags = exec![1]!.split(' ');
    expect(flags).toEqual(['--initial-old-space-size=128']);
    const dev = fs.readFileSync(path.join(repoRoot, 'scripts/dev.mjs'), 'utf8');
    expect(dev).toContain(`const AGENT_NODE_FLAGS = [${flags.map((f) => `'${f}'`).join(', ')}];`);
    expect(dev).toContain("['--simulate'], agentEnv, AGENT_NODE_FLAGS,");
  });

  it('docker-compose.yml needs its secrets and gives server.env to the server only', () => {
    const compose = fs.readFileSync(path.join(deploy, 'server/docker-compose.yml'), 'utf8');
    // Each service's block: from its `  name:` line to the next one at that indent.
    const services = new Map<string, string>();
    const body = compose.slice(compose.indexOf('\nservices:\n'), compose.indexOf('\nvolumes:\n'));
    for (const m of body.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n|\s*\n)*)/gm)) services.set(m[1]!, m[2]!);
    expect([...services.keys()].sort()).toEqual(['caddy', 'postgres', 'server']);
    expect(services.get('server')).toMatch(/env_file: server\.env/);
    for (const other of ['postgres', 'caddy']) expect(services.get(other), other).not.toMatch(/env_file/);
    // Interpolated secrets must be set (compose stops with the message otherwise).
    for (const name of ['POSTGRES_PASSWORD', 'MM_API_TOKEN', 'MM_DOMAIN']) {
      const uses = [...compose.matchAll(new RegExp(`\\$\\{${name}[^}]*\\}`, 'g'))].map((m) => m[0]);
      expect(uses.length, name).toBeGreaterThan(0);
      for (const u of uses) expect(u, name).toMatch(new RegExp(`^\\$\\{${name}:\\?.+\\}$`));
    }
    for (const file of ['docker-compose.yml', 'server.env.example', 'env.example']) {
      expect(fs.readFileSync(path.join(deploy, 'server', file), 'utf8'), file).not.toMatch(/change-me/);
    }
    const env = fs.readFileSync(path.join(deploy, 'server/env.example'), 'utf8');
    for (const name of ['POSTGRES_PASSWORD', 'MM_API_TOKEN', 'MM_DOMAIN']) expect(env).toMatch(new RegExp(`^${name}=$`, 'm'));
  });
});
