import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@mm/protocol';
import { createLogger } from '../src/logger.ts';
import { ChildSupervisor } from '../src/scripts/child-supervisor.ts';
import { OutputRing } from '../src/scripts/output-ring.ts';
import { scriptFolder } from '../src/scripts/scripts-root.ts';
import { launchArgv } from '../src/scripts/script-launch.ts';

const log = createLogger('silent');
const dirs: string[] = [];
const tempDir = async () => {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-scripts-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('ChildSupervisor (the simulated board)', () => {
  const supervisors: ChildSupervisor[] = [];
  afterEach(async () => {
    for (const s of supervisors.splice(0)) await s.close();
  });

  it('restarts a script that keeps exiting after a backoff that doubles on the clock (capped), counting restarts', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'crash.mjs');
    await fs.writeFile(file, "console.log('up on', process.env.PORT); process.exit(2);\n");
    const clock = new ManualClock();
    const sup = new ChildSupervisor(log, { baseBackoffMs: 200, maxBackoffMs: 500, clock });
    supervisors.push(sup);
    await sup.start({ scriptId: 's1', name: 'crash', port: 40001, file });
    // Each exit (a real process) is waited for; the backoff after it runs on the clock only.
    const exitedWith = (restarts: number) => expect.poll(() => sup.status('s1'), { timeout: 15_000 }).toMatchObject({ state: 'failed', restarts });
    await exitedWith(0);
    for (const [restarts, backoffMs] of [[1, 200], [2, 400], [3, 500], [4, 500]] as const) {
      clock.advance(backoffMs - 1);
      expect((await sup.status('s1')).restarts).toBe(restarts - 1);
      clock.advance(1);
      await exitedWith(restarts);
    }
    expect(await sup.logs('s1')).toContain('up on 40001');
    await sup.stop('s1');
    expect(await sup.status('s1')).toMatchObject({ state: 'stopped', restarts: 4 });
    // Stopped during a backoff: no restart is left waiting.
    expect(clock.pending).toBe(0);
  });

  it('sets PORT, keeps a running script up and stops its whole process group', async () => {
    const dir = await tempDir();
    const port = await freePort();
    const file = path.join(dir, 'serve.mjs');
    await fs.writeFile(file, "import net from 'node:net'; net.createServer((s) => s.end('hi')).listen(Number(process.env.PORT), '127.0.0.1');\n");
    const sup = new ChildSupervisor(log);
    supervisors.push(sup);
    await sup.start({ scriptId: 's2', name: 'serve', port, file });
    await expect.poll(() => new Promise((r) => net.connect(port, '127.0.0.1').once('connect', () => r(true)).once('error', () => r(false))), { timeout: 5000 }).toBe(true);
    expect(await sup.alive('s2')).toBe(true);
    await sup.stop('s2');
    expect(await new Promise((r) => net.connect(port, '127.0.0.1').once('connect', () => r(true)).once('error', () => r(false)))).toBe(false);
  });
});

describe('scriptFolder (MM_SCRIPTS_ROOT)', () => {
  it('maps remote_dir under the root to the disk folder and refuses the rest', async () => {
    const disk = await tempDir();
    const scripts = { root: '/opt/model-manager/device-scripts', disk };
    expect(await scriptFolder(scripts, '/opt/model-manager/device-scripts/a/b')).toBe(path.join(await fs.realpath(disk), 'a/b'));
    await expect(scriptFolder(scripts, '/opt/model-manager/device-scripts-evil')).rejects.toMatchObject({ code: 'script_dir_refused' });
    await expect(scriptFolder(scripts, '/opt/model-manager/device-scripts/../x')).rejects.toMatchObject({ code: 'script_dir_refused' });
    await expect(scriptFolder(scripts, '/etc')).rejects.toMatchObject({ code: 'script_dir_refused' });
    const outside = await tempDir();
    await fs.symlink(outside, path.join(disk, 'link'));
    await expect(scriptFolder(scripts, '/opt/model-manager/device-scripts/link/deeper')).rejects.toMatchObject({ code: 'script_dir_refused' });
    expect(await fs.readdir(outside)).toEqual([]);
  });
});

describe('launchArgv and OutputRing', () => {
  it('runs .mjs/.js with this Node, .py with python3, anything else itself', () => {
    expect(launchArgv('/x/a.mjs')).toEqual([process.execPath, '/x/a.mjs']);
    expect(launchArgv('/x/a.py')).toEqual(['python3', '/x/a.py']);
    expect(launchArgv('/x/a')).toEqual(['/x/a']);
  });

  it('keeps only the last bytes', () => {
    const ring = new OutputRing(10);
    ring.push('0123456789');
    ring.push('abc');
    expect(ring.text()).toBe('3456789abc');
  });
});

describe('SystemdSupervisor (a real board), against a stand-in systemctl', () => {
  it('writes the instance settings, drives systemctl, reads state and restarts relative to its start', async () => {
    const { SystemdSupervisor } = await import('../src/scripts/systemd-supervisor.ts');
    const dir = await tempDir();
    const stateDir = path.join(dir, 'state');
    await fs.mkdir(stateDir);
    // The stand-in: `restart|stop <unit>` record the call and set the state; `show <unit>` prints it.
    const fake = path.join(dir, 'systemctl');
    await fs.writeFile(
      fake,
      `#!/bin/sh
echo "$*" >> "${dir}/calls"
case "$1" in
  restart) echo active > "${stateDir}/$2"; echo 3 > "${stateDir}/$2.n" ;;
  stop) echo inactive > "${stateDir}/$2" ;;
  show) echo "ActiveState=$(cat "${stateDir}/$2" 2>/dev/null || echo inactive)"; echo "NRestarts=$(cat "${stateDir}/$2.n" 2>/dev/null || echo 0)"; echo "StateChangeTimestamp=Fri 2026-11-27 04:00:00 UTC" ;;
esac
`,
      { mode: 0o755 },
    );
    const envDir = path.join(dir, 'units');
    const sup = new SystemdSupervisor(log, { systemctl: [fake], journalctl: ['echo', 'journal'], envDir });
    try {
      const file = path.join(dir, 'app.py');
      await fs.writeFile(file, 'print(1)\n');
      await sup.start({ scriptId: 'abc', name: 'App "one"', port: 9100, file });
      const settings = await fs.readFile(path.join(envDir, 'abc.env'), 'utf8');
      expect(settings).toContain(`MM_SCRIPT_PATH=${file}`);
      expect(settings).toContain('MM_SCRIPT_INTERPRETER=python3');
      expect(settings).toContain('PORT=9100');
      expect(await sup.status('abc')).toEqual({ state: 'running', since: '2026-11-27T04:00:00.000Z', restarts: 0 });
      expect(await sup.alive('abc')).toBe(true);
      // systemd restarted it twice more since the start.
      await fs.writeFile(path.join(stateDir, 'mm-device-script@abc.service.n'), '5');
      expect((await sup.status('abc')).restarts).toBe(2);
      expect(await sup.alive('abc')).toBe(false);
      expect(await sup.logs('abc')).toContain('-u mm-device-script@abc.service');
      await sup.stop('abc');
      expect((await sup.status('abc')).state).toBe('stopped');
      expect(await fs.readFile(path.join(dir, 'calls'), 'utf8')).toMatch(/^restart mm-device-script@abc\.service$/m);
    } finally {
      await sup.close();
    }
  });
});
