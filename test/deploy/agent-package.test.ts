import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgentPackages } from './bundles.ts';

/**
 * The self-contained agent packages (docs/packages.md): built by the one command, read back
 * with Debian's dpkg-deb, checked by lintian (no errors), and the amd64 one's own Node runs
 * its bundle through the start script. Skipped without dpkg-deb; lintian's part without lintian.
 */

const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const VERSION = '0.1.0+pkgtest';
/** ELF e_machine: x86-64 and AArch64. */
const MACHINE: Record<string, number> = { amd64: 0x3e, arm64: 0xb7 };

let out: string;
let work: string;
const deb = (arch: string) => path.join(out, `mm-agent_${VERSION}_${arch}.deb`);

function run(cmd: string, args: string[], opts: { env?: Record<string, string>; timeout?: number } = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...opts.env }, timeout: opts.timeout ?? 300_000, maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout ?? '', out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

describe.skipIf(!has('dpkg-deb'))('the agent packages (dpkg-deb)', () => {
  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-agent-package-'));
    out = path.join(work, 'out');
    buildAgentPackages(out, ['--version', VERSION]);
  }, 900_000);
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it.each(['amd64', 'arm64'])('%s: its control fields, conffile, unit, start script and a Node runtime of its architecture', (arch) => {
    const info = run('dpkg-deb', ['--info', deb(arch)]);
    expect(info.status, info.out).toBe(0);
    expect(info.stdout).toMatch(/^ Package: mm-agent$/m);
    expect(info.stdout).toContain(`Version: ${VERSION}`);
    expect(info.stdout).toContain(`Architecture: ${arch}`);
    for (const script of ['postinst', 'prerm', 'postrm', 'conffiles']) expect(info.stdout).toContain(script);
    expect(run('dpkg-deb', ['--info', deb(arch), 'conffiles']).stdout.trim()).toBe('/etc/mm-agent/mm-agent.env');

    const root = path.join(work, `x-${arch}`);
    expect(run('dpkg-deb', ['-x', deb(arch), root]).status).toBe(0);
    const node = fs.readFileSync(path.join(root, 'opt/mm-agent/node/bin/node'));
    expect(node.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(node.readUInt16LE(18)).toBe(MACHINE[arch]);
    expect(fs.statSync(path.join(root, 'opt/mm-agent/lib/mm-agent.mjs')).isFile()).toBe(true);
    // mm-runner, the default runner (docs/runner.md), beside the bundle; what it needs is recommended.
    expect(fs.statSync(path.join(root, 'opt/mm-agent/lib/mm-runner/bin/mm-runner')).mode & 0o111).toBeTruthy();
    expect(fs.statSync(path.join(root, 'opt/mm-agent/lib/mm-runner/mm_runner/pipeline.py')).isFile()).toBe(true);
    expect(fs.existsSync(path.join(root, 'opt/mm-agent/lib/mm-runner/mm_runner/__pycache__'))).toBe(false);
    expect(info.stdout).toMatch(/^ Recommends: .*python3-numpy.*ffmpeg/m);
    expect(fs.statSync(path.join(root, 'opt/mm-agent/bin/mm-agent-start')).mode & 0o111).toBeTruthy();
    expect(fs.statSync(path.join(root, 'etc/mm-agent/mm-agent.env')).mode & 0o777).toBe(0o600);
    const env = fs.readFileSync(path.join(root, 'etc/mm-agent/mm-agent.env'), 'utf8');
    expect(env).toMatch(/^MM_BOARD_TOKEN_FILE=\/var\/lib\/mm-agent\/token$/m);
    expect(env).toMatch(/^MM_PROVISIONING_KEY=$/m);
    expect(env).not.toMatch(/@[A-Z_]+@/);
    const unit = fs.readFileSync(path.join(root, 'usr/lib/systemd/system/mm-agent.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/opt\/mm-agent\/bin\/mm-agent-start$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/mm-agent\/mm-agent.env$/m);
    // Device scripts' template unit (docs/device-scripts.md).
    expect(fs.readFileSync(path.join(root, 'usr/lib/systemd/system/mm-device-script@.service'), 'utf8')).toMatch(/^EnvironmentFile=\/var\/lib\/mm-agent\/device-script-units\/%i\.env$/m);
  });

  it.skipIf(process.arch !== 'x64')('amd64: the start script runs the bundle with the packaged Node', () => {
    const root = path.join(work, 'x-amd64');
    const r = run(path.join(root, 'opt/mm-agent/bin/mm-agent-start'), ['--version'], { env: { MM_AGENT_DIR: path.join(work, 'agent-dir'), PATH: '/usr/bin:/bin' } });
    expect(r.status, r.out).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it.skipIf(!has('lintian'))('lintian finds no errors in either package', () => {
    for (const arch of ['amd64', 'arm64']) {
      const r = run('lintian', ['--tag-display-limit', '0', deb(arch)], { timeout: 600_000 });
      const errors = r.out.split('\n').filter((l) => l.startsWith('E: '));
      expect(errors, `${arch}:\n${r.out}`).toEqual([]);
    }
  }, 1_200_000);
});
