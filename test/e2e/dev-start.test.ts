/**
 * `pnpm start` (scripts/dev.mjs) on a terminal, as a person meets it (issue 32, items 16-19):
 * after `mm-server create-user` (auth on) it starts without MM_API_TOKEN, its banner's
 * commands work as printed, polls do not scroll the banner away, the log is readable, the
 * GPIO motor script's port taken by another process is said and the catalogue follows, and
 * ids go on consecutively after Ctrl-C and a new start.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliHome, type CliHome } from '../support/cli.ts';
import { eventually, repoRoot } from '../support/processes.ts';
import { hasTmux, tmuxRun, type TmuxScreen } from '../support/tmux.ts';
import { freePort } from './device-scripts-support.ts';

const GPIO_PORT = 8765;
const BANNER = 'Model Manager is running at';

/** Holds the GPIO motor script's port as "another process" would (false: someone else already does). */
async function holdPort(port: number): Promise<net.Server | undefined> {
  const s = net.createServer();
  return new Promise((resolve) => {
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

describe.skipIf(!hasTmux)('pnpm start on a terminal', () => {
  let dataDir: string;
  let cli: CliHome;
  let port: number;
  let url: string;
  let password: string;
  let blocker: net.Server | undefined;
  const terms: TmuxScreen[] = [];

  const devStart = () => {
    const term = tmuxRun([process.execPath, path.join(repoRoot, 'scripts/dev.mjs')], {
      env: { MM_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
      unset: ['DATABASE_URL', 'MM_API_TOKEN', 'LOG_LEVEL', 'MM_LOG_FORMAT'],
      cwd: repoRoot,
      cols: 160,
      rows: 45,
    });
    terms.push(term);
    return term;
  };
  const stopDev = async (term: TmuxScreen) => {
    term.sendKeys('C-c');
    const end = await term.waitFor((s) => /\[exit \d+\]/.test(s), 90_000);
    term.close();
    return end;
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mm-dev-start-'));
    [cli, port, blocker] = await Promise.all([cliHome(), freePort(), holdPort(GPIO_PORT)]);
    url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, MM_DATA_DIR: dataDir };
    delete env.DATABASE_URL;
    delete env.MM_API_TOKEN;
    const made = spawnSync(process.execPath, [path.join(repoRoot, 'packages/server/bin/mm-server.mjs'), 'create-user', 'alice', '--role', 'admin'], { env, encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    password = /Password \(shown this once\): (\S+)/.exec(made.stdout)![1]!;
  }, 180_000);

  afterAll(async () => {
    for (const t of terms) t.close();
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
    await cli?.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('starts with auth on and no MM_API_TOKEN; the banner stays on screen and its commands work as printed; ids go on after a restart', async () => {
    const term = devStart();
    const first = await term.waitFor((s) => s.includes(BANNER) || /\[exit \d+\]/.test(s), 240_000);
    if (process.env.MM_TEST_SCREENS) await fs.writeFile(`${process.env.MM_TEST_SCREENS}.dev-start.txt`, first);
    expect(first).not.toMatch(/\b401\b|unauthorized/i);
    expect(first).toContain(BANNER);
    // The fast form of mm (its built file with node, not `npx pnpm exec mm`, ~10 s a command),
    // and --server: PORT is not mm's default 8000 (issue 39, item 10).
    const mm = 'node packages/cli/dist/mm.mjs';
    const signIn = `${mm} login --server ${url} --username alice`;
    expect(first).toContain(`Sign in:  ${signIn}`);
    expect(first).toContain(`Then try: ${mm} --server ${url} run --name demo`);
    expect(first).not.toContain('pnpm exec mm ');
    // The motor script's port was held: said loudly, with the port it uses instead.
    const moved = /!! Port 8765, the GPIO motor script's, is taken by another process: the simulated motor script\n\s+!! listens on (\d+) instead/.exec(first);
    expect(moved, first).not.toBeNull();

    // Polls (what the dashboard does every few seconds) do not scroll the banner away.
    for (let i = 0; i < 60; i++) await fetch(`${url}/api/health/`);
    const afterPolls = term.visible();
    if (process.env.MM_TEST_SCREENS) await fs.writeFile(`${process.env.MM_TEST_SCREENS}.dev-start-polls.txt`, afterPolls);
    expect(afterPolls).toContain(BANNER);
    expect(afterPolls).not.toMatch(/^\{"level"/m); // readable lines on a terminal, not JSON
    expect(afterPolls).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}/m);

    // The banner's commands, as printed (mm is its built file in the repository; here its bundle).
    const [, ...loginArgs] = signIn.replace(`${mm} `, 'mm ').split(' ');
    const login = await cli.run(loginArgs, { MM_PASSWORD: password });
    expect(login.code, login.stderr).toBe(0);
    await eventually(async () => {
      const ls = JSON.parse((await cli.run(['boards', 'ls', '--json'])).stdout) as { boards: Array<{ status: string }> };
      expect(ls.boards.map((b) => b.status)).toEqual(['online']);
    }, 120_000);
    const demo = await cli.run(['run', '--name', 'demo', '--json']);
    expect(demo.code, demo.stderr).toBe(0);
    const firstId = JSON.parse(demo.stdout).invocation_id as number;
    // The catalogue names the port the motor script really listens on.
    const motor = await cli.run(['motor', 'stop', '--json']);
    expect(motor.code, motor.stderr).toBe(0);
    const scripts = JSON.parse((await cli.run(['scripts', 'ls', '--json'])).stdout) as { scripts: Array<{ device_type: string; port: number }> };
    expect(scripts.scripts.find((s) => s.device_type === 'gpio')!.port).toBe(Number(moved![1]));

    // Ctrl-C on the terminal, a new start: the next invocation's id is the next number.
    await stopDev(term);
    const again = devStart();
    const second = await again.waitFor((s) => s.includes(BANNER) || /\[exit \d+\]/.test(s), 240_000);
    expect(second).toMatch(/simulated-board \([0-9a-f-]+\), registered before/);
    await eventually(async () => {
      const ls = JSON.parse((await cli.run(['boards', 'ls', '--json'])).stdout) as { boards: Array<{ status: string }> };
      expect(ls.boards.map((b) => b.status)).toEqual(['online']);
    }, 120_000);
    const next = await cli.run(['run', '--name', 'demo-again', '--detach', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(JSON.parse(next.stdout).invocation_id).toBe(firstId + 1);
    await stopDev(again);
  }, 900_000);
});
