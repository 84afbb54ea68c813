import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json } from '../../../test/support/http.ts';
import { createSimulatedSysfs, MOTOR_LINES } from '../src/index.ts';

const bin = fileURLToPath(new URL('../bin/mm-gpio-motor.mjs', import.meta.url));

/** Starts the CLI and resolves with its URL once it logs that it listens. */
function startCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { child, url, exited, output: () => stdout, errors: () => stderr };
}

describe('mm-gpio-motor CLI', () => {
  let root: string;
  let running: ChildProcess | undefined;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-gpio-cli-'));
  });
  afterEach(async () => {
    if (running && running.exitCode === null) running.kill('SIGKILL');
    running = undefined;
    await fs.rm(root, { recursive: true, force: true });
  });

  it('serves on simulated GPIO, logs commands and stops the motors on SIGTERM', async () => {
    const cli = startCli(['--port', '0', '--simulate', '--gpio-root', root]);
    running = cli.child;
    const url = await cli.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const sysfs = await createSimulatedSysfs(root);

    expect((await fetch(`${url}/motor/forward`, { method: 'POST' })).status).toBe(200);
    expect(await sysfs.value(516)).toBe(1);
    expect(await sysfs.value(522)).toBe(1);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    for (const line of MOTOR_LINES) expect(await sysfs.value(line)).toBe(0);
    expect(cli.output()).toContain('motor forward');
    expect(cli.output()).toContain('SIGTERM');
  });

  it('stops a drive command that is not renewed after its dead-man hold (default 1000 ms, or the setting)', async () => {
    const cli = startCli(['--port', '0', '--simulate', '--gpio-root', root], { MM_GPIO_DRIVE_TIMEOUT_MS: '200' });
    running = cli.child;
    const url = await cli.url;
    const sysfs = await createSimulatedSysfs(root);
    expect((await json(await fetch(`${url}/motor/forward`, { method: 'POST' }))).hold_ms).toBe(200);
    const deadline = Date.now() + 10_000;
    // Polled through /state (set once the writes are done): a line file read mid-write is empty.
    while ((await json(await fetch(`${url}/state`))).motion !== 'stop' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const line of MOTOR_LINES) expect(await sysfs.value(line)).toBe(0);
    expect(cli.output()).toMatch(/motor stop: the forward command was not renewed within 200 ms/);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);

    const byDefault = startCli(['--port', '0', '--simulate', '--gpio-root', root]);
    running = byDefault.child;
    const url2 = await byDefault.url;
    expect((await json(await fetch(`${url2}/motor/left`, { method: 'POST' }))).hold_ms).toBe(1000);
    byDefault.child.kill('SIGTERM');
    expect(await byDefault.exited).toBe(0);
  });

  it('takes its settings from the environment too', async () => {
    const cli = startCli([], { MM_GPIO_PORT: '0', MM_GPIO_SIMULATE: '1', MM_GPIO_ROOT: root });
    running = cli.child;
    const url = await cli.url;
    expect((await json(await fetch(`${url}/state`))).motion).toBe('stop');
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it.each([
    [['--port', 'eighty'], /port/],
    [['--port', '70000'], /port/],
    [['--speed', '3'], /speed/],
    [['--drive-timeout-ms', '10'], /drive-timeout-ms/],
    [['--drive-timeout-ms', 'soon'], /drive-timeout-ms/],
  ])('refuses %j with exit status 2', (args, message) => {
    const r = spawnSync(process.execPath, [bin, ...args, '--simulate', '--gpio-root', root], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
