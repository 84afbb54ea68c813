import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../packages/agent/src/config.ts';
import { buildBundle, repoRoot } from './bundles.ts';

/**
 * deploy/agent/install.sh and deploy/gpio-motor/install.sh against a scratch root (--root):
 * everything but useradd/chown/systemctl runs for real, with the real bundles.
 */

const agentInstall = path.join(repoRoot, 'deploy/agent/install.sh');
const agentUninstall = path.join(repoRoot, 'deploy/agent/uninstall.sh');
const motorInstall = path.join(repoRoot, 'deploy/gpio-motor/install.sh');
const motorUninstall = path.join(repoRoot, 'deploy/gpio-motor/uninstall.sh');

let work: string;
let agentDist: string;
let motorDist: string;

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync('bash', [script, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
const mode = (p: string) => fs.statSync(p).mode & 0o7777;
const sha = (p: string) => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

/** KEY=value lines as systemd's EnvironmentFile= reads them (comments and blanks skipped). */
function readEnvFile(p: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(p, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    env[line.slice(0, i)] = line.slice(i + 1);
  }
  return env;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-install-'));
  agentDist = path.join(work, 'agent-dist');
  motorDist = path.join(work, 'motor-dist');
  buildBundle('agent', agentDist);
  buildBundle('gpio-motor', motorDist);
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('deploy/agent/install.sh', () => {
  let root: string;
  beforeAll(() => {
    root = path.join(work, 'agent-root');
  });
  const r = (p: string) => path.join(root, p);

  it('lays down the bundle, unit, settings, sudo rights and folders', () => {
    const res = run(agentInstall, [
      '--root', root, '--bundle', agentDist,
      '--server-url', 'https://mm.example.test', '--token', 'tok-123',
      '--runner', '/usr/local/bin/run-model --fast', '--xlnx-config', '/usr/bin/xlnx-config',
    ]);
    expect(res.out).toContain('skipped: systemctl enable');
    expect(res.status).toBe(0);

    // The bundle, as built, runnable from where it was installed.
    for (const name of fs.readdirSync(agentDist).filter((n) => fs.statSync(path.join(agentDist, n)).isFile())) {
      expect(sha(r(`opt/mm-agent/${name}`)), name).toBe(sha(path.join(agentDist, name)));
    }
    expect(mode(r('opt/mm-agent/mm-agent.mjs'))).toBe(0o755);
    const version = spawnSync(process.execPath, [r('opt/mm-agent/mm-agent.mjs'), '--version'], { encoding: 'utf8', cwd: root });
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/\d+\.\d+\.\d+/);

    // The unit.
    const unit = fs.readFileSync(r('etc/systemd/system/mm-agent.service'), 'utf8');
    expect(mode(r('etc/systemd/system/mm-agent.service'))).toBe(0o644);
    expect(unit).toMatch(/^User=mm-agent$/m);
    expect(unit).toMatch(/^Restart=always$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/mm-agent\/mm-agent\.env$/m);
    expect(unit).toMatch(/^LimitNOFILE=\d+$/m);
    expect(unit).not.toMatch(/^NoNewPrivileges=yes/m); // it would disable sudo
    expect(unit).not.toContain('@NODE@');
    const exec = /^ExecStart=(\S+)((?: --[\w-]+=\S+)*) \/opt\/mm-agent\/mm-agent\.mjs$/m.exec(unit);
    expect(exec).not.toBeNull();
    fs.accessSync(exec![1]!, fs.constants.X_OK);
    // The node flags (see the unit) are ones this node accepts.
    const accepted = spawnSync(exec![1]!, [...exec![2]!.split(' ').filter(Boolean), '-e', '0'], { encoding: 'utf8' });
    expect(accepted.stderr).toBe('');
    expect(accepted.status).toBe(0);
    if (has('systemd-analyze')) {
      const v = spawnSync('systemd-analyze', ['verify', r('etc/systemd/system/mm-agent.service')], { encoding: 'utf8' });
      expect(v.stderr).not.toMatch(/Unknown (key|section)|Failed to parse|Invalid/);
    }

    // Settings: private, and what the agent's own config loader makes of them.
    const envPath = r('etc/mm-agent/mm-agent.env');
    expect(mode(envPath)).toBe(0o600);
    const env = readEnvFile(envPath);
    expect(env).toMatchObject({
      MM_SERVER_URL: 'https://mm.example.test',
      MM_BOARD_TOKEN: 'tok-123',
      MM_AGENT_DIR: '/var/lib/mm-agent',
      MM_PAC_DIR: '/usr/local/share/xlnx-config',
      MM_XLNX_CONFIG: '/opt/mm-agent/bin/xlnx-config',
    });
    // The agent takes MM_XLNX_CONFIG as one executable and MM_REBOOT as a command line
    // (whichever form its config gives them, the words must be these).
    const words = (v: string | string[] | undefined) => (Array.isArray(v) ? v : (v ?? '').split(/\s+/));
    const config = loadAgentConfig(env, { simulate: false });
    expect(config.connectUrl).toBe('wss://mm.example.test/api/agent/connect/');
    expect(config.runner).toEqual(['/usr/local/bin/run-model', '--fast']);
    expect(words(config.xlnxConfig)).toEqual(['/opt/mm-agent/bin/xlnx-config']);
    const reboot = words(config.reboot);
    expect(reboot).toEqual(['sudo', '-n', expect.stringMatching(/^\/.*systemctl$/), 'reboot']);
    expect(config.agentDir).toBe('/var/lib/mm-agent');
    expect(config.pacDir).toBe('/usr/local/share/xlnx-config');
    const wrapper = r('opt/mm-agent/bin/xlnx-config');
    expect(mode(wrapper)).toBe(0o755);
    expect(fs.readFileSync(wrapper, 'utf8')).toMatch(/^exec sudo -n \/usr\/bin\/xlnx-config "\$@"$/m);
    expect(spawnSync('sh', ['-n', wrapper]).status).toBe(0);

    // sudo rights for exactly those commands, valid syntax.
    const sudoersPath = r('etc/sudoers.d/mm-agent');
    expect(mode(sudoersPath)).toBe(0o440);
    const sudoers = fs.readFileSync(sudoersPath, 'utf8');
    expect(sudoers).toContain('/usr/bin/xlnx-config -q, /usr/bin/xlnx-config -a *');
    expect(sudoers).toContain(`${reboot[2]} reboot`);
    expect(sudoers).toMatch(/^mm-agent ALL=\(root\) NOPASSWD: MM_AGENT_PAC, MM_AGENT_REBOOT, MM_AGENT_SCRIPTS$/m);
    expect(sudoers).toContain(`${reboot[2]} restart mm-device-script@*.service`);
    expect(fs.readFileSync(r('etc/systemd/system/mm-device-script@.service'), 'utf8')).toContain('EnvironmentFile=/var/lib/mm-agent/device-script-units/%i.env');
    expect(fs.statSync(r('opt/model-manager/device-scripts')).isDirectory()).toBe(true);
    if (has('visudo')) expect(spawnSync('visudo', ['-cf', sudoersPath]).status).toBe(0);

    // The admin's drop-in: a template that grants nothing until edited.
    const localPath = r('etc/sudoers.d/mm-agent-local');
    expect(mode(localPath)).toBe(0o440);
    const local = fs.readFileSync(localPath, 'utf8');
    expect(local).toContain('visudo -f /etc/sudoers.d/mm-agent-local');
    expect(local.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))).toEqual([]);
    if (has('visudo')) {
      expect(spawnSync('visudo', ['-cf', localPath]).status).toBe(0);
      // Its example, uncommented, is valid sudoers too.
      const example = path.join(work, 'sudoers-local-example');
      fs.writeFileSync(example, local.replace(/^# (Defaults|mm-agent)/gm, '$1'));
      expect(fs.readFileSync(example, 'utf8')).toMatch(/^mm-agent ALL=\(root\) NOPASSWD: /m);
      expect(spawnSync('visudo', ['-cf', example]).status).toBe(0);
    }

    // Folders.
    expect(mode(r('var/lib/mm-agent'))).toBe(0o750);
    expect(fs.statSync(r('usr/local/share/xlnx-config')).isDirectory()).toBe(true);
    expect(fs.readdirSync(r('opt')).sort()).toEqual(['mm-agent', 'model-manager']); // no staging left behind (model-manager: the device scripts' folder)
  });

  it('is idempotent: a re-run replaces the bundle and keeps an edited env file and local sudo rights', () => {
    const envPath = r('etc/mm-agent/mm-agent.env');
    fs.appendFileSync(envPath, '# edited by the admin\nLOG_LEVEL=debug\n');
    const edited = fs.readFileSync(envPath);
    const localPath = r('etc/sudoers.d/mm-agent-local');
    fs.chmodSync(localPath, 0o640);
    fs.appendFileSync(localPath, 'mm-agent ALL=(root) NOPASSWD: /opt/model-runner/run.sh\n');
    fs.chmodSync(localPath, 0o440);
    const localEdited = fs.readFileSync(localPath);
    const managedBefore = fs.readFileSync(r('etc/sudoers.d/mm-agent'), 'utf8');
    fs.writeFileSync(r('etc/sudoers.d/mm-agent'), '# overwritten by hand\n');
    fs.writeFileSync(r('opt/mm-agent/left-over.mjs'), '// from an older version');
    fs.writeFileSync(r('var/lib/mm-agent/journal.json'), '{}');

    const res = run(agentInstall, ['--root', root, '--bundle', agentDist, '--token', 'another', '--xlnx-config', '/usr/bin/xlnx-config']);
    expect(res.status).toBe(0);
    expect(res.out).toContain('kept the existing /etc/mm-agent/mm-agent.env');
    expect(fs.readFileSync(envPath).equals(edited)).toBe(true);
    // The managed drop-in is rewritten; the local one is left exactly as the admin made it.
    expect(fs.readFileSync(r('etc/sudoers.d/mm-agent'), 'utf8')).toBe(managedBefore);
    expect(res.out).toContain('kept the existing /etc/sudoers.d/mm-agent-local');
    expect(fs.readFileSync(localPath).equals(localEdited)).toBe(true);
    expect(mode(localPath)).toBe(0o440);
    expect(mode(envPath)).toBe(0o600);
    expect(fs.existsSync(r('opt/mm-agent/left-over.mjs'))).toBe(false);
    expect(sha(r('opt/mm-agent/mm-agent.mjs'))).toBe(sha(path.join(agentDist, 'mm-agent.mjs')));
    expect(fs.readFileSync(r('var/lib/mm-agent/journal.json'), 'utf8')).toBe('{}');
    expect(fs.readdirSync(r('opt')).sort()).toEqual(['mm-agent', 'model-manager']);
  });

  it('refuses an xlnx-config path that sudoers could read as syntax, and a missing bundle', () => {
    const before = fs.readFileSync(r('etc/sudoers.d/mm-agent'), 'utf8');
    const bad = run(agentInstall, ['--root', root, '--bundle', agentDist, '--xlnx-config', '/usr/bin/x, ALL']);
    expect(bad.status).not.toBe(0);
    expect(bad.out).toContain('plain absolute path');
    expect(fs.readFileSync(r('etc/sudoers.d/mm-agent'), 'utf8')).toBe(before);

    const none = run(agentInstall, ['--root', root, '--bundle', path.join(work, 'no-such-dist')]);
    expect(none.status).not.toBe(0);
    expect(none.out).toContain('no bundle at');
  });

  it('does not start an agent that has no token yet', () => {
    const fresh = path.join(work, 'agent-root-no-token');
    const res = run(agentInstall, ['--root', fresh, '--bundle', agentDist], { MM_BOARD_TOKEN: '' });
    expect(res.status).toBe(0);
    expect(res.out).toContain('not started: set MM_BOARD_TOKEN');
    expect(readEnvFile(path.join(fresh, 'etc/mm-agent/mm-agent.env')).MM_BOARD_TOKEN).toBe('');
  });

  it('uninstalls what it installed, keeping settings and data unless --purge', () => {
    fs.mkdirSync(r('usr/local/share/xlnx-config/my-pac'));
    const res = run(agentUninstall, [], { DESTDIR: root });
    expect(res.status).toBe(0);
    expect(fs.existsSync(r('etc/systemd/system/mm-agent.service'))).toBe(false);
    expect(fs.existsSync(r('etc/sudoers.d/mm-agent'))).toBe(false);
    expect(fs.existsSync(r('opt/mm-agent'))).toBe(false);
    expect(fs.existsSync(r('etc/mm-agent/mm-agent.env'))).toBe(true);
    expect(fs.existsSync(r('etc/sudoers.d/mm-agent-local'))).toBe(true);
    expect(fs.existsSync(r('var/lib/mm-agent/journal.json'))).toBe(true);

    const purge = run(agentUninstall, ['--root', root, '--purge']);
    expect(purge.status).toBe(0);
    expect(fs.existsSync(r('etc/mm-agent'))).toBe(false);
    expect(fs.existsSync(r('etc/sudoers.d/mm-agent-local'))).toBe(false);
    expect(fs.existsSync(r('var/lib/mm-agent'))).toBe(false);
    expect(fs.existsSync(r('usr/local/share/xlnx-config/my-pac'))).toBe(true); // PACs are never removed
  });
});

describe('deploy/gpio-motor/install.sh', () => {
  let root: string;
  beforeAll(() => {
    root = path.join(work, 'motor-root');
  });
  const r = (p: string) => path.join(root, p);
  const dir = 'opt/model-manager/device-scripts/gpio-motor';

  it('installs the script where the catalogue entry says, with its unit and settings', async () => {
    const res = run(motorInstall, ['--root', root, '--bundle', motorDist]);
    expect(res.status).toBe(0);
    // The catalogue entry the control plane seeds names this folder and file.
    const { GPIO_MOTOR_SCRIPT } = await import('../../packages/gpio-motor/src/script-entry.ts');
    expect(`/${dir}`).toBe(GPIO_MOTOR_SCRIPT.remote_dir);
    const script = r(`${dir}/${GPIO_MOTOR_SCRIPT.script_filename}`);
    expect(sha(script)).toBe(sha(path.join(motorDist, 'mm-gpio-motor.mjs')));
    expect(spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8' }).stdout).toContain('--gpio-root');
    expect(mode(r(`${dir}/gpio-lines.sh`))).toBe(0o755);

    const unit = fs.readFileSync(r('etc/systemd/system/mm-gpio-motor.service'), 'utf8');
    expect(unit).toMatch(/^User=mm-gpio$/m);
    expect(unit).toMatch(/^Restart=always$/m);
    expect(unit).toMatch(/^ExecStartPre=\+\/opt\/model-manager\/device-scripts\/gpio-motor\/gpio-lines\.sh mm-gpio$/m);
    expect(unit).toMatch(/^NoNewPrivileges=yes$/m);
    if (has('systemd-analyze')) {
      const v = spawnSync('systemd-analyze', ['verify', r('etc/systemd/system/mm-gpio-motor.service')], { encoding: 'utf8' });
      expect(v.stderr).not.toMatch(/Unknown (key|section)|Failed to parse|Invalid/);
    }
    const env = readEnvFile(r('etc/mm-gpio-motor/mm-gpio-motor.env'));
    expect(env.MM_GPIO_PORT).toBe(String(GPIO_MOTOR_SCRIPT.port));
    expect(env.MM_GPIO_HOST).toBe('127.0.0.1');
    expect(env.MM_GPIO_LINES!.split(' ').map(Number)).toEqual(Array.from({ length: 16 }, (_, i) => 516 + i));
  });

  it('hands exported lines to the group and fails on a line that cannot be exported', () => {
    const sysfs = path.join(work, 'fake-sysfs');
    fs.mkdirSync(sysfs);
    fs.writeFileSync(path.join(sysfs, 'export'), '');
    for (const n of [516, 517]) {
      fs.mkdirSync(path.join(sysfs, `gpio${n}`));
      for (const a of ['direction', 'value']) fs.writeFileSync(path.join(sysfs, `gpio${n}`, a), '0\n', { mode: 0o600 });
    }
    const group = spawnSync('id', ['-gn'], { encoding: 'utf8' }).stdout.trim();
    const lines = r(`${dir}/gpio-lines.sh`);
    const ok = run(lines, [group], { MM_GPIO_ROOT: sysfs, MM_GPIO_LINES: '516 517' });
    expect(ok.out).toBe('');
    expect(ok.status).toBe(0);
    expect(mode(path.join(sysfs, 'gpio516/value')) & 0o060).toBe(0o060);
    expect(mode(path.join(sysfs, 'gpio517/direction')) & 0o060).toBe(0o060);

    // A plain folder never grows gpio518/ when 518 is written to its export file.
    const bad = run(lines, [group], { MM_GPIO_ROOT: sysfs, MM_GPIO_LINES: '516 518' });
    expect(bad.status).not.toBe(0);
    expect(bad.out).toContain('cannot export GPIO 518');
    expect(fs.readFileSync(path.join(sysfs, 'export'), 'utf8')).toBe('518\n');
  });

  it('uninstalls, keeping its settings unless --purge', () => {
    expect(run(motorUninstall, ['--root', root]).status).toBe(0);
    expect(fs.existsSync(r(dir))).toBe(false);
    expect(fs.existsSync(r('etc/systemd/system/mm-gpio-motor.service'))).toBe(false);
    expect(fs.existsSync(r('etc/mm-gpio-motor/mm-gpio-motor.env'))).toBe(true);
    expect(run(motorUninstall, ['--root', root, '--purge']).status).toBe(0);
    expect(fs.existsSync(r('etc/mm-gpio-motor'))).toBe(false);
  });
});
