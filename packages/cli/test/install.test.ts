/**
 * Issue 32, item 1: `mm` runs from any folder. `npm pack` of the client gives a package that
 * `npm install -g` installs with nothing else (the bundle, no workspace links), and
 * `pnpm install` leaves dist/mm.mjs built (the file the control plane serves).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../test/support/processes.ts';

const cliDir = path.join(repoRoot, 'packages/cli');

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 180_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

describe('installing mm', () => {
  let work: string;
  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-cli-install-'));
  });
  afterAll(() => {
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('npm pack, then npm install -g into a prefix: `mm` runs from another folder with no dependencies installed', () => {
    const pack = run('npm', ['pack', '--json', '--pack-destination', work], cliDir);
    expect(pack.status, pack.out).toBe(0);
    const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    expect(packed!.files.map((f) => f.path).sort()).toEqual(['bin/mm.mjs', 'dist/mm.mjs', 'package.json']);

    const prefix = path.join(work, 'prefix');
    const install = run('npm', ['install', '-g', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, path.join(work, packed!.filename)], work);
    expect(install.status, install.out).toBe(0);
    const installed = path.join(prefix, 'lib/node_modules/@mm/cli');
    expect(fs.existsSync(path.join(installed, 'node_modules'))).toBe(false);

    const elsewhere = fs.mkdtempSync(path.join(work, 'elsewhere-'));
    const help = run(path.join(prefix, 'bin/mm'), ['--help'], elsewhere, { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` });
    expect(help.status, help.out).toBe(0);
    expect(help.stdout).toMatch(/^Usage: mm /);
    // A command that talks to a server: the whole client is in the bundle (exit 3: nothing listens there).
    const ls = run(path.join(prefix, 'bin/mm'), ['boards', 'ls', '--server', 'http://127.0.0.1:9'], elsewhere);
    expect(ls.status, ls.out).toBe(3);
    expect(ls.out).toMatch(/Cannot reach the server at http:\/\/127\.0\.0\.1:9/);
  }, 300_000);

  it("the workspace's install step (prepare) leaves dist/mm.mjs built and current; it runs on plain node", () => {
    const r = run(process.execPath, [path.join(cliDir, 'scripts/build-if-needed.mjs')], cliDir);
    expect(r.status, r.out).toBe(0);
    const bundle = path.join(cliDir, 'dist/mm.mjs');
    expect(fs.statSync(bundle).mtimeMs).toBeGreaterThanOrEqual(fs.statSync(path.join(cliDir, 'src/program.ts')).mtimeMs);
    const copy = path.join(work, 'mm.mjs');
    fs.copyFileSync(bundle, copy);
    const version = run(process.execPath, [copy, '--version'], work);
    expect(version.status, version.out).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 120_000);
});
